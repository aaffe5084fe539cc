"""Cards: the one canonical text form, and rank order (aces high or low)."""

from __future__ import annotations

import pytest

from engine import (
    CARDS,
    Card,
    MalformedCardError,
    Rank,
    RankOrder,
    Suit,
    card_of,
    cards_text,
    parse_cards,
)

ALL_TEXTS = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


def test_there_are_52_distinct_cards() -> None:
    assert len(CARDS) == 52
    assert len({str(c) for c in CARDS}) == 52
    assert sorted(str(c) for c in CARDS) == sorted(ALL_TEXTS)


@pytest.mark.parametrize("text", ALL_TEXTS)
def test_parse_and_str_round_trip(text: str) -> None:
    parsed = Card.parse(text)
    assert str(parsed) == text
    assert Card.parse(str(parsed)) == parsed
    assert parsed.rank == Rank("23456789TJQKA".index(text[0]))
    assert parsed.suit == Suit("CDHS".index(text[1]))
    assert card_of(parsed.rank, parsed.suit) == parsed


@pytest.mark.parametrize(
    "text",
    ["10H", "th", "Th", "tH", "", "1S", "H", "T", "2X", "ZZ", "AS ", " AS", "AS,", "2HH", "♥Q"],
)
def test_parse_rejects_every_other_spelling(text: str) -> None:
    with pytest.raises(MalformedCardError):
        Card.parse(text)


def test_parse_rejects_non_text() -> None:
    with pytest.raises(MalformedCardError):
        Card.parse(12)  # type: ignore[arg-type]


def test_known_cards_by_name() -> None:
    assert (Card.parse("TH").rank, Card.parse("TH").suit) == (Rank.TEN, Suit.HEARTS)
    assert (Card.parse("AS").rank, Card.parse("AS").suit) == (Rank.ACE, Suit.SPADES)
    assert (Card.parse("2C").rank, Card.parse("2C").suit) == (Rank.TWO, Suit.CLUBS)
    assert (Card.parse("QD").rank, Card.parse("QD").suit) == (Rank.QUEEN, Suit.DIAMONDS)
    assert Card.parse("TS").pretty == "10♠"
    assert Card.parse("QH").pretty == "Q♥"
    assert repr(Card.parse("JD")) == "Card('JD')"


def test_parse_cards_and_cards_text() -> None:
    parsed = parse_cards(["2C", "TH", "AS"])
    assert [str(c) for c in parsed] == ["2C", "TH", "AS"]
    assert cards_text(parsed) == "2C TH AS"
    with pytest.raises(MalformedCardError):
        parse_cards(["2C", "10H"])


def test_suit_parse() -> None:
    assert [Suit.parse(s) for s in "CDHS"] == [Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES]
    for bad in ("", "h", "X", "HH"):
        with pytest.raises(MalformedCardError):
            Suit.parse(bad)


def test_aces_high_order_runs_two_to_ace() -> None:
    order = RankOrder.ACES_HIGH
    ranks = [order.rank_at(p) for p in range(13)]
    assert "".join(str(r) for r in ranks) == "23456789TJQKA"
    assert order.position(Rank.TWO) == 0
    assert order.position(Rank.KING) == 11
    assert order.position(Rank.ACE) == 12


def test_aces_low_order_runs_ace_to_king() -> None:
    order = RankOrder.ACES_LOW
    ranks = [order.rank_at(p) for p in range(13)]
    assert "".join(str(r) for r in ranks) == "A23456789TJQK"
    assert order.position(Rank.ACE) == 0
    assert order.position(Rank.TWO) == 1
    assert order.position(Rank.KING) == 12


@pytest.mark.parametrize("order", list(RankOrder))
def test_position_and_rank_at_are_inverse(order: RankOrder) -> None:
    assert sorted(order.position(r) for r in Rank) == list(range(13))
    for rank in Rank:
        assert order.rank_at(order.position(rank)) is rank


def test_rank_order_text_values() -> None:
    assert RankOrder("aces_high") is RankOrder.ACES_HIGH
    assert RankOrder("aces_low") is RankOrder.ACES_LOW
