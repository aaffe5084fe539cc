"""Judging replies and the default choice: what a bot's reply leads to."""

from __future__ import annotations

import pytest

from protocol.decisions import choice_fault, default_choice, spread_stake
from protocol.messages import Choice, Request


def _request(decision: str, **extra: object) -> Request:
    fields: dict[str, object] = {
        "id": 1,
        "legal": [],
        "default": 0,
        "hand": [],
        "hand_sizes": [0, 0, 0],
        "chips": [40, 40, 40],
        "boodle": [0, 0, 0, 0],
        "kitty": 0,
        "time_left_ms": 1000,
        "time_bank_ms": 0,
    }
    fields.update(extra)
    return Request(decision=decision, **fields)  # type: ignore[arg-type]


LEAD = _request("lead", legal=["4C", "2H", "9S"], default="4C", hand=["4C", "5C", "2H", "9S"])
DEAD = _request("dead_hand", legal=["exchange", "keep"], default="keep")
BID = _request("bid", min_bid=0, max_bid=12)
STAKE = _request("stake", stake_total=10, boodle_cards=["AS", "KH", "QC", "JD"], default=[3] * 4)


@pytest.mark.parametrize(
    ("total", "cards", "amounts"),
    [
        (10, 4, [3, 3, 2, 2]),
        (6, 4, [2, 2, 1, 1]),
        (4, 4, [1, 1, 1, 1]),
        (3, 4, [1, 1, 1, 0]),
        (0, 2, [0, 0]),
        (7, 1, [7]),
    ],
)
def test_stakes_spread_evenly_with_the_remainder_on_the_first_cards(
    total: int, cards: int, amounts: list[int]
) -> None:
    assert spread_stake(total, cards) == amounts


def test_defaults_per_decision() -> None:
    assert default_choice("lead", ["4C", "2H"]) == "4C"
    assert default_choice("dead_hand", ["auction", "exchange", "keep"]) == "keep"
    assert default_choice("bid", []) == 0
    assert default_choice("stake", [], stake_total=10, boodle_cards=4) == [3, 3, 2, 2]


def test_a_lead_request_always_has_a_card() -> None:
    with pytest.raises(ValueError):
        default_choice("lead", [])


@pytest.mark.parametrize(
    ("request_", "choice"),
    [
        (LEAD, "4C"),
        (LEAD, "9S"),
        (DEAD, "keep"),
        (DEAD, "exchange"),
        (BID, 0),
        (BID, 12),
        (STAKE, [10, 0, 0, 0]),
        (STAKE, [3, 3, 2, 2]),
    ],
)
def test_legal_choices_pass(request_: Request, choice: Choice) -> None:
    assert choice_fault(request_, choice) is None


@pytest.mark.parametrize(
    ("request_", "choice", "kind", "words"),
    [
        (LEAD, 4, "malformed", "a lead is a card"),
        (LEAD, "10C", "malformed", '"10C"'),
        (LEAD, "4c", "malformed", '"4c"'),
        (LEAD, ["4C"], "malformed", "a lead is a card"),
        (LEAD, "5C", "illegal", "legal: 4C 2H 9S"),
        (LEAD, "AD", "illegal", "may not be led"),
        (DEAD, "swap", "malformed", "auction, buy, exchange, keep"),
        (DEAD, 1, "malformed", "dead-hand choice"),
        (DEAD, "auction", "illegal", "legal: exchange, keep"),
        (BID, "3", "malformed", "whole number"),
        (BID, -1, "malformed", ">= 0"),
        (BID, 13, "illegal", "max_bid 12"),
        (STAKE, 10, "malformed", "list of 4"),
        (STAKE, [5, 5], "malformed", "list of 4"),
        (STAKE, [11, -1, 0, 0], "malformed", ">= 0"),
        (STAKE, [1, 1, 1, 1], "illegal", "exactly 10"),
        (STAKE, [10, 1, 0, 0], "illegal", "got 11"),
    ],
)
def test_bad_choices_are_malformed_or_illegal(
    request_: Request, choice: Choice, kind: str, words: str
) -> None:
    fault = choice_fault(request_, choice)
    assert fault is not None
    assert fault.kind == kind
    assert words in fault.detail


def test_the_default_is_always_a_legal_reply() -> None:
    for request_ in (LEAD, DEAD, BID, STAKE):
        default = default_choice(
            request_.decision,
            request_.legal,
            stake_total=request_.stake_total or 0,
            boodle_cards=len(request_.boodle_cards or ()),
        )
        assert choice_fault(request_, default) is None
