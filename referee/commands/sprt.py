"""``newmarket sprt``: play a candidate against copies of a baseline until a test decides.

    newmarket sprt --candidate search --baseline tracker --elo0 0 --elo1 20 --move-time 0.5

The question a bot writer asks after every change: is the new version
better?  The command answers it the way chess engine testers do (cutechess,
fastchess): it plays matches until a sequential probability ratio test
accepts H1 (better by at least ``--elo1``) or H0 (no better than ``--elo0``),
printing the running estimate after every group of matches, with the hands
played and the bots' CPU seconds so far.  By default the matches are
fixed-hands duplicate matches (deep stacks: nobody is eliminated, so a
group's deals stay identical) and the score is the candidate's duplicate
chips per hand (``referee/scoring/``); ``--score places`` is the original
test on finishing places in elimination sessions.  The statistics are in
``referee/scoring/sequential.py``, kept apart from this loop so they can be tested alone.

A *group* is the matches of one layout (``--layout``,
``referee.scoring.duplicate.candidate_seats``).  By default, *alternate*:
copies of the candidate in the even seats and of the baseline in the odd
ones, then the other way round (two matches, duplicate bridge's team
match).  With ``--layout rotate`` (and always with ``--score places``): one
match per seat, the candidate in seat 0, then 1, ..., the baseline's copies
in the other seats.  Every bot of a table is its own process.  With
duplicate deals (the default) the group's matches share one deal seed, so
every seat's cards are played by both bots; ``--no-duplicate`` gives every
match its own seed, which is what the matches-needed comparison in
docs/search.md measures.  The bots are started once and play every match on
the same connections; ``--concurrency K`` runs K tables side by side, each
with its own processes (groups then finish, and are counted, in the order
they end).

Exit status: 0 when H1 is accepted (the candidate is better), 1 when H0 is
accepted, 2 when the match limit comes first; a bad argument is one line on
stderr and exit 2 before any bot starts, as with every command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, TextIO

import trio
import typer

from engine import DEFAULT_PRESET, MAX_PLAYERS, MIN_PLAYERS, NewmarketError, Rules
from referee.bots import BotSpec
from referee.commands.common import (
    DEFAULT_PLAYERS,
    DEFAULT_SANDBOX,
    DEFAULT_TIME,
    AsJson,
    Concurrency,
    LogDir,
    Margin,
    MaxFaults,
    MoveTime,
    Players,
    RuleOptions,
    RulesName,
    SandboxLevel,
    Seed,
    StartupTime,
    TimeBank,
    TransportName,
    UsageError,
    bot_of,
    fail,
    made_log_dir,
    parse_options,
    require_players_past_end,
    sandbox_of,
    time_control,
    transport_of,
)
from referee.commands.match import unique_names
from referee.match.dealkey import DealKey
from referee.match.referee import play_match
from referee.match.result import MatchResult
from referee.sandbox import Sandbox
from referee.scoring.duplicate import (
    ALTERNATE,
    LAYOUTS,
    ROTATE,
    GroupMatch,
    candidate_seats,
    fixed_hands,
    forfeit_nets,
    relative_score,
    seat_diffs,
)
from referee.scoring.luck import luck
from referee.scoring.sequential import (
    ELO_PER_CHIP,
    H0,
    H1,
    ChipsConfig,
    SprtConfig,
    SprtState,
    SprtSummary,
    group_seed,
    match_score,
)
from referee.settings.rules import RulesChoiceError, build_rules
from referee.transport.session import BotSession, open_bots
from referee.transport.timecontrol import TimeControl

FIXED_HANDS = "fixed-hands"
SESSION = "session"
FORMATS = (FIXED_HANDS, SESSION)
CHIPS = "chips"
PLACES = "places"
SCORES = (CHIPS, PLACES)
MAX_FIXED_HANDS_MATCHES = 8000  # 4-hand matches: the hands 2000 elimination sessions play
# A fixed-hands match is one round of deals (as many hands as players, each seat deals
# once) unless --hands says otherwise: the shorter the match, the less the rotations'
# carried boodle stacks drift apart, and 4-hand matches needed 1.3x to 4x fewer hands
# to a decision than 16-hand ones (docs/fidelity.md).

EXIT_H1 = 0
EXIT_H0 = 1
EXIT_UNDECIDED = 2


@dataclasses.dataclass(frozen=True)
class SprtSettings:
    """Everything one test needs, checked before any bot starts."""

    candidate: BotSpec
    baseline: BotSpec
    rules: Rules
    players: int
    config: SprtConfig | ChipsConfig
    control: TimeControl
    max_groups: int
    seed: int  # the groups' public identities (and match ids); the cards come from ``deals``
    duplicate: bool = True
    concurrency: int = 1
    log_dir: Path | None = None
    sandbox: Sandbox | None = None
    luck: bool = False  # subtract the reference policy's chips on the same seed (chips score)
    match_format: str = SESSION
    layout: str = ROTATE  # who sits where in a group (referee.scoring.duplicate.candidate_seats)
    # A fresh secret per run; public (the seed is the deal) only with --seed (match.dealkey).
    deals: DealKey = dataclasses.field(default_factory=DealKey.generate)

    @property
    def chips(self) -> bool:
        return isinstance(self.config, ChipsConfig)

    @property
    def seatings(self) -> list[list[int]]:
        """The candidate's seats in each match of a group."""
        return candidate_seats(self.layout, self.players)

    @property
    def copies(self) -> tuple[int, int]:
        """How many processes of the candidate and of the baseline a table needs."""
        held = [len(seats) for seats in self.seatings]
        return max(held), self.players - min(held)


@dataclasses.dataclass(frozen=True)
class GroupResult:
    """One group: per match, its seed, places, hands and nets; the candidate's scores.

    ``scores`` has one entry per seat a candidate held, in match order: the
    share of opponents it finished ahead of (places score), or its duplicate
    chips diff per hand against the baselines that held that seat in the
    group's other matches (chips score; see ``referee.scoring.duplicate``).
    The group's score is their mean.
    """

    group: int
    seeds: list[int]
    places: list[list[int]]
    scores: list[float]
    faults: int  # faults of any bot in the group's matches
    hands: list[int] = dataclasses.field(default_factory=list)  # hands played, per match
    nets: list[list[int]] = dataclasses.field(default_factory=list)  # net chips per seat
    cpu_ms: int = 0  # the CPU time every bot used in the group's matches

    @property
    def score(self) -> float:
        return sum(self.scores) / len(self.scores)

    def to_json(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "score": self.score}


def chips_scores(
    settings: SprtSettings, seeds: list[int], nets: Sequence[Sequence[float]], hands: list[int]
) -> list[float]:
    """The candidate's chips score in every seat it held, match by match."""
    n = settings.players
    matches: list[GroupMatch[str]] = []
    for mine, seed, net, played in zip(settings.seatings, seeds, nets, hands, strict=True):
        holders = ["candidate" if seat in mine else "baseline" for seat in range(n)]
        reference = luck(settings.rules, n, seed) if settings.luck else None
        matches.append(GroupMatch(holders, net, played, reference))
    if not settings.duplicate:
        pairs = zip(matches, settings.seatings, strict=True)
        return [relative_score(match, seat) for match, mine in pairs for seat in mine]
    diffs = seat_diffs(matches)
    return [diffs[r][seat] for r, mine in enumerate(settings.seatings) for seat in mine]


Lineup = tuple[Sequence[BotSession], Sequence[BotSession]]
"""The candidate's sessions and the baseline's, as one table seats them."""


def seating_of(settings: SprtSettings, lineup: Lineup, mine: Sequence[int]) -> list[BotSession]:
    """One match's seating: the lineup's candidates in the seats ``mine``, baselines elsewhere.

    With the rotate layout the candidate sits in ``mine[0]`` and the baselines
    follow it round the table in turn.
    """
    candidates, baselines = lineup
    n = settings.players
    if settings.layout == ROTATE:
        seat = mine[0]
        seating = [candidates[0]] * n
        for copy, session in enumerate(baselines):
            seating[(seat + 1 + copy) % n] = session
        return seating
    mine_left, others_left = iter(candidates), iter(baselines)
    return [next(mine_left) if s in mine else next(others_left) for s in range(n)]


async def play_rotation(
    settings: SprtSettings, seating: Sequence[BotSession], group: int, index: int
) -> tuple[int, MatchResult]:
    """Match ``index`` of ``group``: its deal seed and its result."""
    identity = group_seed(settings.seed, group, None if settings.duplicate else index)
    seed = settings.deals.deal_seed(identity)
    match_id = f"sprt-{settings.seed}-{group}-{index}"
    log_path = None if settings.log_dir is None else settings.log_dir / f"{match_id}.jsonl"
    result = await play_match(
        seating,
        settings.rules,
        seed,
        time_control=settings.control,
        match_id=match_id,
        log_path=log_path,
    )
    return seed, result


async def play_group(settings: SprtSettings, lineups: Sequence[Lineup], group: int) -> GroupResult:
    """One match per entry of ``settings.seatings``: candidates there, baselines elsewhere.

    Rotation ``i`` of the group is played by ``lineups[i % len(lineups)]``:
    with one lineup per rotation no bot process sees a duplicate deal twice
    (SPEC.md 3.1), as in a league.
    """
    seeds: list[int] = []
    places: list[list[int]] = []
    scores: list[float] = []
    hands: list[int] = []
    nets: list[list[int]] = []
    scored_nets: list[list[float]] = []  # a disqualified seat's at most its table's lowest
    faults = cpu = 0
    for index, mine in enumerate(settings.seatings):
        seating = seating_of(settings, lineups[index % len(lineups)], mine)
        seed, result = await play_rotation(settings, seating, group, index)
        seeds.append(seed)
        places.append(result.places)
        scores.extend(match_score(result.places, seat) for seat in mine)
        faults += sum(len(s.faults) for s in result.seats)
        hands.append(result.hands)
        nets.append([s.net_chips for s in result.seats])
        out = [s.status == "disqualified" for s in result.seats]
        scored_nets.append(forfeit_nets(nets[-1], out))
        cpu += sum(s.cpu_ms or 0 for s in result.seats)
    if settings.chips:
        scores = chips_scores(settings, seeds, scored_nets, hands)
    return GroupResult(group, seeds, places, scores, faults, hands, nets, cpu)


@dataclasses.dataclass
class Totals:
    """What the test has cost so far: matches, hands and bot CPU seconds."""

    matches: int = 0
    hands: int = 0
    cpu_ms: int = 0

    def add(self, group: GroupResult) -> None:
        self.matches += len(group.seeds)
        self.hands += sum(group.hands)
        self.cpu_ms += group.cpu_ms

    @property
    def cpu_seconds(self) -> float:
        return self.cpu_ms / 1000

    def line(self) -> str:
        return f"{self.matches:>5} matches · {self.hands:>6} hands · {self.cpu_seconds:>7.1f} cpu s"


async def run_sprt(
    settings: SprtSettings, report: Callable[[GroupResult, SprtSummary, Totals], None]
) -> tuple[SprtSummary, Totals]:
    """Play groups until the test decides or ``max_groups`` are done; ``report`` each group."""
    state = SprtState(settings.config)
    totals = Totals()
    groups = iter(range(settings.max_groups))
    mine, theirs = settings.copies
    specs = unique_names([settings.candidate] * mine + [settings.baseline] * theirs)

    # A process learns the deal it plays (every hand is shown at its end): on
    # duplicate deals each rotation has processes of its own, started once and
    # kept for that rotation of every group, so no process meets a deal twice.
    rotations = len(settings.seatings) if settings.duplicate else 1

    async def table(cancel: trio.CancelScope) -> None:
        async with contextlib.AsyncExitStack() as stack:
            lineups: list[Lineup] = []
            for _ in range(rotations):
                sessions = await stack.enter_async_context(
                    open_bots(specs, settings.control, sandbox=settings.sandbox)
                )
                lineups.append((sessions[:mine], sessions[mine:]))
            for group in groups:
                result = await play_group(settings, lineups, group)
                state.add(result.score)
                totals.add(result)
                report(result, state.summary(), totals)
                if state.decision is not None:
                    cancel.cancel()
                    return

    async with trio.open_nursery() as nursery:
        for _ in range(settings.concurrency):
            nursery.start_soon(table, nursery.cancel_scope)
    return state.summary(), totals


def exit_code(summary: SprtSummary) -> int:
    if summary.decision == H1:
        return EXIT_H1
    if summary.decision == H0:
        return EXIT_H0
    return EXIT_UNDECIDED


def build_settings(
    candidate: str,
    baseline: str,
    *,
    rules_name: str,
    options: list[str],
    hands: int | None,
    players: int,
    config: SprtConfig | ChipsConfig,
    control: TimeControl,
    max_matches: int,
    seed: int,
    duplicate: bool,
    deals: DealKey,
    concurrency: int,
    log_dir: Path | None,
    match_format: str = SESSION,
    luck: bool = False,
    layout: str = ROTATE,
    transport: str = "stdio",
) -> SprtSettings:
    """The test's settings from the command line's values; ``UsageError`` naming a bad flag."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise UsageError(f"--players: a table seats {MIN_PLAYERS} to {MAX_PLAYERS}, got {players}")
    kind = transport_of(transport)
    specs = [bot_of(candidate, "--candidate", kind), bot_of(baseline, "--baseline", kind)]
    rules = sprt_rules(rules_name, options, hands, players, match_format)
    check_scoring(config, luck, layout)
    group_size = len(candidate_seats(layout, players))
    if max_matches < group_size:
        raise UsageError(f"--max-matches: at least one group of {group_size} matches is needed")
    if concurrency < 1:
        raise UsageError(f"--concurrency: must be at least 1, got {concurrency}")
    made_log_dir(log_dir)
    return SprtSettings(
        candidate=specs[0],
        baseline=specs[1],
        rules=rules,
        players=players,
        config=config,
        control=control,
        max_groups=max_matches // group_size,
        seed=seed,
        deals=deals,
        duplicate=duplicate,
        concurrency=concurrency,
        log_dir=log_dir,
        luck=luck,
        match_format=match_format,
        layout=layout,
    )


def sprt_rules(
    rules_name: str, options: list[str], hands: int | None, players: int, match_format: str
) -> Rules:
    """The rules of every match: a session's, or fixed hands with deep stacks; ``UsageError``."""
    changes = parse_options(options)
    if hands is not None and hands < 1:
        raise UsageError(f"--hands: must be at least 1, got {hands}")
    if match_format not in FORMATS:
        raise UsageError(f"--format: {match_format!r} is not one of {', '.join(FORMATS)}")
    if match_format == FIXED_HANDS and ("hand_limit" in changes or "starting_chips" in changes):
        raise UsageError(
            "--option: fixed-hands matches set hand_limit (use --hands) and starting_chips "
            "(deep stacks) themselves; use --format session to set them"
        )
    try:
        rules = build_rules(rules_name, changes, hands if match_format == SESSION else None)
        if match_format == FIXED_HANDS:
            rules = fixed_hands(rules, hands if hands is not None else players)
    except RulesChoiceError as error:
        raise UsageError(
            f"{'--rules' if error.part == 'preset' else '--option'}: {error}"
        ) from None
    except NewmarketError as error:
        raise UsageError(f"--option: {error}") from None
    require_players_past_end(rules, players, f"--players: {players} players", "use more players")
    return rules


def check_scoring(config: SprtConfig | ChipsConfig, luck: bool, layout: str) -> None:
    """``--luck`` and ``--layout`` against the score they belong to; ``UsageError``."""
    if luck and not isinstance(config, ChipsConfig):
        raise UsageError("--luck: the luck correction is for the chips score (--score chips)")
    if layout not in LAYOUTS:
        raise UsageError(f"--layout: {layout!r} is not one of {', '.join(LAYOUTS)}")
    if layout != ROTATE and not isinstance(config, ChipsConfig):
        raise UsageError(
            "--layout: the places score seats one candidate in every seat (rotate); "
            "the other layouts are for --score chips"
        )


def header(settings: SprtSettings) -> str:
    c = settings.config
    deals = "duplicate deals" if settings.duplicate else "a fresh deal seed per match"
    if isinstance(c, ChipsConfig):
        hypotheses = f"chips/hand {c.chips0:g} vs {c.chips1:.3g} (Elo {c.elo0:g}/{c.elo1:.3g})"
        score = "duplicate chips score" + (" with luck correction" if settings.luck else "")
        if c.decisive:
            score += f" · decisive at GLR ({-c.decisive_lower:+.2f}, {c.decisive_upper:+.2f})"
    else:
        hypotheses = f"elo0 {c.elo0:g} elo1 {c.elo1:g}"
        score = "places score"
    fmt = (
        f"{settings.rules.hand_limit}-hand matches, deep stacks"
        if settings.match_format == FIXED_HANDS
        else "elimination sessions"
    )
    seating = (
        f"{settings.candidate.name} vs {settings.players - 1}x {settings.baseline.name}"
        if settings.layout == ROTATE
        else f"{settings.candidate.name} and {settings.baseline.name} in alternate seats, swapped"
    )
    dealt = f"seed {settings.seed}" if settings.deals.is_public else "secret deals"
    return (
        f"SPRT {seating} · "
        f"{hypotheses} alpha {c.alpha:g} beta {c.beta:g} · "
        f"LLR bounds ({c.lower:+.2f}, {c.upper:+.2f}) · {fmt} · {score} · {deals} · "
        f"{dealt} · at most {settings.max_groups * len(settings.seatings)} matches"
    )


# ---------------------------------------------------------------- the command's own flags

CandidateBot = Annotated[
    str, typer.Option(metavar="BOT", help="The bot under test: a bundled name or a command line.")
]
BaselineBot = Annotated[
    str, typer.Option(metavar="BOT", help="The bot to beat; its copies fill the other seats.")
]
Elo0 = Annotated[
    float, typer.Option(metavar="ELO", help="H0: the candidate is at most this much better.")
]
Elo1 = Annotated[
    float, typer.Option(metavar="ELO", help="H1: the candidate is at least this much better.")
]
Chips0 = Annotated[
    float | None,
    typer.Option(metavar="CHIPS", help="H0 in chips per hand (chips score; default: --elo0 / 75)."),
]
Chips1 = Annotated[
    float | None,
    typer.Option(metavar="CHIPS", help="H1 in chips per hand (chips score; default: --elo1 / 75)."),
]
Alpha = Annotated[
    float, typer.Option(metavar="P", help="The chance of accepting H1 when H0 holds.")
]
Beta = Annotated[float, typer.Option(metavar="P", help="The chance of accepting H0 when H1 holds.")]
Decisive = Annotated[
    bool,
    typer.Option(
        help="Chips score: also decide as soon as the evidence is far beyond the "
        "hypotheses (a likelihood ratio at the measured edge; docs/fidelity.md)."
    ),
]
Score = Annotated[
    str,
    typer.Option(
        metavar="chips|places",
        help="chips: duplicate chips per hand (default); places: share of opponents beaten.",
    ),
]
MatchFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="fixed-hands|session",
        help="fixed-hands (deep stacks, default with --score chips) or session "
        "(elimination, default with --score places).",
    ),
]
Luck = Annotated[
    bool,
    typer.Option(
        "--luck", help="Subtract the luck of each deal (a reference policy replayed in-process)."
    ),
]
Layout = Annotated[
    str | None,
    typer.Option(
        metavar="alternate|rotate",
        help="alternate: candidates in alternate seats, then swapped (2 matches a group; "
        "default with --score chips); rotate: one candidate in every seat in turn.",
    ),
]
Hands = Annotated[
    int | None,
    typer.Option(
        "--hand-limit",
        "--hands",
        metavar="N",
        help="Hands per match (fixed-hands; default: one per player) or the session's limit.",
    ),
]
MaxMatches = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Stop undecided (exit 2) after this many matches (default: 8000 fixed-hands "
        "matches, 2000 sessions: about 32,000 hands either way).",
    ),
]
Duplicate = Annotated[bool, typer.Option(help="Share one deal seed within each rotation group.")]
Results = Annotated[
    Path | None,
    typer.Option(metavar="FILE", help="Append each group's scores to this JSONL file."),
]


def sprt_command(
    candidate: CandidateBot,
    baseline: BaselineBot,
    elo0: Elo0 = 0.0,
    elo1: Elo1 = 20.0,
    chips0: Chips0 = None,
    chips1: Chips1 = None,
    alpha: Alpha = 0.05,
    beta: Beta = 0.05,
    decisive: Decisive = True,
    score: Score = CHIPS,
    match_format: MatchFormat = None,
    luck: Luck = False,
    layout: Layout = None,
    rules_name: RulesName = DEFAULT_PRESET,
    option: RuleOptions = None,
    hands: Hands = None,
    players: Players = DEFAULT_PLAYERS,
    max_matches: MaxMatches = None,
    move_time: MoveTime = DEFAULT_TIME.move_time,
    time_bank: TimeBank = DEFAULT_TIME.time_bank,
    startup_time: StartupTime = DEFAULT_TIME.startup_time,
    margin: Margin = DEFAULT_TIME.margin,
    max_faults: MaxFaults = DEFAULT_TIME.max_faults,
    seed: Seed = None,
    duplicate: Duplicate = True,
    concurrency: Concurrency = None,
    log_dir: LogDir = None,
    results: Results = None,
    as_json: AsJson = False,
    sandbox_level: SandboxLevel = DEFAULT_SANDBOX,
    transport: TransportName = "stdio",
) -> None:
    """Play the candidate against copies of the baseline until an SPRT decides.

    Exit 0: the candidate is better (H1); 1: it is not (H0); 2: undecided at --max-matches,
    or a usage error (one line on stderr, before any bot starts).  --concurrency
    defaults to 1 here: every table starts its own processes.
    """
    try:
        config = build_config(score, elo0, elo1, chips0, chips1, alpha, beta, decisive=decisive)
        chosen_format = match_format or (FIXED_HANDS if score == CHIPS else SESSION)
        if max_matches is None:
            max_matches = MAX_FIXED_HANDS_MATCHES if chosen_format == FIXED_HANDS else 2000
        settings = build_settings(
            candidate,
            baseline,
            rules_name=rules_name,
            options=option or [],
            hands=hands,
            players=players,
            config=config,
            control=time_control(move_time, time_bank, startup_time, margin, max_faults),
            max_matches=max_matches,
            seed=secrets.randbelow(1 << 31) if seed is None else seed,
            # --seed: the same deals again, and the bots could know them; else a fresh key.
            deals=DealKey.generate() if seed is None else DealKey.public(),
            duplicate=duplicate,
            concurrency=1 if concurrency is None else concurrency,
            log_dir=log_dir,
            match_format=chosen_format,
            luck=luck,
            layout=layout or (ALTERNATE if score == CHIPS else ROTATE),
            transport=transport,
        )
        settings = dataclasses.replace(settings, sandbox=sandbox_of(sandbox_level))
        sink = open_results(results)
    except UsageError as error:
        raise fail(str(error)) from None
    summary, totals = play_reporting(settings, sink)
    print_verdict(settings, summary, totals, as_json)
    raise typer.Exit(code=exit_code(summary))


def open_results(results: Path | None) -> TextIO | None:
    """``--results``, opened to append; ``UsageError`` if it cannot be written."""
    if results is None:
        return None
    try:
        return open(results, "a")  # closed by play_reporting
    except OSError as error:
        raise UsageError(f"--results: cannot write {results}: {error.strerror or error}") from None


def play_reporting(settings: SprtSettings, sink: TextIO | None) -> tuple[SprtSummary, Totals]:
    """Run the test, printing the estimate after each group; Ctrl-C prints it and exits 130.

    The progress (the settings, then the estimate after each group of matches) goes to
    stderr, as a league's does; stdout has the verdict alone (or --json's document), so
    `newmarket sprt ... > verdict.txt` and a CI step's grep read one line.
    """
    out = sys.stderr
    print(header(settings), file=out, flush=True)
    latest: list[tuple[SprtSummary, Totals]] = []  # the estimate after the last group

    def report(group: GroupResult, summary: SprtSummary, totals: Totals) -> None:
        latest[:] = [(summary, totals)]
        faults = f" · {group.faults} faults" if group.faults else ""
        print(f"{totals.line()} · {summary.line()}{faults}", file=out, flush=True)
        if sink is not None:
            sink.write(json.dumps(group.to_json()) + "\n")
            sink.flush()

    try:
        return trio.run(run_sprt, settings, report)
    except (KeyboardInterrupt, BaseExceptionGroup) as error:
        if isinstance(error, BaseExceptionGroup) and not error.subgroup(KeyboardInterrupt):
            raise
        print(interrupted(settings, latest[0] if latest else None), file=out, flush=True)
        raise typer.Exit(code=130) from None
    finally:
        if sink is not None:
            sink.close()


def interrupted(settings: SprtSettings, latest: tuple[SprtSummary, Totals] | None) -> str:
    """As fastchess says on Ctrl-C: the test so far, and how to play it again."""
    so_far = (
        f"undecided after {latest[1].matches} matches: {latest[0].line()}"
        if latest is not None
        else "before the first group of matches finished"
    )
    again = f" (--seed {settings.seed} plays the same deals)" if settings.deals.is_public else ""
    return f"interrupted, {so_far}{again}"


def print_verdict(
    settings: SprtSettings, summary: SprtSummary, totals: Totals, as_json: bool
) -> None:
    """The verdict on one line (stdout, or stderr with --json's document on stdout)."""
    config = settings.config
    size = (
        f"{config.elo1:.3g} Elo ({config.chips1:.3g} chips/hand)"
        if isinstance(config, ChipsConfig)
        else f"{config.elo1:g} Elo"
    )
    verdict = {
        H1: f"H1 accepted: {settings.candidate.name} is better than {settings.baseline.name}",
        H0: f"H0 accepted: {settings.candidate.name} is not better by {size}",
    }.get(summary.decision or "", f"undecided after {totals.matches} matches")
    print(
        f"{verdict} ({totals.matches} matches, {totals.hands} hands, "
        f"{totals.cpu_seconds:.1f} bot cpu s)",
        file=sys.stderr if as_json else sys.stdout,
        flush=True,
    )
    if as_json:
        record = {
            **summary.to_json(),
            "matches": totals.matches,
            "hands": totals.hands,
            "cpu_seconds": round(totals.cpu_seconds, 3),
            "format": settings.match_format,
            "luck": settings.luck,
            "layout": settings.layout,
            "verdict": verdict,
        }
        sys.stdout.write(json.dumps(record) + "\n")


def build_config(
    score: str,
    elo0: float,
    elo1: float,
    chips0: float | None,
    chips1: float | None,
    alpha: float,
    beta: float,
    *,
    decisive: bool = True,
) -> SprtConfig | ChipsConfig:
    """The test's hypotheses: Elo on places, or chips per hand (given, or from Elo)."""
    if score not in SCORES:
        raise UsageError(f"--score: {score!r} is not one of {', '.join(SCORES)}")
    if score == PLACES and (chips0 is not None or chips1 is not None):
        raise UsageError("--chips0/--chips1: only for --score chips; use --elo0/--elo1")
    # Each mistake named by the flag the user typed (the configs' own errors name fields).
    for flag, value in (("--alpha", alpha), ("--beta", beta)):
        if not 0.0 < value < 0.5:
            raise UsageError(f"{flag}: must be between 0 and 0.5 (exclusive), got {value:g}")
    if chips0 is None and chips1 is None and not elo1 > elo0:
        raise UsageError(f"--elo1: must be greater than --elo0 ({elo0:g}), got {elo1:g}")
    low = elo0 / ELO_PER_CHIP if chips0 is None else chips0
    high = elo1 / ELO_PER_CHIP if chips1 is None else chips1
    if score == CHIPS and not high > low:
        raise UsageError(
            f"--chips1: must be greater than --chips0 ({low:.4g} chips per hand), got {high:.4g}"
            + ("" if chips1 is not None else f" (--elo1 {elo1:g} / {ELO_PER_CHIP:g})")
        )
    try:
        if score == PLACES:
            return SprtConfig(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta)
        return ChipsConfig(chips0=low, chips1=high, alpha=alpha, beta=beta, decisive=decisive)
    except ValueError as error:
        raise UsageError(f"--elo0/--elo1/--chips0/--chips1/--alpha/--beta: {error}") from None
