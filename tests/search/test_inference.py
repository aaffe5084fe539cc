"""What leads say about hands: a deal in which a lead was the seat's best choice weighs more."""

from __future__ import annotations

from bots.search.inference import LeadModel
from engine import preset
from engine.cards import Card


def cards(*texts: str) -> tuple[Card, ...]:
    return tuple(Card.parse(text) for text in texts)


def test_a_lead_from_a_long_run_makes_a_deal_with_that_run_likelier() -> None:
    model = LeadModel(preset("boodle"), epsilon=0.3)
    # Seat 1 led 2H first; then seat 2 played 3H and the run stopped.
    leads = [(1, Card.parse("2H"), 0, (0, 0, 0, 0))]
    played = [(1, Card.parse("2H")), (2, Card.parse("3H"))]
    # Deal A: seat 1 holds one other card, so 2H was its best lead (the lower of two).
    # Deal B: seat 1 holds a run of four spades it would rather have led.
    deal_a = ((), cards("7S"), (), ())
    deal_b = ((), cards("9S", "TS", "JS", "QS"), (), ())
    weight_a = model.weight(leads, played, deal_a)
    weight_b = model.weight(leads, played, deal_b)
    assert weight_b == 0.3 / 2  # 2H and 9S were its leads; the policy leads 9S
    assert weight_a == 0.7 + 0.3 / 2 > weight_b
    # No leads seen, or a seat with one suit: nothing to learn.
    assert model.weight([], played, deal_b) == 1.0
    assert model.weight(leads, played, ((), (), (), ())) == 1.0


def test_under_the_change_of_suit_rules_leads_are_not_read() -> None:
    model = LeadModel(preset("newmarket"))
    leads = [(1, Card.parse("2H"), 0, (0, 0, 0, 0))]
    played = [(1, Card.parse("2H"))]
    assert model.weight(leads, played, ((), cards("9S", "TS", "JS", "QS"), (), ())) == 1.0
