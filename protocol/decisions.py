"""Judging a reply against its request, and the default choice, from the request alone.

Every fact needed to tell whether a reply is acceptable travels in the
``request`` itself (``legal`` for leads and dead-hand choices, the bid range,
the stake total and card count).  So the referee can judge a reply here, in
the protocol layer, before it ever builds an engine action, and a bot author
can read the same rules in SPEC.md ("Decisions") without knowing the engine.

The split between the two fault kinds follows the engine's two error
families: a choice of the wrong JSON shape for its decision (a number for a
lead, ``"10H"``, a negative bid, three amounts for four boodle cards) is
``malformed``; a well-shaped choice the rules forbid (a card not in
``legal``, a bid above ``max_bid``, stakes not summing to ``stake_total``) is
``illegal``.  Either way the referee applies ``default_choice``.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec

from protocol.messages import Choice, DecisionKind, Request

DEAD_HAND_CHOICES: Final = ("auction", "buy", "exchange", "keep")
"""Every dead-hand choice word; ``legal`` lists those allowed now, in this order."""

CARD_PATTERN: Final = re.compile(r"[2-9TJQKA][CDHS]")


class ChoiceFault(msgspec.Struct, frozen=True):
    """Why a reply's choice was refused: ``kind`` is ``malformed`` or ``illegal``."""

    kind: Literal["malformed", "illegal"]
    detail: str


def spread_stake(total: int, cards: int) -> list[int]:
    """``total`` chips spread as evenly as possible, one more on each of the first cards.

    >>> spread_stake(10, 4)
    [3, 3, 2, 2]
    """
    if cards < 1 or total < 0:
        raise ValueError(f"cannot spread {total} chips over {cards} cards")
    base, extra = divmod(total, cards)
    return [base + 1 if i < extra else base for i in range(cards)]


def default_choice(
    decision: DecisionKind,
    legal: list[str],
    *,
    stake_total: int = 0,
    boodle_cards: int = 0,
) -> Choice:
    """The choice the referee applies when a request faults (SPEC.md, "Defaults").

    lead: the first card of ``legal``; dead_hand: ``keep``; bid: 0; stake:
    ``spread_stake(stake_total, boodle_cards)``.
    """
    if decision == "lead":
        if not legal:
            raise ValueError("a lead request always has at least one legal card")
        return legal[0]
    if decision == "dead_hand":
        return "keep"
    if decision == "bid":
        return 0
    return spread_stake(stake_total, boodle_cards)


def choice_fault(request: Request, choice: Choice) -> ChoiceFault | None:
    """None if ``choice`` answers ``request`` legally, else the fault and a one-line detail."""
    decision = request.decision
    if decision == "lead":
        if not isinstance(choice, str) or not CARD_PATTERN.fullmatch(choice):
            return _malformed(
                f'a lead is a card such as "TH" (rank 2-9 T J Q K A, suit C D H S), '
                f"got {_show(choice)}"
            )
        if choice not in request.legal:
            return ChoiceFault(
                "illegal", f"{choice} may not be led now (legal: {' '.join(request.legal)})"
            )
        return None
    if decision == "dead_hand":
        if not isinstance(choice, str) or choice not in DEAD_HAND_CHOICES:
            return _malformed(
                f"a dead-hand choice is one of {', '.join(DEAD_HAND_CHOICES)}, got {_show(choice)}"
            )
        if choice not in request.legal:
            return ChoiceFault(
                "illegal", f"{choice} is not allowed now (legal: {', '.join(request.legal)})"
            )
        return None
    if decision == "bid":
        if not isinstance(choice, int) or choice < 0:
            return _malformed(f"a bid is a whole number of chips >= 0, got {_show(choice)}")
        top = request.max_bid or 0
        if choice > top:
            return ChoiceFault("illegal", f"a bid of {choice} is more than max_bid {top}")
        return None
    cards = len(request.boodle_cards or ())
    if (
        not isinstance(choice, list)
        or len(choice) != cards
        or not all(isinstance(amount, int) and amount >= 0 for amount in choice)
    ):
        return _malformed(
            f"stakes are a list of {cards} whole numbers >= 0, one per boodle card, "
            f"got {_show(choice)}"
        )
    total = request.stake_total or 0
    if sum(choice) != total:
        return ChoiceFault("illegal", f"stakes must total exactly {total} chips, got {sum(choice)}")
    return None


def _malformed(detail: str) -> ChoiceFault:
    return ChoiceFault("malformed", detail)


def _show(choice: object) -> str:
    text = msgspec.json.encode(choice).decode()
    return text if len(text) <= 40 else text[:37] + "..."
