"""The duplicate format and the duplicate chips score, as pure functions.

**The format.**  Duplicate deals (the seat rotations of a table share one
deal seed) cancel the luck of the cards only while every rotation deals the
same cards to the same seats, that is until the first player is eliminated:
the dealer then skips a seat and the deals part ways.  ``fixed_hands``
turns any rules into a match of exactly ``hands`` hands with stacks so deep
that no seat can run out of chips (``deep_chips``), so a rotation group's
deals stay identical to the end.  The session with elimination stays the
other format: it is the game the rule texts describe.

**The score** (bridge's duplicate scoring, carried over to chips).  In a
group, the matches of one table that share a deal seed, the seat ``s``
cards of every hand are the same in every match.  A bot holding seat ``s``
in one of them scores its chips won there minus the mean of what the other
holders of seat ``s`` won in the group's other matches, per hand played::

    diff(r, s) = net[r][s] / hands[r] - mean over r' != r of net[r'][s] / hands[r']

A bot's group score is the mean of its diffs.  Why it is unbiased: the
cards of seat ``s`` are the same in every term, so their value cancels
out; the seat's position (dealer or not, who leads) is the same too; and
if every bot plays alike, each term's two parts have the same distribution,
so the mean is 0 exactly in expectation, whatever the deal.  A group's
diffs sum to 0, so the score is zero-sum among the bots of a table.

With the optional luck correction (``referee.scoring.luck``), ``net`` is
replaced by ``net - luck``, where ``luck`` is what a fixed reference policy
won at that seat with the same seed.  In a duplicate group every holder of
seat ``s`` has the same luck, so it cancels exactly; it matters where the
cards are not shared (``relative_score``, matches with their own seeds).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from engine import Rules

__all__ = [
    "ALTERNATE",
    "LAYOUTS",
    "ROTATE",
    "GroupMatch",
    "bridge_scores",
    "candidate_seats",
    "deep_chips",
    "fixed_hands",
    "forfeit_nets",
    "relative_score",
    "seat_diffs",
]

Bot = TypeVar("Bot", bound=Hashable)

# Per hand, a seat loses at most its stake, the payment for every card it
# could hold (no hand exceeds the 52 cards) and a dead-hand purchase fee.
_MOST_CARDS = 52


ROTATE = "rotate"
ALTERNATE = "alternate"
LAYOUTS = (ALTERNATE, ROTATE)


def candidate_seats(layout: str, players: int) -> list[list[int]]:
    """The seats a candidate holds in each match of a group (a baseline holds the others).

    ``rotate``: one candidate, once in every seat (``players`` matches).
    ``alternate``: candidates in the even seats, then in the odd ones (two
    matches; duplicate bridge's team match, where the pairs swap directions).
    Either way every seat is held by a candidate in some match and by a
    baseline in another, so the bridge score compares them on the same cards.
    """
    if players < 2:
        raise ValueError(f"players: a group seats at least two, got {players}")
    if layout == ROTATE:
        return [[seat] for seat in range(players)]
    if layout == ALTERNATE:
        return [list(range(first, players, 2)) for first in (0, 1)]
    raise ValueError(f"layout: {layout!r} is not one of {', '.join(LAYOUTS)}")


def deep_chips(rules: Rules, hands: int) -> int:
    """Starting chips no seat can run through in ``hands`` hands (auction bids aside).

    A bot that bids its whole stack for a dead hand can still go out; only
    the ``exchange_or_auction`` option has auctions, and no preset uses it.
    """
    stake = max(rules.stake_required(is_dealer=True), rules.stake_required(is_dealer=False))
    return hands * (stake + _MOST_CARDS + rules.purchase_fee) + 1


def fixed_hands(rules: Rules, hands: int) -> Rules:
    """``rules`` as a duplicate match of exactly ``hands`` hands: deep stacks, no elimination."""
    if hands < 1:
        raise ValueError(f"hands: a match has at least one hand, got {hands}")
    chips = max(rules.starting_chips, deep_chips(rules, hands))
    return rules.with_options({"hand_limit": hands, "starting_chips": chips})


@dataclasses.dataclass(frozen=True, slots=True)
class GroupMatch(Generic[Bot]):
    """One match of a group: who held each seat, their net chips, and the hands played.

    ``luck`` (optional) is the reference policy's net chips per seat on the same seed.
    """

    holders: Sequence[Bot]
    nets: Sequence[float]
    hands: int
    luck: Sequence[float] | None = None

    def per_hand(self, seat: int) -> float:
        net = self.nets[seat] - (self.luck[seat] if self.luck is not None else 0.0)
        return net / max(1, self.hands)


def forfeit_nets(nets: Sequence[float], disqualified: Sequence[bool]) -> list[float]:
    """Each seat's net chips as the chips score counts them: a disqualified seat's at most
    the lowest of the seats at its table that were not disqualified.

    After a disqualification the referee's default policy plays the seat (SPEC.md 13),
    and the chips it wins are not the bot's: a bot that crashed at every start could
    otherwise rank above bots that played, where places (SPEC.md 10.9) put it below
    them.  A table where every seat was disqualified keeps its nets.
    """
    if len(nets) != len(disqualified):
        raise ValueError("forfeit_nets: one disqualified flag per seat")
    kept = [net for net, out in zip(nets, disqualified, strict=True) if not out]
    if not kept or len(kept) == len(nets):
        return list(nets)
    floor = min(kept)
    return [min(net, floor) if out else net for net, out in zip(nets, disqualified, strict=True)]


def seat_diffs(group: Sequence[GroupMatch[Bot]]) -> list[list[float]]:
    """``diffs[r][s]``: match r's seat s against the group's other holders of seat s.

    Every match of ``group`` must seat the same number of players and share
    one deal seed (at least two matches: one alone has no comparison).
    """
    if len(group) < 2:
        raise ValueError("seat_diffs: a group needs at least two matches to compare")
    seats = len(group[0].holders)
    if any(len(m.holders) != seats or len(m.nets) != seats for m in group):
        raise ValueError("seat_diffs: every match of a group seats the same number of players")
    others = len(group) - 1
    diffs = [[0.0] * seats for _ in group]
    for seat in range(seats):
        values = [m.per_hand(seat) for m in group]
        total = sum(values)
        for r, value in enumerate(values):
            diffs[r][seat] = value - (total - value) / others
    return diffs


def bridge_scores(group: Sequence[GroupMatch[Bot]]) -> dict[Bot, float]:
    """Each bot's duplicate score in one group (chips per hand; see the module docstring).

    The mean of its seat diffs; a group of one match scores nobody.
    """
    if len(group) < 2:
        return {}
    diffs: dict[Bot, list[float]] = {}
    for match, row in zip(group, seat_diffs(group), strict=True):
        for bot, diff in zip(match.holders, row, strict=True):
            diffs.setdefault(bot, []).append(diff)
    return {bot: sum(d) / len(d) for bot, d in diffs.items()}


def relative_score(match: GroupMatch[Bot], seat: int) -> float:
    """Without shared cards: the seat's chips per hand minus the mean of the others' at its table.

    Unbiased for the same reason as the bridge score but without its
    cancellation of the cards: with equal bots every seat has the same
    expected chips (the first dealer is drawn from the seed), so the
    difference is 0 in expectation.  The luck correction, when given,
    removes most of the cards' value instead.
    """
    n = len(match.holders)
    values = [match.per_hand(s) for s in range(n)]
    mine = values[seat]
    return mine - (sum(values) - mine) / (n - 1)
