"""Who plays whom, in which seat, with which cards: a pure function of the league seed.

A schedule is a list of *tables* (a set of bots) and, for each, one match per
seat rotation.  Two separate problems, kept separate here:

* **Meetings.**  Round robin takes every combination of ``table_size`` bots, so
  every pair shares exactly ``C(n-2, k-2)`` tables.  That count explodes (50
  bots at tables of 4 is 230,300 tables), so past ``round_robin_limit`` tables a
  *balanced* schedule is built instead: few tables in which every pair of bots
  meets ``meetings`` or ``meetings + 1`` times.  Such near-designs have no
  closed form for arbitrary ``n`` and ``k``, so they are built as cyclic shifts
  of a few base blocks found by a small seeded search (``balanced_tables``
  says why that turns ``n^2/2`` pair counts into ``n/2`` numbers to balance);
  the result is checked, never assumed.
* **Seats and cards.**  Each table is played once per cyclic rotation of its
  bots over the seats, so every bot sits in every seat exactly as often as it
  plays a table.  With ``duplicate`` the rotations share one deal seed: the deal
  of hand *h* depends only on (seed, *h*) and the first dealer only on the seed
  (``engine.deal``), so every bot is dealt every seat's cards in turn and the
  luck of the deal cancels out.  Without it each rotation draws its own seed.

A third, smaller one is the **order**.  The schedule lists its matches in the
order they are played (``ScheduledMatch.index``; ratings and the report's
ratings chart follow it): a cycle's rotation 0 of every table, then its
rotation 1, ... (``referee.tables.local_pool`` says why a worker wants that), the
tables of each pass interleaved by ``play_order`` so that a league stopped at
any point has given every bot about its share of its matches.  Tables are
numbered as they are built (every combination in lexicographic order, for a
round robin), and match ids and deal seeds follow the number, not the order,
so a league stored before the order changed resumes with the same matches.

Seeds are derived with SHA-256 from the league seed and the match's place in
the schedule, never from ``random`` or ``hash()``, so a schedule is the same on
every machine, every Python, and after every resume.  They are the matches'
public *identities*: the cards come from them through the league's secret key
(``referee.match.dealkey``), so knowing the league seed, and so every identity, tells
nothing about the cards unless the league opted in to public deals.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import secrets
from collections.abc import Sequence

from referee.match.key import SEED_BITS, derive_seed, rotations

ROUND_ROBIN = "round_robin"
BALANCED = "balanced"
GAUNTLET = "gauntlet"
AUTO = "auto"
SCHEDULE_KINDS = (AUTO, ROUND_ROBIN, BALANCED, GAUNTLET)

MIN_TABLE = 3


class ScheduleError(ValueError):
    """The parameters admit no schedule (the message says which one and why)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ScheduledMatch:
    """One match of the schedule: ``bots[i]`` (an index into the league's bots) sits at seat i."""

    index: int  # position in the schedule, the order of play; ratings follow it
    match_id: str
    cycle: int
    table: int  # the table's number within its cycle, as built (not its place in the order)
    rotation: int
    seed: int  # the match's public identity; its cards come from it and the deal key
    bots: tuple[int, ...]


def draw_league_seed() -> int:
    """A league seed for a league file that gives none (kept in its database for resumes)."""
    return secrets.randbelow(1 << SEED_BITS)


def choose_kind(kind: str, bots: int, table_size: int, round_robin_limit: int) -> str:
    """Resolve ``auto``: round robin while its number of tables is at most the limit."""
    if kind != AUTO:
        return kind
    return ROUND_ROBIN if math.comb(bots, table_size) <= round_robin_limit else BALANCED


def round_robin_tables(bots: int, table_size: int) -> list[tuple[int, ...]]:
    """Every combination of ``table_size`` bots, in lexicographic order."""
    return list(itertools.combinations(range(bots), table_size))


def pair_counts(tables: Sequence[Sequence[int]], bots: int) -> list[list[int]]:
    """``counts[a][b]``: how many tables bots a and b share (symmetric, zero diagonal)."""
    counts = [[0] * bots for _ in range(bots)]
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            counts[a][b] += 1
            counts[b][a] += 1
    return counts


def build_schedule(
    bots: int,
    table_size: int,
    seed: int,
    *,
    kind: str = AUTO,
    duplicate: bool = True,
    cycles: int = 1,
    meetings: int = 1,
    round_robin_limit: int = 500,
    candidates: int = 0,
) -> list[ScheduledMatch]:
    """The whole round-robin league: every table once per seat rotation, ``cycles`` times.

    ``kind="gauntlet"`` plays the first ``candidates`` bots against the rest
    (the field) instead; see ``gauntlet``.

    Each cycle seats every table's bots in a seeded order (rotation 0), so who
    sits to whose left differs between tables and cycles; the rotations then
    give every bot every seat.  A balanced schedule is built once and played
    every cycle; a repeated balanced schedule would let pair counts drift
    apart by one per cycle, so it is refused (raise ``meetings`` instead).
    """
    if kind == GAUNTLET:
        return gauntlet(
            bots,
            table_size,
            seed,
            candidates=candidates,
            duplicate=duplicate,
            cycles=cycles,
            meetings=meetings,
            round_robin_limit=round_robin_limit,
        )
    kind = choose_kind(kind, bots, table_size, round_robin_limit)
    if kind == ROUND_ROBIN:
        tables = round_robin_tables(bots, table_size)
    elif kind == BALANCED:
        if cycles != 1:
            raise ScheduleError(
                f"cycles: {cycles} would repeat a balanced schedule and unbalance its pairs; "
                "raise meetings instead"
            )
        tables = balanced_tables(bots, table_size, meetings, seed)
    else:
        raise ScheduleError(f"kind: {kind!r} is not one of {', '.join(SCHEDULE_KINDS)}")
    schedule: list[ScheduledMatch] = []
    order = play_order(tables, bots, seed)
    for cycle in range(1, cycles + 1):
        shuffler = random.Random(derive_seed(seed, "seating", cycle))
        built: list[_Table] = []
        for number, table in enumerate(tables):
            seating = list(table)
            shuffler.shuffle(seating)
            shared = derive_seed(seed, "deal", cycle, number)
            seeds = [
                shared if duplicate else derive_seed(seed, "deal", cycle, number, rotation)
                for rotation in range(len(seating))
            ]
            built.append(_Table(number, tuple(seating), tuple(seeds)))
        _append_cycle(schedule, cycle, [built[number] for number in order])
    return schedule


@dataclasses.dataclass(frozen=True, slots=True)
class _Table:
    """A table as built: its number (its match ids and seeds), seating and deal seeds."""

    number: int
    seating: tuple[int, ...]
    deal_seeds: tuple[int, ...]  # rotation r is dealt deal_seeds[r]


def _append_cycle(schedule: list[ScheduledMatch], cycle: int, tables: Sequence[_Table]) -> None:
    """One match per seat rotation of every table: ``tables`` in order, one rotation a pass."""
    passes = max((len(table.seating) for table in tables), default=0)
    for rotation in range(passes):
        for table in tables:
            if rotation >= len(table.seating):
                continue
            schedule.append(
                ScheduledMatch(
                    index=len(schedule),
                    match_id=f"c{cycle}-t{table.number + 1:05d}-r{rotation}",
                    cycle=cycle,
                    table=table.number,
                    rotation=rotation,
                    seed=table.deal_seeds[rotation],
                    bots=rotations(table.seating)[rotation],
                )
            )


def play_order(tables: Sequence[Sequence[int]], bots: int, seed: int) -> list[int]:
    """The tables' numbers in the order to play them: every bot kept near its share.

    Tables in the order they are built (every combination in lexicographic
    order) put bot 0 at all of its tables first: a league of 9 bots stopped
    after 108 of its 504 matches had played 108 of bot 0's and 38 to 42 of
    each other's, and its ratings chart drew bot 0 flat for the second half.
    Here each next table is the one after which its most advanced bot has
    played the smallest share of its own tables (then the smallest sum of
    shares, then the lowest number).  Shares, not counts, so bots that play
    different numbers of tables (a gauntlet's candidates and field, a
    1-rotational balanced schedule) each keep to their own pace.

    Greedy, so at some points of some sizes of a round robin a bot is two
    tables ahead of another rather than one, and with a balanced schedule's
    fewer tables up to ``table_size - 1``; never more in the sizes
    ``tests/league/test_schedule.py`` tries.  The choice is among ``ORDER_POOL`` tables at a
    time, drawn in a seeded order, not among all: the same balance in the
    sizes tried, at a cost linear in the tables (4368 tables in about 2 s)
    where a choice among all took 30 s.
    """
    totals = [0] * bots
    for table in tables:
        for bot in table:
            totals[bot] += 1
    played = [0] * bots
    waiting = list(range(len(tables)))
    random.Random(derive_seed(seed, "order", bots, len(tables))).shuffle(waiting)
    pool: list[int] = []
    order: list[int] = []
    while waiting or pool:
        while waiting and len(pool) < ORDER_POOL:
            pool.append(waiting.pop())
        best: tuple[float, float, int] | None = None
        at = 0
        for place, number in enumerate(pool):
            # Exact ratios of small integers as floats: every IEEE machine rounds them alike.
            shares = [(played[bot] + 1) / totals[bot] for bot in tables[number]]
            key = (max(shares), sum(shares), number)
            if best is None or key < best:
                best, at = key, place
        number = pool[at]
        pool[at] = pool[-1]
        pool.pop()
        order.append(number)
        for bot in tables[number]:
            played[bot] += 1
    return order


# The tables ``play_order`` chooses among at each step (all of them, up to this many).
ORDER_POOL = 256


def gauntlet(
    bots: int,
    table_size: int,
    seed: int,
    *,
    candidates: int,
    duplicate: bool = True,
    cycles: int = 1,
    meetings: int = 1,
    round_robin_limit: int = 500,
) -> list[ScheduledMatch]:
    """Candidates against a fixed field, as cutechess's and fastchess's gauntlet.

    Bots ``0 .. candidates-1`` are the candidates, the others the field.
    Every candidate sits at every *field table* (``table_size - 1`` field
    bots: every combination while there are at most ``round_robin_limit``,
    else ``meetings`` passes of cyclic windows over the field, which give
    each field bot the same share), in every seat rotation.  Candidates never
    meet each other.  A field table's deal seed is shared by every candidate
    (and, with ``duplicate``, by every rotation), so all candidates are dealt
    the same cards against the same opponents: their results compare
    directly, as in duplicate bridge.
    """
    field = list(range(candidates, bots))
    size = table_size - 1
    if candidates < 1:
        raise ScheduleError(
            f"candidates: a gauntlet needs at least one candidate, got {candidates}"
        )
    if len(field) < size:
        raise ScheduleError(
            f"candidates: {candidates} of {bots} bots leave a field of {len(field)}, "
            f"too few for tables of {table_size} (a candidate and {size} field bots)"
        )
    if math.comb(len(field), size) <= round_robin_limit:
        field_tables = list(itertools.combinations(field, size))
    else:
        field_tables = [
            tuple(field[(start + step * offset) % len(field)] for offset in range(size))
            for step in range(1, meetings + 1)
            for start in range(len(field))
        ]
    schedule: list[ScheduledMatch] = []
    order: list[int] | None = None
    for cycle in range(1, cycles + 1):
        shuffler = random.Random(derive_seed(seed, "seating", cycle))
        built: list[_Table] = []
        for field_number, field_table in enumerate(field_tables):
            shared = derive_seed(seed, "deal", cycle, field_number)
            arrangement = list(field_table)
            shuffler.shuffle(arrangement)
            for candidate in range(candidates):
                seeds = [
                    shared
                    if duplicate
                    else derive_seed(seed, "deal", cycle, field_number, candidate, rotation)
                    for rotation in range(table_size)
                ]
                built.append(_Table(len(built), (candidate, *arrangement), tuple(seeds)))
        if order is None:
            order = play_order([table.seating for table in built], bots, seed)
        _append_cycle(schedule, cycle, [built[number] for number in order])
    return schedule


def balanced_tables(bots: int, table_size: int, meetings: int, seed: int) -> list[tuple[int, ...]]:
    """A balanced schedule: every pair of bots meets ``meetings`` or ``meetings + 1`` times.

    The tables are the cyclic shifts of a few *base blocks*.  Over ``Z_n`` the
    shift by ``t`` of block ``B`` is ``{b + t mod n}``; every bot then plays
    ``k`` tables per block, and how often bots ``a`` and ``b`` meet depends only
    on their *difference class* ``min(a-b, b-a) mod n``: it is the number of
    pairs at that difference in the base blocks (twice that for the class
    ``n/2``, whose pairs each shift meets twice).  So balancing about ``n/2``
    class counts balances all ``n(n-1)/2`` pair counts exactly, and a small
    seeded local search over the base blocks does it in milliseconds.

    Some sizes force every such schedule to be an exact design that may not
    exist (43 bots at tables of 7 would need a projective plane of order 6).
    The *1-rotational* form covers them: bots ``Z_{n-1}`` plus a fixed bot
    ``inf``, which meets every other bot ``k-1`` times per block holding it.
    Bots then play within a few tables of each other instead of exactly
    equally often; pairs stay within one.  Candidates of both forms are tried
    shortest first; the round robin (perfectly balanced) is the last resort.

    Bot labels are shuffled by the seed, so bot 0 of the file is not special.
    """
    n, k = bots, table_size
    if not MIN_TABLE <= k <= n:
        raise ScheduleError(f"table_size: {k} must be at least {MIN_TABLE} and at most {n} (bots)")
    if meetings < 1:
        raise ScheduleError(f"meetings: must be at least 1, got {meetings}")
    rng = random.Random(derive_seed(seed, "balanced", n, k, meetings))
    tables = None if k == n else _cyclic_tables(n, k, meetings, rng)
    if tables is None:
        if math.comb(n, k) > ROUND_ROBIN_FALLBACK:
            raise ScheduleError(
                f"no balanced schedule found for {n} bots at tables of {k} "
                f"(meetings={meetings}); try another table_size or meetings"
            )
        tables = round_robin_tables(n, k)
    counts = pair_counts(tables, n)
    met = [counts[a][b] for a in range(n) for b in range(a + 1, n)]
    if max(met) - min(met) > 1 or min(met) < meetings:  # the class argument, checked
        raise ScheduleError(f"internal: unbalanced schedule for {n} bots at tables of {k}")
    labels = list(range(n))
    rng.shuffle(labels)
    return [tuple(sorted(labels[x] for x in table)) for table in tables]


# Local-search steps over all shapes before giving up (a few seconds at most).
SEARCH_BUDGET = 150_000

# The round robin is used as a balanced schedule's last resort only up to this many tables.
ROUND_ROBIN_FALLBACK = 20_000


@dataclasses.dataclass(frozen=True, slots=True)
class _Form:
    """A cyclic schedule's shape: ``plain`` blocks over Z_m, ``fixed`` blocks holding inf."""

    modulus: int
    plain: int
    fixed: int  # blocks holding the fixed bot (numbered ``modulus``); 0 for the plain form

    def tables(self) -> int:
        return (self.plain + self.fixed) * self.modulus


def _forms(n: int, k: int, meetings: int) -> list[tuple[_Form, float]]:
    """Feasible-looking shapes and their ideal class count, shortest schedule first.

    A shape is kept when its ideal (mean) class count reaches ``meetings`` and,
    with a fixed bot, when the fixed bot's count ``(k-1) * fixed`` is within
    one of it.  Shapes whose ideal is a whole number need an exact design and
    come after the others of the same length.
    """
    forms: list[tuple[int, bool, _Form, float]] = []
    limit = min(math.comb(n, k), 40 * max(n, math.ceil(meetings * n * (n - 1) / (k * (k - 1)))))
    for modulus, has_fixed in ((n, False), (n - 1, True)):
        if modulus < k:
            continue
        ones = (modulus - 1) // 2
        classes = ones + (0.5 if modulus % 2 == 0 else 0.0)
        for fixed in range(1, limit) if has_fixed else (0,):
            if fixed * modulus >= limit:
                break
            for plain in range(0, limit):
                form = _Form(modulus, plain, fixed)
                if form.tables() >= limit:
                    break
                slots = plain * k * (k - 1) // 2 + fixed * (k - 1) * (k - 2) // 2
                if slots == 0:
                    continue
                ideal = slots / classes
                if ideal < meetings:
                    continue
                if has_fixed and not math.floor(ideal) <= (k - 1) * fixed <= math.ceil(ideal):
                    continue
                exact = ideal == int(ideal)
                forms.append((form.tables(), exact, form, ideal))
    forms.sort(key=lambda item: (item[0], item[1], item[2].fixed))
    return [(form, ideal) for _tables, _exact, form, ideal in forms]


def _cyclic_tables(
    n: int, k: int, meetings: int, rng: random.Random
) -> list[tuple[int, ...]] | None:
    budget = SEARCH_BUDGET
    for form, ideal in _forms(n, k, meetings):
        # An exact design (whole-number ideal) may not exist at all: a short try only.
        steps = min(budget, 1500 if ideal == int(ideal) else 8000)
        if steps <= 0:
            break
        budget -= steps
        blocks = _search_blocks(form, k, meetings, ideal, rng, steps=steps)
        if blocks is None:
            continue
        m, fixed_bot = form.modulus, form.modulus
        tables = []
        for shift in range(m):
            for block in blocks:
                tables.append(tuple(x if x == fixed_bot else (x + shift) % m for x in block))
        return tables
    return None


def _search_blocks(
    form: _Form, k: int, meetings: int, ideal: float, rng: random.Random, *, steps: int = 8000
) -> list[list[int]] | None:
    """Base blocks of ``form`` whose class counts are within one and at least ``meetings``.

    The search moves one element of one block at a time, half the time aiming
    a difference at the rarest class, and keeps a move that does not raise the
    squared deviation of the class counts from their ideal (and, now and then,
    one that does, to leave local minima).  A fixed-bot block keeps the fixed
    bot in position 0.
    """
    m = form.modulus
    half = m // 2
    weight = [0] + [2 if 2 * d == m else 1 for d in range(1, half + 1)]
    class_of = [min(d % m, -d % m) for d in range(-m, m)]  # index: difference + m
    fixed_count = (k - 1) * form.fixed  # how often the fixed bot meets each other bot
    blocks = [rng.sample(range(m), k) for _ in range(form.plain)]
    blocks += [[m, *rng.sample(range(m), k - 1)] for _ in range(form.fixed)]
    mult = [0] * (half + 1)
    for block in blocks:
        for x, y in itertools.combinations(block, 2):
            if x != m and y != m:
                mult[class_of[y - x + m]] += 1

    def cost(d: int, multiplicity: int) -> float:
        c = weight[d] * multiplicity
        return (c - ideal) ** 2 + (1000.0 * (meetings - c) if c < meetings else 0.0)

    def balanced() -> bool:
        counts = [w * c for w, c in zip(weight[1:], mult[1:], strict=True)]
        if form.fixed:
            counts.append(fixed_count)
        return min(counts) >= meetings and max(counts) - min(counts) <= 1

    for step in range(steps):
        if step % 16 == 0 and balanced():
            return blocks
        block = blocks[rng.randrange(len(blocks))]
        first = 1 if block[0] == m else 0
        i = rng.randrange(first, k)
        if rng.random() < 0.5 and k - first > 1:
            rarest = min(range(1, half + 1), key=lambda d: (weight[d] * mult[d], rng.random()))
            anchor = block[rng.choice([j for j in range(first, k) if j != i])]
            value = (anchor + rng.choice((rarest, -rarest))) % m
        else:
            value = rng.randrange(m)
        if value in block:
            continue
        old = block[i]
        change: dict[int, int] = {}
        for j in range(first, k):
            if j != i:
                x = block[j]
                a, b = class_of[old - x + m], class_of[value - x + m]
                change[a] = change.get(a, 0) - 1
                change[b] = change.get(b, 0) + 1
        delta = sum(cost(d, mult[d] + dd) - cost(d, mult[d]) for d, dd in change.items() if dd)
        if delta <= 0 or rng.random() < 0.01:
            block[i] = value
            for d, dd in change.items():
                mult[d] += dd
    return blocks if balanced() else None
