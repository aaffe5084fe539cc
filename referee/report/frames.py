"""A match log as the replay viewer's steps: what happened, and the table after it.

The viewer in the browser only draws; every number it shows is computed here,
from the log's omniscient ``event`` lines, so that a Python test can hold the
page's cards and chips against the engine's own state.  A *frame* is one step
of the viewer: the events since the previous frame (a deal, one run up to its
stop, a player going out, a hand's payments, an elimination...) and the table
after them: each seat's cards and chips, the chips on each boodle card, the
kitty and the pot of a blocked hand, and who is still in the match.

Chips follow the engine's bookkeeping exactly: a stake leaves the player's
chips when it is placed and sits on its boodle card (or the kitty) until a
card, the kitty or a hand's end wins it.

Nothing here trusts the log's text: card names that do not parse are shown
as they are (escaped by the page), never interpreted.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from referee.text.render import (
    HAND_BLOCKED,
    bids_revealed,
    boodle_won,
    dead_hand_decided,
    dealt,
    eliminated,
    kitty_won,
    lead_passed,
    match_ending,
    pot_shared,
    stop_reason,
    swapped_for,
    went_out,
)

_SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}

# A frame ends after each of these events: each is a step a person wants to see on its own.
_CLOSING = frozenset(
    {
        "cards_dealt",
        "dead_hand_decided",
        "bids_revealed",
        "hand_swapped",
        "run_stopped",
        "went_out",
        "lead_passed",
        "hand_blocked",
        "hand_ended",
        "player_eliminated",
        "match_ended",
    }
)


def pretty(card: object) -> str:
    """``QH`` as ``Q♥``, ``TS`` as ``10♠``; anything else as it is.

    The report writes every card this way (the suit-symbol form, as
    ``engine.cards.Card.pretty`` and ``newmarket replay`` do); the wire's
    two-letter form appears only inside raw protocol lines.
    """
    text = str(card)
    if len(text) == 2 and text[1] in _SUITS and text[0] in _RANKS:
        rank = "10" if text[0] == "T" else text[0]
        return rank + _SUITS[text[1]]
    return text


_RANKS = "23456789TJQKA"
_CARD_WORD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][CDHS])(?![A-Za-z0-9])")


def pretty_text(text: str) -> str:
    """Every card named in a sentence in the suit-symbol form: ``TC may not be led`` -> ``10♣ ...``.

    For the referee's own words (a fault's detail), which name cards as the
    wire does; a bot's free text (its stderr) is never rewritten.
    """
    return _CARD_WORD.sub(lambda m: pretty(m.group(1)), text)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 fault``, ``2 faults``, ``0 matches`` (``many`` for irregular plurals)."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many or (word + ('es' if word.endswith(('s', 'ch', 'sh', 'x')) else 's'))}"


@dataclasses.dataclass
class Frame:
    """One step of the viewer; ``events`` is how many event lines it has consumed in all."""

    hand: int
    dealer: int  # -1 before the first hand
    kind: str  # the closing event's type (or "start")
    lines: list[str]
    chips: list[int]
    hands: list[list[str]]
    dead: list[str]
    boodle: list[int]
    kitty: int
    pot: int
    status: list[str]  # "in", "out" (eliminated) or "dq" (disqualified)
    played: list[tuple[int, str]]  # (seat, card) this hand, in order
    fresh: list[str]  # the cards played in this step
    events: int

    def to_json(self) -> dict[str, object]:
        return {
            "hand": self.hand,
            "dealer": self.dealer,
            "kind": self.kind,
            "lines": self.lines,
            "chips": self.chips,
            "hands": self.hands,
            "dead": self.dead,
            "boodle": self.boodle,
            "kitty": self.kitty,
            "pot": self.pot,
            "status": self.status,
            "played": [[seat, card] for seat, card in self.played],
            "fresh": self.fresh,
            "events": self.events,
        }


class _Table:
    """The running state of the table, event by event."""

    def __init__(
        self,
        names: Sequence[str],
        start_chips: Sequence[int],
        boodle_cards: Sequence[str],
        hand: int = 0,
    ) -> None:
        players = len(names)
        self.names = list(names)
        self.boodle_cards = list(boodle_cards)
        self.chips = list(start_chips)
        self.hands: list[list[str]] = [[] for _ in range(players)]
        self.dead: list[str] = []
        self.boodle = [0] * len(boodle_cards)
        self.kitty = 0
        self.pot = 0
        self.status = ["in"] * players
        self.played: list[tuple[int, str]] = []
        self.hand = hand  # 0 until a hand starts (or as told: a transcript starts mid-hand)
        self.dealer = -1
        # The frame being gathered.
        self.lines: list[str] = []
        self.fresh: list[str] = []
        self.run: list[str] = []  # "seat leads 5♥", "seat 6♥ 7♥": the run being played
        self.run_seat = -1
        self.payments: list[str] = []
        self.stakes: list[str] = []

    def name(self, seat: object) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        return f"seat {seat}"

    def flush_text(self) -> None:
        if self.stakes:
            self.lines.append("stakes: " + ", ".join(self.stakes))
            self.stakes = []
        if self.run:
            self.lines.append(" · ".join(self.run))
            self.run = []
            self.run_seat = -1
        if self.payments:
            self.lines.append("chips paid: " + ", ".join(self.payments))
            self.payments = []

    def frame(self, kind: str, events: int) -> Frame:
        self.flush_text()
        frame = Frame(
            hand=self.hand,
            dealer=self.dealer,
            kind=kind,
            lines=self.lines,
            chips=list(self.chips),
            hands=[list(hand) for hand in self.hands],
            dead=list(self.dead),
            boodle=list(self.boodle),
            kitty=self.kitty,
            pot=self.pot,
            status=list(self.status),
            played=list(self.played),
            fresh=self.fresh,
            events=events,
        )
        self.lines = []
        self.fresh = []
        return frame

    def event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        # A run's own events (and the stop or going out that ends it) join the run's line,
        # and a hand's stakes are told together.
        if kind not in ("card_played", "boodle_won", "run_stopped", "went_out", "stake_placed"):
            self.flush_text()
        handler = getattr(self, f"on_{kind}", None)
        if handler is None:
            self.lines.append(f"(an event this viewer does not know: {kind})")
        else:
            handler(event)

    # ------------------------------------------------------------------ events

    def on_hand_started(self, e: Mapping[str, Any]) -> None:
        self.hand = int(e["hand"])
        self.dealer = int(e["dealer"])
        self.played = []
        self.hands = [[] for _ in self.hands]
        self.dead = []
        self.lines.append(f"Hand {self.hand}: {self.name(self.dealer)} deals")

    def on_player_eliminated(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        given = []
        for receiver, chips in e["shares"]:
            self.chips[int(receiver)] += int(chips)
            given.append(f"{self.name(receiver)} +{chips}")
        self.chips[seat] = 0
        self.status[seat] = "out"
        tail = f"; their {e['chips']} chips are shared: {', '.join(given)}" if given else ""
        self.lines.append(eliminated(self.name(seat), tail))

    def on_stake_placed(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        amounts = [int(a) for a in e["amounts"]]
        kitty = int(e["kitty"])
        for index, amount in enumerate(amounts):
            if index < len(self.boodle):
                self.boodle[index] += amount
        self.kitty += kitty
        self.chips[seat] -= sum(amounts) + kitty
        self.stakes.append(f"{self.name(seat)} {sum(amounts) + kitty}")

    def on_cards_dealt(self, e: Mapping[str, Any]) -> None:
        self.hands = [list(hand or []) for hand in e["hands"]]
        self.dead = list(e.get("dead_hand") or [])
        sizes = ((self.name(seat), size) for seat, size in enumerate(e["hand_sizes"]))
        self.lines.append(dealt(sizes, e["dead_hand_size"]))

    def on_dead_hand_decided(self, e: Mapping[str, Any]) -> None:
        self.lines.append(dead_hand_decided(self.name(e["dealer"]), str(e["choice"])))

    def on_bids_revealed(self, e: Mapping[str, Any]) -> None:
        self.lines.append(bids_revealed((self.name(seat), chips) for seat, chips in e["bids"]))

    def on_hand_swapped(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        price = int(e["price"])
        old = self.hands[seat]
        self.hands[seat] = list(e["hand"] or [])
        self.dead = old
        if price:
            self.chips[seat] -= price
            paid_to = e.get("paid_to")
            if paid_to is None:
                self.kitty += price
                to = "the kitty"
            else:
                self.chips[int(paid_to)] += price
                to = self.name(paid_to)
            self.lines.append(swapped_for(self.name(seat), price, to))
        else:
            self.lines.append(f"{self.name(seat)} takes the dead hand")

    def on_card_played(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        card = str(e["card"])
        if card in self.hands[seat]:
            self.hands[seat].remove(card)
        self.played.append((seat, card))
        self.fresh.append(card)
        if e.get("lead") or not self.run:
            self.flush_text()
            self.run = [f"{self.name(seat)} leads {pretty(card)}"]
        elif seat == self.run_seat:
            self.run[-1] += f" {pretty(card)}"
        else:
            self.run.append(f"{self.name(seat)} {pretty(card)}")
        self.run_seat = seat

    def on_boodle_won(self, e: Mapping[str, Any]) -> None:
        seat = int(e["seat"])
        card = str(e["card"])
        chips = int(e["chips"])
        if card in self.boodle_cards:
            self.boodle[self.boodle_cards.index(card)] = 0
        self.chips[seat] += chips
        self.run.append(boodle_won(self.name(seat), pretty(card), chips))
        self.run_seat = -1  # the run's next card starts its own part, named, after this one

    def on_run_stopped(self, e: Mapping[str, Any]) -> None:
        card, missing = pretty(e["card"]), pretty(e.get("missing") or "?")
        reason = stop_reason(str(e["cause"]), card, missing, spelled_out=True)
        self.run.append(f"stop: {reason}")

    def on_lead_passed(self, e: Mapping[str, Any]) -> None:
        self.lines.append(lead_passed(self.name(e["from_seat"]), self.name(e["to_seat"])))

    def on_hand_blocked(self, e: Mapping[str, Any]) -> None:
        self.lines.append(HAND_BLOCKED)

    def on_went_out(self, e: Mapping[str, Any]) -> None:
        self.run.append(went_out(self.name(e["seat"])))

    def on_chips_paid(self, e: Mapping[str, Any]) -> None:
        payer = int(e["payer"])
        chips = int(e["chips"])
        payee = e.get("payee")
        self.chips[payer] -= chips
        if payee is None:
            self.pot += chips
            to = "the pot"
        else:
            self.chips[int(payee)] += chips
            to = self.name(payee)
        short = f" (of {e['owed']} owed)" if chips < int(e["owed"]) else ""
        self.payments.append(f"{self.name(payer)} → {to} {chips}{short}")

    def on_pot_shared(self, e: Mapping[str, Any]) -> None:
        chips = int(e["chips"])
        self.pot -= chips
        self.chips[int(e["seat"])] += chips
        self.lines.append(pot_shared(self.name(e["seat"]), chips))

    def on_kitty_won(self, e: Mapping[str, Any]) -> None:
        chips = int(e["chips"])
        self.kitty -= chips
        self.chips[int(e["seat"])] += chips
        self.lines.append(kitty_won(self.name(e["seat"]), chips))

    def on_hand_ended(self, e: Mapping[str, Any]) -> None:
        self.hands = [list(hand) for hand in e["hands"]]
        self.dead = list(e["dead_hand"])
        winners = [self.name(seat) for seat in e["winners"]]
        which = f"hand {self.hand}" if self.hand > 0 else "the hand"  # its start not seen
        self.lines.append(f"{which} ends" + (f": won by {', '.join(winners)}" if winners else ""))

    def on_match_ended(self, e: Mapping[str, Any]) -> None:
        order = sorted(range(len(e["places"])), key=lambda seat: (e["places"][seat], seat))
        places = ", ".join(f"{e['places'][seat]}. {self.name(seat)}" for seat in order)
        self.lines.append(f"match over ({match_ending(e['reason'])}): {places}")


class Narrator:
    """Events as the viewer's lines, with no table to keep (the fault transcripts' ``#`` lines)."""

    def __init__(self, names: Sequence[str], boodle_cards: Sequence[str], hand: int = 0) -> None:
        self._table = _Table(names, [0] * len(names), boodle_cards, hand)

    def event(self, event: Mapping[str, Any]) -> None:
        try:
            self._table.event(event)
        except (KeyError, TypeError, ValueError, IndexError):
            self._table.lines.append(f"(an event that cannot be read: {event.get('type')})")

    def take(self) -> list[str]:
        """The lines told since the last call."""
        self._table.flush_text()
        lines, self._table.lines = self._table.lines, []
        return lines


def build_frames(
    names: Sequence[str],
    start_chips: Sequence[int],
    boodle_cards: Sequence[str],
    records: Iterable[Mapping[str, Any]],
) -> list[Frame]:
    """The viewer's steps for a log's records (``event`` and ``fault`` lines; others ignored).

    The first frame is the table before anything happened.  A fault is told
    in the step in which it happened, and a disqualification marks the seat
    from that step on.
    """
    table = _Table(names, start_chips, boodle_cards)
    frames = [table.frame("start", 0)]
    frames[0].lines = ["the players sit down"]
    count = 0
    for record in records:
        kind = record.get("type")
        if kind == "fault":
            seat = record.get("seat")
            applied = record.get("applied")
            detail = pretty_text(str(record.get("detail")))
            text = f"fault: {table.name(seat)}: {record.get('kind')}: {detail}"
            if applied is not None:
                text += f"; the default {pretty(applied)} is applied"
            if record.get("disqualified"):
                text += "; disqualified"
                if isinstance(seat, int) and 0 <= seat < len(table.status):
                    table.status[seat] = "dq"
            table.flush_text()
            table.lines.append(text)
        elif kind == "event":
            event = record.get("event")
            if not isinstance(event, Mapping):
                continue
            table.event(event)
            count += 1
            if event.get("type") in _CLOSING:
                frames.append(table.frame(str(event.get("type")), count))
    if table.lines or table.run or table.payments or table.stakes:
        frames.append(table.frame("end", count))
    return frames
