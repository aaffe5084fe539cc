"""How strong is the search bot, and how many matches does ``newmarket sprt`` need to show it?

    python benchmarks/search.py league --bot search --bot tracker --bot boodle --bot random \\
        --groups 40 --move-time 0.2 --seed 1
    python benchmarks/search.py groups --candidate search --baseline random --groups 40 \\
        --move-time 0.2 --seed 2 [--no-duplicate] --results runs/search-random.jsonl
    python benchmarks/search.py asn runs/search-random.jsonl --elo0 0 --elo1 20

Three measurements, all on the real referee (``play_match`` over bot processes):

* ``league``: a duplicate league of one table.  Each group plays the table
  once per cyclic rotation of the bots over the seats with one deal seed, so
  every bot is dealt every seat's cards.  A bot's score in a match is the
  share of the others it finished ahead of (ties half), as in
  ``referee/scoring/sequential.py``; the standings give each bot's mean over groups with a
  95% interval (groups are independent, the matches in a group are not), and
  the head-to-head share of every pair with its interval.
* ``groups``: ``newmarket sprt``'s rotation groups (candidate against copies
  of the baseline), a fixed number of them, written as the JSONL lines that
  ``newmarket sprt --results`` writes; with ``--no-duplicate`` every match
  draws its own seed.
* ``asn``: from such a file, how many matches the test needs (the average
  sample number and its spread), by resampling the observed groups
  (``referee.scoring.sequential.stopping_groups``).

This is the harness behind the figures in docs/search.md; the league
engineer's ``newmarket league`` (``referee/league/``) is the general tool.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import math
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from bots.sdk import Bot, TableState
from engine import Match, Outcome, Rules, preset
from engine.actions import Decision
from engine.cards import Card
from engine.events import E_STOP, STOP_DEAD
from protocol.messages import MatchStart, Request
from referee.bots import BotSpec, resolve_bot
from referee.commands.common import parse_options
from referee.commands.match import unique_names
from referee.commands.sprt import GroupResult, SprtSettings, play_group
from referee.match import convert
from referee.match.dealkey import DealKey
from referee.match.referee import play_match
from referee.scoring.sequential import SprtConfig, group_seed, match_score, stopping_groups
from referee.transport.session import open_bots
from referee.transport.timecontrol import TimeControl

Z95 = 1.959963984540054


def mean_interval(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its normal 95% interval."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.inf
    return mean, Z95 * statistics.stdev(values) / math.sqrt(len(values))


# ---------------------------------------------------------------- league


async def league(
    specs: list[BotSpec], args: argparse.Namespace, control: TimeControl
) -> list[list[list[int]]]:
    """Per group, per rotation: the places of the bots (indexed by bot, not by seat)."""
    rules = preset(args.rules).with_options(parse_options(args.option))
    n = len(specs)
    groups: list[list[list[int]]] = []
    counter = iter(range(args.groups))
    started = time.monotonic()

    async def table() -> None:
        async with open_bots(specs, control) as sessions:
            for group in counter:
                seed = group_seed(args.seed, group)
                places_by_bot = []
                for rotation in range(n):
                    seating = [sessions[(seat + rotation) % n] for seat in range(n)]
                    result = await play_match(
                        seating,
                        rules,
                        seed,
                        time_control=control,
                        match_id=f"bench-{args.seed}-{group}-{rotation}",
                    )
                    by_bot = [0] * n
                    for seat, place in enumerate(result.places):
                        by_bot[(seat + rotation) % n] = place
                    places_by_bot.append(by_bot)
                groups.append(places_by_bot)
                report_league(specs, groups, time.monotonic() - started)

    async with trio.open_nursery() as nursery:
        for _ in range(args.concurrency):
            nursery.start_soon(table)
    return groups


def report_league(specs: list[BotSpec], groups: list[list[list[int]]], elapsed: float) -> None:
    n = len(specs)
    matches = len(groups) * n
    print(f"\n{len(groups)} groups, {matches} matches, {elapsed:.0f} s", flush=True)
    rows = []
    for bot in range(n):
        per_group = [
            statistics.fmean(match_score(places, bot) for places in group) for group in groups
        ]
        mean, half = mean_interval(per_group)
        rows.append((mean, half, specs[bot].name))
    for mean, half, name in sorted(rows, reverse=True):
        print(f"  {name:<12} score {mean:.3f} ± {half:.3f}", flush=True)
    print("  head to head (row finished ahead of column, share of matches):", flush=True)
    for a in range(n):
        cells = []
        for b in range(n):
            if a == b:
                cells.append(f"{'—':>15}")
                continue
            per_group = [
                statistics.fmean(
                    1.0 if p[a] < p[b] else 0.5 if p[a] == p[b] else 0.0 for p in group
                )
                for group in groups
            ]
            mean, half = mean_interval(per_group)
            cells.append(f"{mean:>8.3f}±{half:.3f}")
        print(f"  {specs[a].name:<12}" + "".join(cells), flush=True)


# ---------------------------------------------------------------- groups and asn


async def fixed_groups(args: argparse.Namespace, control: TimeControl) -> None:
    rules = preset(args.rules).with_options(parse_options(args.option))
    settings = SprtSettings(
        candidate=resolve_bot(args.candidate),
        baseline=resolve_bot(args.baseline),
        rules=rules,
        players=args.players,
        config=SprtConfig(),
        control=control,
        max_groups=args.groups,
        seed=args.seed,
        duplicate=args.duplicate,
        deals=DealKey.public(),  # --seed: the same deals run after run, as the results cite
    )
    specs = unique_names([settings.candidate] + [settings.baseline] * (args.players - 1))
    counter = iter(range(args.groups))
    scores: list[float] = []
    out = open(args.results, "a") if args.results else None  # noqa: SIM115

    async def table() -> None:
        async with open_bots(specs, control) as sessions:
            for group in counter:
                result: GroupResult = await play_group(
                    settings, [(sessions[:1], sessions[1:])], group
                )
                scores.append(result.score)
                mean, half = mean_interval(scores)
                print(f"{len(scores):>4} groups · score {mean:.3f} ± {half:.3f}", flush=True)
                if out is not None:
                    out.write(json.dumps(result.to_json()) + "\n")
                    out.flush()

    try:
        async with trio.open_nursery() as nursery:
            for _ in range(args.concurrency):
                nursery.start_soon(table)
    finally:
        if out is not None:
            out.close()


def asn(args: argparse.Namespace) -> None:
    scores, players = [], 0
    for line in Path(args.results).read_text().splitlines():
        data = json.loads(line)
        scores.append(float(data["score"]))
        players = len(data["scores"])
    config = SprtConfig(elo0=args.elo0, elo1=args.elo1, alpha=args.alpha, beta=args.beta)
    lengths, outcomes = stopping_groups(scores, config, trials=args.trials, seed=args.seed)
    matches = sorted(length * players for length in lengths)
    mean, half = mean_interval(scores)
    print(f"{len(scores)} observed groups of {players} matches: score {mean:.3f} ± {half:.3f}")
    print(
        f"SPRT elo0 {config.elo0:g} elo1 {config.elo1:g} alpha {config.alpha:g} "
        f"beta {config.beta:g}, {args.trials} resampled tests: {outcomes}"
    )
    quantiles = statistics.quantiles(matches, n=20)
    print(
        f"matches needed: mean {statistics.fmean(matches):.1f}, median "
        f"{statistics.median(matches):.0f}, 5%-95% {quantiles[0]:.0f}-{quantiles[-1]:.0f}"
    )


# ---------------------------------------------------------------- duel: in-process, chips per hand


def make_bot(text: str) -> Bot:
    """``tracker``, ``boodle`` (any starter), or ``search[:key=value,...]`` (SearchBot's options).

    Search options: ``samples`` (max determinizations per decision), ``fraction``, ``seed``,
    and any keyword ``SearchBot`` takes (numbers only), e.g. ``search:samples=100,epsilon=0.1``.
    """
    name, _, options = text.partition(":")
    if name == "oracle":
        settings = dict(item.split("=") for item in filter(None, options.split(",")))
        return Oracle(
            int(settings.get("samples", 20)),
            float(settings.get("epsilon", 0.1)),
            int(settings.get("hide", 0)),
        )
    if name == "search":
        from bots.search.bot import SearchBot

        kwargs: dict[str, float | int] = {}
        for item in filter(None, options.split(",")):
            key, _, value = item.partition("=")
            key = {"samples": "max_samples"}.get(key, key)
            kwargs[key] = int(value) if value.lstrip("-").isdigit() else float(value)
        return SearchBot(log=lambda _line: None, **kwargs)  # type: ignore[arg-type]
    module = importlib.import_module(f"bots.starters.{name}")
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Bot)
        and value.__module__ == module.__name__
    ]
    if len(classes) != 1:
        raise SystemExit(f"error: --candidate/--baseline: no starter bot called {name!r}")
    return classes[0]()


def play_in_process(
    bots: list[Bot],
    rules: Rules,
    seed: int,
    move_time_ms: int,
    before: Callable[[Match], None] | None = None,
) -> Outcome:
    """One match with SDK bots called directly (no lines, no processes), as a session would.

    Each seat gets its events, then its request; the bot's answer is applied
    (an illegal answer is a bug here, so it raises).
    """
    players = len(bots)
    match = Match(rules, players, seed)
    states = [TableState() for _ in bots]
    cursors = [0] * players
    for seat, (bot, state) in enumerate(zip(bots, states, strict=True)):
        start = MatchStart(
            match_id=f"duel-{seed}",
            seat=seat,
            players=players,
            names=[f"p{s}" for s in range(players)],
            rules=rules.to_dict(),  # type: ignore[arg-type]  # plain JSON values
            chips=[rules.starting_chips] * players,
            move_time_ms=move_time_ms,
            time_bank_ms=0,
        )
        state.start_match(start)
        bot.on_match_start(start, state)

    def deliver(seat: int) -> None:
        events = [
            converted
            for event in match.events(viewer=seat, since=cursors[seat])
            if (converted := convert.protocol_event(event)) is not None
        ]
        cursors[seat] = match.event_count()
        for event in events:
            states[seat].apply(event)
        bots[seat].on_events(events, states[seat])

    request_id = 0
    while not match.is_over:
        to_act = match.current_seat()
        assert to_act is not None
        seat = to_act
        deliver(seat)
        if before is not None:
            before(match)
        request_id += 1
        request = convert.build_request(
            match, request_id, time_left_ms=move_time_ms, time_bank_ms=0
        )
        state = states[seat]
        state.sync(request)
        method = {"lead": Bot.lead, "stake": Bot.stake, "dead_hand": Bot.dead_hand, "bid": Bot.bid}
        choice = getattr(bots[seat], method[request.decision].__name__)(request, state)
        fault = convert.apply_choice(match, request, choice)
        if fault is not None:
            raise AssertionError(f"seat {seat} ({bots[seat].name}): {fault}")
    return match.outcome()


def duel_group(args: argparse.Namespace, group: int) -> tuple[float, float]:
    """One duplicate group: the candidate in every seat in turn, one deal seed.

    Returns the candidate's chips per hand over the mean of its opponents (its
    net chips minus theirs, per hand played) and its place score, each the
    mean over the group's matches.
    """
    rules = preset(args.rules).with_options(
        {**parse_options(args.option), "hand_limit": args.hands}
    )
    seed = group_seed(args.seed, group)
    chips, places = [], []
    for seat in range(args.players):
        bots = [
            make_bot(args.candidate if s == seat else args.baseline) for s in range(args.players)
        ]
        oracles = [bot for bot in bots if isinstance(bot, Oracle)]
        outcome = play_in_process(
            bots, rules, seed, int(args.move_time * 1000), before=functools.partial(_show, oracles)
        )
        pairs = zip(outcome.chips, outcome.starting_chips, strict=True)
        net = [end - start for end, start in pairs]
        others = statistics.fmean(net[s] for s in range(args.players) if s != seat)
        chips.append((net[seat] - others) / max(1, outcome.hands_played))
        places.append(match_score(list(outcome.places), seat))
    return statistics.fmean(chips), statistics.fmean(places)


def _show(oracles: list[Oracle], match: Match) -> None:
    """An oracle (benchmarks only) reads the true deal before each decision."""
    for oracle in oracles:
        oracle.match = match


def duel(args: argparse.Namespace) -> None:
    started = time.monotonic()
    results: list[tuple[float, float]] = []
    groups = range(args.first, args.first + args.groups)
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for number, result in zip(
            groups, pool.imap(functools.partial(duel_group, args), groups), strict=True
        ):
            results.append(result)
            if args.results is not None:
                # One line per group, to pair two versions' runs on the same deals.
                with args.results.open("a") as out:
                    line = {"group": number, "chips": result[0], "place": result[1]}
                    out.write(json.dumps(line) + "\n")
            if len(results) % args.every == 0 or len(results) == args.groups:
                chips, half = mean_interval([chips for chips, _ in results])
                place, place_half = mean_interval([place for _, place in results])
                print(
                    f"{len(results):>4} groups · {args.candidate} vs {args.players - 1}x "
                    f"{args.baseline}: {chips:+.3f} ± {half:.3f} chips/hand · "
                    f"place score {place:.3f} ± {place_half:.3f} · "
                    f"{time.monotonic() - started:.0f} s",
                    flush=True,
                )


# ---------------------------------------------------------------- regret: leads, one trajectory


class Oracle(Bot):
    """The search's own evaluation on the true deal (``regret`` only): is the machinery right?

    With the hidden cards known, the only errors left are the playouts'; a
    correct search then comes close to the best lead.  ``hide`` takes some
    knowledge away again, to see where the value of knowing lies:

    * 0: every card known (knowing the other seats' hands is knowing the dead
      hand too: it is the rest of the pack);
    * 1: the true dead hand kept, the other seats' cards shuffled among them
      (their hand sizes kept);
    * 2: the dead hand shuffled in too (no inference, no facts from the play,
      not even the stops: a lower bound for the search);
    * 4: as 2, but the dead cards that stops have proven so far stay dead (the
      facts a bot has from the stops; the search has these and more);
    * 3: as 4, and the dead cards that stops *will* prove in the rest of this
      hand stay dead too (those of the noiseless continuation after any legal
      lead): clairvoyance of every stop to
      come, an upper bound on what leading to learn from stops could be worth.

    The playouts count the dead cards proven so far as gone for every seat
    (``known_dead``), as the search's do.
    """

    name = "oracle"

    def __init__(self, samples: int = 20, epsilon: float = 0.1, hide: int = 0) -> None:
        if hide not in (0, 1, 2, 3, 4):
            raise SystemExit(f"error: oracle: hide={hide}: expected 0 to 4")
        self.samples = samples
        self.epsilon = epsilon
        self.hide = hide
        self.match: Match | None = None

    def lead(self, request: Request, state: TableState) -> str:
        import dataclasses
        import random

        from bots.search.montecarlo import evaluate
        from bots.search.playout import PolicyParams
        from engine.position import Position, position_of

        assert self.match is not None
        truth = position_of(self.match)
        seat = state.seat
        hide = self.hide
        shown = self.match._dead_shown_by_stops()  # engine codes
        fixed_dead: set[Card] = set()
        if hide in (3, 4):
            mask = shown
            if hide == 3:
                mask |= continuations(self.match, request.legal, seat)[1]
            to_card = self.match._to_card
            fixed_dead = {to_card[code] for code in range(52) if mask >> code & 1}

        def sample(rng: random.Random) -> Position:
            if not hide:
                return truth
            others = [s for s in range(truth.players) if s != seat]
            cards = [card for s in others for card in truth.hands[s]]
            if hide != 1:
                cards += [card for card in truth.dead_hand if card not in fixed_dead]
            rng.shuffle(cards)
            hands = list(truth.hands)
            for s in others:
                size = len(truth.hands[s])
                hands[s], cards = tuple(cards[:size]), cards[size:]
            if hide == 1:
                dead = truth.dead_hand
            else:
                dead = tuple(card for card in truth.dead_hand if card in fixed_dead) + tuple(cards)
            return dataclasses.replace(truth, hands=tuple(hands), dead_hand=dead)

        estimates, _ = evaluate(
            sample,
            [Card.parse(text) for text in request.legal],
            seat,
            random.Random(0),
            deadline=float("inf"),
            max_samples=self.samples,
            policy=PolicyParams(
                epsilon=self.epsilon,
                dead_size=len(truth.dead_hand),
                known_dead=0 if hide == 2 else shown,
            ),
        )
        return str(max(estimates, key=lambda estimate: estimate.mean).action)


def continuations(match: Match, legal: list[str], seat: int) -> tuple[dict[str, float], int]:
    """Each legal lead valued on the true deal, and the dead cards the rest of the hand shows.

    The rest of the hand is played by every seat with the playout policy
    without randomness (the boodle starter's rule, the dead hand's true size;
    stops shown in the rest of the hand count, as ``policy_lead`` reads them
    from the match) and scored as the search scores a hand.  The mask (engine
    codes) holds every card a stop with cause ``dead`` proves after any of the
    leads and was not proven before.
    """
    from bots.search.montecarlo import utility
    from bots.search.playout import PolicyParams, policy_lead

    values: dict[str, float] = {}
    params = PolicyParams(epsilon=0.0, dead_size=len(match.dead_hand()))
    future = 0
    for text in legal:
        play = match.clone()
        hand = play.hand_number
        since = play.event_count()
        play.apply(Card.parse(text))
        while not play.is_over and play.hand_number == hand:
            if play.decision is not Decision.LEAD:
                break
            play.apply(policy_lead(play, lambda: 1.0, params))
        values[text] = utility(play, seat)
        for raw in play.raw_events(since):
            if raw[0] == E_STOP and raw[2] == STOP_DEAD:
                future |= 1 << raw[3]
    return values, future & ~match._dead_shown_by_stops()


class Panel(Bot):
    """Seat 0 of a ``regret`` match: plays the boodle starter, and asks every variant too.

    At each lead with a choice, every variant (each a search bot that saw the
    same events) names its lead, and each legal lead is valued on the true
    deal: the rest of the hand played by every seat with the playout policy
    without randomness (the boodle starter's rule), scored as the search
    scores a hand.  Then the starter's lead is played, so every variant is
    judged at the same positions: the comparison is exact, position by position.
    """

    name = "panel"

    def __init__(self, variants: list[Bot]) -> None:
        from bots.starters.boodle import BoodleBot

        self.player = BoodleBot()
        self.variants = variants
        self.match: Match | None = None
        self.gains: list[list[float]] = [[] for _ in variants]
        self.best: list[float] = []
        self.tags: list[tuple[int, int]] = []
        """Per lead: dead cards proven by stops so far, and those the rest of the hand proves."""

    def on_match_start(self, start: MatchStart, state: TableState) -> None:
        for variant in self.variants:
            variant.on_match_start(start, state)

    def on_events(self, events: list[Any], state: TableState) -> None:
        for variant in self.variants:
            variant.on_events(events, state)

    def lead(self, request: Request, state: TableState) -> str:
        played = self.player.lead(request, state)
        if len(request.legal) < 2 or self.match is None:
            return played
        values, future = continuations(self.match, request.legal, state.seat)
        shown = self.match._dead_shown_by_stops()
        for gains, variant in zip(self.gains, self.variants, strict=True):
            if isinstance(variant, Oracle):
                variant.match = self.match
            gains.append(values[variant.lead(request, state)] - values[played])
        self.best.append(max(values.values()) - values[played])
        self.tags.append((shown.bit_count(), future.bit_count()))
        return played


def regret_match(
    args: argparse.Namespace, number: int
) -> tuple[list[list[float]], list[float], list[tuple[int, int]]]:
    rules = preset(args.rules).with_options(
        {**parse_options(args.option), "hand_limit": args.hands}
    )
    panel = Panel([make_bot(text) for text in args.variant])
    bots: list[Bot] = [panel, *(make_bot("boodle") for _ in range(args.players - 1))]

    def before(match: Match) -> None:
        panel.match = match

    # The variants' sample caps, not the clock, bound their work (--move-time 0 is 200 ms).
    move_ms = int(args.move_time * 1000) or 200
    play_in_process(bots, rules, group_seed(args.seed, number), move_ms, before=before)
    return panel.gains, panel.best, panel.tags


REGRET_SPLITS: list[tuple[str, Callable[[tuple[int, int]], bool]]] = [
    ("no dead card proven yet", lambda tag: tag[0] == 0),
    ("a dead card proven", lambda tag: tag[0] > 0),
    ("no stop on a dead card to come", lambda tag: tag[1] == 0),
    ("a stop on a dead card to come", lambda tag: tag[1] > 0),
]
"""How ``regret --split`` cuts the leads: by what the stops have shown and will show."""


def regret(args: argparse.Namespace) -> None:
    started = time.monotonic()
    gains: list[list[float]] = [[] for _ in args.variant]
    best: list[float] = []
    tags: list[tuple[int, int]] = []
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for done, (match_gains, match_best, match_tags) in enumerate(
            pool.imap(functools.partial(regret_match, args), range(args.matches)), start=1
        ):
            for total, more in zip(gains, match_gains, strict=True):
                total.extend(more)
            best.extend(match_best)
            tags.extend(match_tags)
            if done % args.every == 0 or done == args.matches:
                print(
                    f"{done} matches, {len(best)} leads with a choice, "
                    f"{time.monotonic() - started:.0f} s; chips gained per lead over boodle's:"
                )
                report_regret(args.variant, gains, best)
                if args.split and done == args.matches:
                    for label, keep in REGRET_SPLITS:
                        chosen = [i for i, tag in enumerate(tags) if keep(tag)]
                        if len(chosen) < 2:
                            continue
                        print(f" {label} ({len(chosen)} leads):")
                        report_regret(
                            args.variant,
                            [[values[i] for i in chosen] for values in gains],
                            [best[i] for i in chosen],
                        )


def report_regret(names: list[str], gains: list[list[float]], best: list[float]) -> None:
    """Each variant's gain per lead, and paired with the first (the same leads: far tighter)."""
    mean, half = mean_interval(best)
    print(f"  {'(the best lead)':<40} {mean:+.3f} ± {half:.3f}")
    for text, values in zip(names, gains, strict=True):
        mean, half = mean_interval(values)
        paired, paired_half = mean_interval([a - b for a, b in zip(values, gains[0], strict=True)])
        print(
            f"  {text:<40} {mean:+.3f} ± {half:.3f}   "
            f"vs the first {paired:+.3f} ± {paired_half:.3f}",
            flush=True,
        )


# ---------------------------------------------------------------- choice: loss against a reference


class Judge(Bot):
    """Seat 0 of a ``choice`` match: plays the boodle starter, and grades every variant's lead.

    At each lead with a choice, the reference (a search bot with many deals)
    values every legal lead over its own sampled deals; each variant (a search
    bot that saw the same events) then decides ``repeats`` times, reseeded, and
    its loss is the reference's value of the best lead minus that of the one it
    chose.  No deal luck enters: this measures how well a variant finds what
    the reference's model of the game says is best, per CPU second, far more
    tightly than ``duel`` or ``regret`` can (it cannot tell a better model of
    the game, only a better use of one).
    """

    name = "judge"

    def __init__(self, reference: Bot, variants: list[Bot], samples: int, repeats: int) -> None:
        from bots.starters.boodle import BoodleBot

        self.player = BoodleBot()
        self.reference = reference
        self.variants = variants
        self.samples = samples
        self.repeats = repeats
        self.losses: list[list[float]] = [[] for _ in variants]
        self.seconds: list[list[float]] = [[] for _ in variants]

    def on_match_start(self, start: MatchStart, state: TableState) -> None:
        for bot in (self.reference, *self.variants):
            bot.on_match_start(start, state)

    def on_events(self, events: list[Any], state: TableState) -> None:
        for bot in (self.reference, *self.variants):
            bot.on_events(events, state)

    def lead(self, request: Request, state: TableState) -> str:
        import random

        from bots.search.bot import SearchBot
        from bots.search.montecarlo import evaluate

        played = self.player.lead(request, state)
        reference = self.reference
        if len(request.legal) < 2 or not isinstance(reference, SearchBot):
            return played
        assert reference.knowledge is not None
        estimates, _ = evaluate(
            reference.sampler(request),
            [Card.parse(text) for text in request.legal],
            reference.knowledge.seat,
            random.Random(len(self.losses[0])),
            deadline=float("inf"),
            max_samples=self.samples,
            policy=reference.policy_params(),
            pruning=0.0,  # every lead valued on every deal
        )
        value = {str(estimate.action): estimate.mean for estimate in estimates}
        top = max(value.values())
        for losses, seconds, variant in zip(self.losses, self.seconds, self.variants, strict=True):
            for repeat in range(self.repeats):
                if isinstance(variant, SearchBot):
                    variant.rng = random.Random(repeat * 7919 + len(losses))
                started = time.process_time()
                choice = variant.lead(request, state)
                seconds.append(time.process_time() - started)
                losses.append(top - value[choice])
        return played


def choice_match(
    args: argparse.Namespace, number: int
) -> tuple[list[list[float]], list[list[float]]]:
    rules = preset(args.rules).with_options(
        {**parse_options(args.option), "hand_limit": args.hands}
    )
    judge = Judge(
        make_bot(args.reference),
        [make_bot(text) for text in args.variant],
        args.samples,
        args.repeats,
    )
    bots: list[Bot] = [judge, *(make_bot("boodle") for _ in range(args.players - 1))]
    play_in_process(bots, rules, group_seed(args.seed, number), 3_600_000)
    return judge.losses, judge.seconds


def choice(args: argparse.Namespace) -> None:
    started = time.monotonic()
    losses: list[list[float]] = [[] for _ in args.variant]
    seconds: list[list[float]] = [[] for _ in args.variant]
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for done, (match_losses, match_seconds) in enumerate(
            pool.imap(functools.partial(choice_match, args), range(args.matches)), start=1
        ):
            for total, more in zip(losses, match_losses, strict=True):
                total.extend(more)
            for total, more in zip(seconds, match_seconds, strict=True):
                total.extend(more)
            if done % args.every and done != args.matches:
                continue
            print(
                f"{done} matches, {len(losses[0]) // args.repeats} leads with a choice x "
                f"{args.repeats} repeats, {time.monotonic() - started:.0f} s; chips lost per "
                f"decision against {args.reference} at {args.samples} deals:"
            )
            for text, values, cpu in zip(args.variant, losses, seconds, strict=True):
                mean, half = mean_interval(values)
                paired, paired_half = mean_interval(
                    [a - b for a, b in zip(values, losses[0], strict=True)]
                )
                wrong = sum(value > 1e-9 for value in values) / len(values)
                print(
                    f"  {text:<40} {mean:.3f} ± {half:.3f} (not its best {wrong:.0%}; "
                    f"vs the first {paired:+.3f} ± {paired_half:.3f}) "
                    f"{1000 * statistics.fmean(cpu):.1f} ms CPU",
                    flush=True,
                )


# ---------------------------------------------------------------- deals: sampled deals vs the truth


def deals_match(args: argparse.Namespace, number: int) -> list[tuple[int, list[float]]]:
    """One match of a search bot against boodle starters; at each of its leads with a choice,
    deals drawn without and with the deal chain are held against the true deal.

    Per lead: (other seats' leads seen this hand, and for each sampler the share of the
    other hands' cards placed right, the share of the dead hand's, the share of cards
    where the previous deal had them, and the share of deals in which the starter's rule
    names every lead of every seat it reads).
    """
    import random

    from bots.search.bot import SearchBot
    from bots.starters.boodle import BoodleBot
    from engine.position import Position

    truth: list[Match] = []
    rows: list[tuple[int, list[float]]] = []

    class Probe(SearchBot):
        def sampler(self, request: Request) -> Callable[[random.Random], Position]:
            knowledge, model = self.knowledge, self.lead_model
            if request.decision != "lead" or len(request.legal) < 2 or not truth:
                return super().sampler(request)
            assert knowledge is not None and model is not None
            match, seat, players = truth[-1], knowledge.seat, knowledge.players
            likelihood = model.likelihood(knowledge.leads, knowledge.played)
            figures: list[float] = []
            for steps in (0, self.chain_steps):
                kept, self.chain_steps = self.chain_steps, steps
                state = self.rng.getstate()
                draw = super().sampler(request)
                self.rng.setstate(state)
                self.chain_steps = kept
                rng = random.Random(number)
                hands = dead = same = named = 0.0
                previous: list[set[Card]] | None = None
                for _ in range(args.deals):
                    position = draw(rng)
                    places = [set(cards) for cards in position.hands] + [set(position.dead_hand)]
                    held = sum(len(match.hand_of(s)) for s in range(players) if s != seat)
                    hands += sum(
                        len(set(match.hand_of(s)) & places[s]) for s in range(players) if s != seat
                    ) / max(1, held)
                    dead += len(set(match.dead_hand()) & places[-1]) / max(
                        1, len(match.dead_hand())
                    )
                    if previous is not None:
                        same += sum(
                            len(a & b) for a, b in zip(places, previous, strict=True)
                        ) / max(1, sum(len(a) for a in places))
                    previous = places
                    explained = True
                    for other in likelihood.leads:
                        if other == seat:
                            continue  # our own leads: the search's, not the starter's
                        mask = model.codes(sum(1 << card for card in position.hands[other]))
                        kept_epsilon, likelihood.epsilon[other] = likelihood.epsilon[other], 0.0
                        explained = explained and likelihood.factor(other, mask) > 0.5
                        likelihood.epsilon[other] = kept_epsilon
                        likelihood.cache.clear()
                    named += explained
                figures += [
                    hands / args.deals,
                    dead / args.deals,
                    same / (args.deals - 1),
                    named / args.deals,
                ]
            rows.append((len(knowledge.leads), figures))
            return super().sampler(request)

    rules = preset(args.rules).with_options({"hand_limit": args.hands})
    bots: list[Bot] = [Probe(max_samples=20, log=lambda _line: None)]
    bots += [BoodleBot() for _ in range(args.players - 1)]
    play_in_process(bots, rules, group_seed(args.seed, number), 60_000, before=truth.append)
    return rows


def deals(args: argparse.Namespace) -> None:
    rows: list[tuple[int, list[float]]] = []
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for more in pool.imap(functools.partial(deals_match, args), range(args.matches)):
            rows.extend(more)
    print(
        f"{len(rows)} leads with a choice; {args.deals} deals each, drawn without the chain / "
        "with it: share of the other hands' cards placed right, of the dead hand's, kept "
        "from the previous deal, and deals explaining every lead read"
    )
    for low in range(0, 12, 3):
        group = [figures for seen, figures in rows if low <= min(seen, 11) < low + 3]
        if not group:
            continue
        means = [statistics.fmean(figures[i] for figures in group) for i in range(8)]
        print(
            f"  {low:>2}-{low + 2} leads seen ({len(group):>3}): "
            f"hands {means[0]:.3f} / {means[4]:.3f}   dead {means[1]:.3f} / {means[5]:.3f}   "
            f"kept {means[2]:.3f} / {means[6]:.3f}   explained {means[3]:.3f} / {means[7]:.3f}"
        )


# ---------------------------------------------------------------- kernel: playout speed


def _fixed(position: Any, _rng: Any) -> Any:
    return position


def kernel_speed(args: argparse.Namespace) -> None:
    """CPU seconds of the search's evaluation through the engine and through the lean kernel.

    The same lead positions (every lead with a choice of ``--matches`` short
    matches, first legal leads), the same deals per position, alternating
    the two paths ``--rounds`` times so a change in load hits both alike.
    """
    import random

    from bots.search.montecarlo import evaluate
    from bots.search.playout import PolicyParams
    from engine.position import position_of

    rules = preset(args.rules).with_options({"hand_limit": args.hands})
    positions = []
    for seed in range(args.matches):
        match = Match(rules, args.players, seed)
        while not match.is_over:
            legal = match.legal_actions()
            if match.decision is Decision.LEAD and len(legal) > 1:
                positions.append((position_of(match), legal))
            match.apply(legal[0])
    spent = {False: 0.0, True: 0.0}
    for _round in range(args.rounds):
        for lean in (False, True):
            started = time.process_time()
            for position, legal in positions:
                evaluate(
                    functools.partial(_fixed, position),
                    legal,
                    position.to_act,
                    random.Random(1),
                    deadline=math.inf,
                    max_samples=args.samples,
                    policy=PolicyParams(),
                    lean=lean,
                )
            spent[lean] += time.process_time() - started
    print(
        f"{len(positions)} lead positions x {args.samples} deals x {args.rounds} rounds: "
        f"engine {spent[False]:.2f} s, kernel {spent[True]:.2f} s CPU, "
        f"kernel {spent[False] / spent[True]:.2f}x faster"
    )


def _played_matches(
    parser: argparse.ArgumentParser,
    *,
    hands: int,
    matches: int | None = None,
    seed: int | None = None,
    jobs: bool = False,
    every: int | None = None,
    options: bool = True,
    hands_help: str | None = None,
) -> None:
    """The options every subcommand that plays matches shares, with its own defaults."""
    parser.add_argument("--rules", default="boodle")
    if options:
        parser.add_argument("--option", action="append", default=[])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=hands, help=hands_help)
    if matches is not None:
        parser.add_argument("--matches", type=int, default=matches)
    if seed is not None:
        parser.add_argument("--seed", type=int, default=seed)
    if jobs:
        parser.add_argument("--jobs", type=int, default=1)
    if every is not None:
        parser.add_argument("--every", type=int, default=every)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("league", "groups"):
        sub = commands.add_parser(name)
        sub.add_argument("--rules", default="boodle")
        sub.add_argument("--option", action="append", default=[])
        sub.add_argument("--groups", type=int, default=20)
        sub.add_argument("--move-time", type=float, default=1.0)
        # No bank by default, as in `newmarket sprt`: the search bot spends 1/40 of any
        # bank on every decision, so a bank would quietly make it think longer than
        # --move-time says (the 10 s default bank adds 0.25 s per decision).
        sub.add_argument("--time-bank", type=float, default=0.0)
        sub.add_argument("--seed", type=int, default=1)
        sub.add_argument("--concurrency", type=int, default=1)
    commands.choices["league"].add_argument("--bot", action="append", required=True)
    groups = commands.choices["groups"]
    groups.add_argument("--candidate", required=True)
    groups.add_argument("--baseline", required=True)
    groups.add_argument("--players", type=int, default=4)
    groups.add_argument("--duplicate", action=argparse.BooleanOptionalAction, default=True)
    groups.add_argument("--results", type=Path)
    sizes = commands.add_parser("asn")
    sizes.add_argument("results", type=Path)
    sizes.add_argument("--elo0", type=float, default=0.0)
    sizes.add_argument("--elo1", type=float, default=20.0)
    sizes.add_argument("--alpha", type=float, default=0.05)
    sizes.add_argument("--beta", type=float, default=0.05)
    sizes.add_argument("--trials", type=int, default=2000)
    sizes.add_argument("--seed", type=int, default=0)
    fight = commands.add_parser("duel")
    fight.add_argument("--candidate", required=True)
    fight.add_argument("--baseline", required=True)
    _played_matches(fight, hands=20, seed=1, hands_help="hand limit of each match")
    fight.add_argument("--groups", type=int, default=100)
    fight.add_argument("--first", type=int, default=0, help="the first group's number")
    fight.add_argument("--move-time", type=float, default=0.2)
    fight.add_argument("--jobs", type=int, default=1)
    fight.add_argument("--every", type=int, default=10, help="print after this many groups")
    fight.add_argument("--results", type=Path, help="append each group's figures (JSON lines)")
    panel = commands.add_parser("regret")
    panel.add_argument("--variant", action="append", required=True)
    _played_matches(panel, hands=20, matches=20, seed=1, jobs=True, every=5)
    panel.add_argument(
        "--move-time", type=float, default=0.2, help="seconds per decision (large: samples bind)"
    )
    panel.add_argument(
        "--split", action="store_true", help="also by what the stops have shown and will show"
    )
    grade = commands.add_parser("choice")
    grade.add_argument("--reference", default="search", help="the model whose values grade")
    grade.add_argument("--samples", type=int, default=4000, help="the reference's deals")
    grade.add_argument("--variant", action="append", required=True)
    grade.add_argument("--repeats", type=int, default=4, help="reseeded decisions per variant")
    _played_matches(grade, hands=6, matches=4, seed=31, jobs=True, every=2)
    sampled = commands.add_parser("deals")
    sampled.add_argument("--deals", type=int, default=60, help="deals drawn per sampler")
    _played_matches(sampled, hands=8, matches=6, seed=11, jobs=True, options=False)
    speed = commands.add_parser("kernel")
    _played_matches(speed, hands=2, matches=12, options=False)
    speed.add_argument("--samples", type=int, default=40)
    speed.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    in_process = {
        "kernel": kernel_speed,
        "regret": regret,
        "deals": deals,
        "choice": choice,
        "duel": duel,
        "asn": asn,
    }
    if args.command in in_process:
        in_process[args.command](args)
        return
    control = TimeControl(
        move_time=args.move_time, time_bank=args.time_bank, startup_time=30.0, margin=0.05
    )
    if args.command == "league":
        specs = unique_names([resolve_bot(text) for text in args.bot])
        trio.run(league, specs, args, control)
    else:
        trio.run(fixed_groups, args, control)


if __name__ == "__main__":
    main()
