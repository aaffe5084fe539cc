"""Chips that flowed between two participants, against what their scores predict.

Newmarket seats four or more at a table in most presets, and three here at
least: two accounts of one person, or two people who agree, can feed each
other chips (one keeps its cards so that it pays the other when the other
goes out, leads into the other's runs, sells it the dead hand).  Every chip
that moves between two players is an event of the match log: ``chips_paid``
(payer to the one who went out) and ``hand_swapped`` (the buyer of the dead
hand to the dealer who sold it).  So for each pair of participants who shared
tables the net flow between them is known exactly.

What their scores predict: a seat of strength *s* (fitted chips per hand
above the average, ``referee.server.scoring``) wins *s* a hand more than the
average, and if it took that evenly from the *n* - 1 others, the net flow
from seat *a* to seat *b* would be ``hands * (s_b - s_a) / n`` (summed over
*b* it gives *a*'s own ``s_a - mean``).  Most chips are won from the boodle and
the kitty, not from a rival, so only a share of that flows between the two: the
share is measured over every pair of every match (a least-squares slope), and
the prediction is that slope times the gap.  The cards' own share is taken out
as bridge scoring does: a deal played at every seating of a duplicate group
compares each pair of seats with the same seats at the deal's other seatings,
where others held those cards.  The residual (observed minus
predicted) of every pair at every shared match is a number centred on 0 for
honest players; its spread is pooled over every pair of every match (most of
them honest), and a pair's **z** is its residuals' sum over the shared
matches divided by that spread times the square root of their count.  A pair
at ``|z|`` beyond the threshold with enough shared matches is listed for the
organiser, with its matches: it is evidence to look at, not a verdict.

Pure: the caller reads the logs and the scores (``referee.server.collusion``).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["PairFlow", "TableFlows", "flows_from_events", "pair_flows"]


@dataclasses.dataclass(frozen=True)
class TableFlows:
    """One match: who sat where, their predicted strength, and the chips between seats."""

    match_id: str
    holders: tuple[int, ...]  # the participant at each seat
    strengths: tuple[float, ...]  # each seat's score, chips per hand (0 if unknown)
    hands: int
    paid: Mapping[tuple[int, int], int]  # (payer seat, payee seat) -> chips
    deal: Hashable | None = None  # the same for the seatings of one deal (a duplicate group)


@dataclasses.dataclass(frozen=True)
class PairFlow:
    """Two participants who shared tables: chips from ``giver`` to ``taker`` beyond prediction."""

    giver: int
    taker: int
    matches: tuple[str, ...]
    flow: int  # net chips from giver to taker, observed
    expected: float  # what their scores and their cards predict
    z: float  # (flow - expected) in pooled standard errors; >= 0 (giver gave more)

    def as_json(self) -> dict[str, Any]:
        return {
            "giver": self.giver,
            "taker": self.taker,
            "matches": list(self.matches),
            "flow": self.flow,
            "expected": round(self.expected, 1),
            "z": round(self.z, 2),
        }


def flows_from_events(events: Iterable[Mapping[str, Any]]) -> dict[tuple[int, int], int]:
    """The chips each seat paid each other seat in a match, from its logged events."""
    paid: dict[tuple[int, int], int] = defaultdict(int)
    for event in events:
        kind = event.get("type")
        if kind == "chips_paid" and event.get("payee") is not None:
            payer, payee = int(event["payer"]), int(event["payee"])
            if payer != payee:
                paid[payer, payee] += int(event["chips"])
        elif kind == "hand_swapped" and event.get("paid_to") is not None:
            buyer, seller = int(event["seat"]), int(event["paid_to"])
            if buyer != seller:
                paid[buyer, seller] += int(event["price"])
    return dict(paid)


def _seat_pairs(table: TableFlows) -> dict[tuple[int, int], tuple[float, float]]:
    """For each seat pair (i < j): the net chips i paid j, and the strength gap's predictor."""
    n = len(table.holders)
    found = {}
    for i in range(n):
        for j in range(i + 1, n):
            net = table.paid.get((i, j), 0) - table.paid.get((j, i), 0)
            gap = table.hands * (table.strengths[j] - table.strengths[i]) / n
            found[i, j] = (float(net), gap)
    return found


def _duplicate_points(
    tables: Sequence[TableFlows],
) -> list[tuple[TableFlows, dict[tuple[int, int], tuple[float, float]]]]:
    """Each table's seat pairs with the cards' share taken out: a deal played at several
    seatings (a duplicate group) compares each seat pair with the same seats' flow at the
    deal's other seatings, where other players held those cards (bridge scoring).  A deal
    played once keeps its raw flows."""
    by_deal: dict[Hashable, list[TableFlows]] = defaultdict(list)
    for table in tables:
        by_deal[table.deal if table.deal is not None else table.match_id].append(table)
    points = []
    for same in by_deal.values():
        raw = [_seat_pairs(table) for table in same]
        for index, table in enumerate(same):
            others = [pairs for k, pairs in enumerate(raw) if k != index]
            adjusted = {}
            for seats, (net, gap) in raw[index].items():
                if others:
                    net -= sum(pairs[seats][0] for pairs in others) / len(others)
                    gap -= sum(pairs[seats][1] for pairs in others) / len(others)
                adjusted[seats] = (net, gap)
            points.append((table, adjusted))
    return points


def pair_flows(tables: Sequence[TableFlows]) -> list[PairFlow]:
    """Every pair of participants who shared a table, the larger ``z`` first."""
    # (low participant, high participant) -> per shared match: (flow low->high, predictor)
    seen: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    observed: dict[tuple[int, int], int] = defaultdict(int)
    matches: dict[tuple[int, int], list[str]] = defaultdict(list)
    for table, adjusted in _duplicate_points(tables):
        for (i, j), (net, gap) in adjusted.items():
            a, b = table.holders[i], table.holders[j]
            if a == b:
                continue  # one participant twice: the scheduler never seats it so
            sign = 1 if a < b else -1
            pair = (min(a, b), max(a, b))
            seen[pair].append((sign * net, sign * gap))
            raw = table.paid.get((i, j), 0) - table.paid.get((j, i), 0)
            observed[pair] += sign * raw
            matches[pair].append(table.match_id)
    every = [point for points in seen.values() for point in points]
    if not every:
        return []
    # Most of a score is won from the boodle and the kitty, not from one rival: how much
    # of a strength gap flows between the two is measured, over every pair (least squares).
    across = sum(gap * gap for _net, gap in every)
    slope = sum(net * gap for net, gap in every) / across if across else 0.0
    spread = math.sqrt(sum((net - slope * gap) ** 2 for net, gap in every) / len(every)) or 1.0
    found = []
    for pair, points in seen.items():
        excess = sum(net - slope * gap for net, gap in points)
        z = excess / (spread * math.sqrt(len(points)))
        low, high = pair
        giver, taker, sign = (low, high, 1) if z >= 0 else (high, low, -1)
        found.append(
            PairFlow(
                giver,
                taker,
                tuple(matches[pair]),
                sign * observed[pair],
                sign * (observed[pair] - excess),
                abs(z),
            )
        )
    return sorted(found, key=lambda flow: (-flow.z, flow.giver, flow.taker))


def suspicious(flows: Iterable[PairFlow], z: float, min_matches: int) -> list[PairFlow]:
    """The pairs beyond ``z`` with at least ``min_matches`` shared matches."""
    return [flow for flow in flows if flow.z >= z and len(flow.matches) >= min_matches]
