"""Typed engine events as lines for people, hand by hand.

    Hand 3 — dealer: seat 1
      seat 2 leads 5♥ · seat 0 6♥ 7♥ · stop (8♥ dead)

This is a pure function of a list of events and the seats' names: it does not
know whether the events came from a live ``Match``, a saved log or a bot's
view, so ``newmarket demo`` and a later ``newmarket replay`` print the same
way.  A viewer's events hide other hands (``None`` in ``CardsDealt``); those
lines are simply left out.  Runs are gathered into one line, because a run is
one decision followed by forced plays; what a card won (a boodle stack) is
told on the line after its run so the run stays readable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from engine.cards import Card
from engine.events import (
    BidsRevealed,
    BoodleWon,
    CardPlayed,
    CardsDealt,
    ChipsPaid,
    DeadHandDecided,
    Event,
    HandBlocked,
    HandEnded,
    HandStarted,
    HandSwapped,
    KittyWon,
    LeadPassed,
    MatchEnded,
    PlayerEliminated,
    PotShared,
    RunStopped,
    StakePlaced,
    WentOut,
)

INDENT = "  "

# The wording of each moment of a hand, for the terminal (``newmarket demo`` and ``replay``)
# and the report's replay viewer (``referee.report.frames``) alike: one home per sentence.
# A stop's cause has a short form for the replay's one-line runs and a spelled-out one for
# the viewer's steps.
_STOP_REASONS = {
    "top": "{card} is the top card",
    "dead": "{missing} dead",
    "played": "{missing} already played",
}
_STOP_REASONS_SPELLED_OUT = {
    "top": "{card} is the top card",
    "dead": "{missing} is in the dead hand",
    "played": "{missing} was played earlier",
}

_DEAD_HAND_CHOICES = {
    "keep": "keeps the hand dealt",
    "exchange": "exchanges the hand, unseen, for the dead hand",
    "auction": "auctions the dead hand",
    "buy": "buys the dead hand",
}

HAND_BLOCKED = "nobody can lead another suit: the hand is blocked"


def stop_reason(cause: str, card: str, missing: str, *, spelled_out: bool = False) -> str:
    """Why a run stopped (``5♥ dead``); a cause this version does not know as it came."""
    reasons = _STOP_REASONS_SPELLED_OUT if spelled_out else _STOP_REASONS
    return reasons.get(cause, cause).format(card=card, missing=missing)


def dealt(sizes: Iterable[tuple[str, int]], dead_size: object) -> str:
    """``deal: alice 13, bob 13; dead hand 13``, the seats dealt no card left out."""
    sized = ", ".join(f"{name} {size}" for name, size in sizes if size)
    return f"deal: {sized}; dead hand {dead_size}"


def dead_hand_decided(dealer: str, choice: str) -> str:
    return f"{dealer} (dealer) {_DEAD_HAND_CHOICES.get(choice, choice)}"


def bids_revealed(bids: Iterable[tuple[str, object]]) -> str:
    return "bids: " + ", ".join(f"{name} {chips}" for name, chips in bids)


def swapped_for(seat: str, price: object, paid_to: str) -> str:
    return f"{seat} takes the dead hand for {price} chips, paid to {paid_to}"


def boodle_won(seat: str, card: str, chips: object) -> str:
    return f"{seat} wins the {card} boodle: {chips} chips"


def went_out(seat: str) -> str:
    return f"{seat} is out of cards and wins the hand"


def lead_passed(from_seat: str, to_seat: str) -> str:
    return f"{from_seat} holds no other suit: the lead passes to {to_seat}"


def pot_shared(seat: str, chips: object) -> str:
    return f"{seat} takes {chips} from the pot"


def kitty_won(seat: str, chips: object) -> str:
    return f"{seat} takes the kitty: {chips} chips"


def eliminated(seat: str, shares: str) -> str:
    """``shares`` is who got the seat's chips, told after a ``;`` (or empty)."""
    return f"{seat} cannot pay the stake and is out{shares}"


# Why a match ended, in words: the one wording of every place that tells a person
# (``newmarket match`` and ``replay``, the demo, the report's pages, the server's).
_MATCH_END_REASONS = {
    "players_left": "too few players left",
    "hand_limit": "the hand limit was reached",
}


def match_ending(reason: object) -> str:
    """``match_end.reason`` in words (``players_left``: too few players left); a reason
    this version does not know (SPEC.md 2: the field is open) as it came."""
    return _MATCH_END_REASONS.get(str(reason), str(reason))


def seat_names(players: int) -> list[str]:
    """The default names: ``seat 0`` .. ``seat n-1``."""
    return [f"seat {seat}" for seat in range(players)]


def cards(hand: Sequence[Card]) -> str:
    """``5♥ 6♥ 10♠``; an empty hand is ``—``."""
    return " ".join(card.pretty for card in hand) if hand else "—"


def render(
    events: Sequence[Event], names: Sequence[str], boodle_cards: Sequence[Card] = ()
) -> list[str]:
    """The events as lines: a heading per hand, then indented lines of what happened.

    ``boodle_cards`` (in the order of ``Rules.boodle_cards``) lets stakes be told
    per card; without it only their totals are.
    """
    return _Renderer(names, boodle_cards).render(events)


def render_text(
    events: Sequence[Event], names: Sequence[str], boodle_cards: Sequence[Card] = ()
) -> str:
    return "\n".join(render(events, names, boodle_cards))


class _Renderer:
    def __init__(self, names: Sequence[str], boodle_cards: Sequence[Card]) -> None:
        self.names = names
        self.boodle_cards = tuple(boodle_cards)
        self.lines: list[str] = []
        self.run: list[tuple[int, list[Card]]] = []  # (seat, cards) of the run being played
        self.after_run: list[str] = []  # boodle captures, told after their run
        self.payments: list[ChipsPaid] = []
        self.stakes: list[StakePlaced] = []
        self.dealer = -1
        self.blocked = False  # the hand being told was blocked
        self.dead_shown = False  # the dead hand was shown at the deal

    def name(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def say(self, text: str) -> None:
        self.lines.append(INDENT + text)

    def render(self, events: Sequence[Event]) -> list[str]:
        for event in events:
            self.event(event)
        self.flush_run("")
        self.flush_stakes()
        self.flush_payments()
        return self.lines

    # -- grouped events ---------------------------------------------------------------

    def flush_run(self, ending: str) -> None:
        if not self.run:
            return
        parts = []
        for index, (seat, played) in enumerate(self.run):
            verb = " leads " if index == 0 else " "
            parts.append(self.name(seat) + verb + cards(played))
        if ending:
            parts.append(ending)
        self.say(" · ".join(parts))
        self.run = []
        for line in self.after_run:
            self.say(line)
        self.after_run = []

    def flush_stakes(self) -> None:
        if not self.stakes:
            return
        totals = [0] * len(self.stakes[0].amounts)
        for stake in self.stakes:
            for index, amount in enumerate(stake.amounts):
                totals[index] += amount
        kitty = sum(stake.kitty for stake in self.stakes)
        who = ", ".join(
            f"{self.name(s.seat)} {sum(s.amounts) + s.kitty}"
            + (" (dealer)" if s.seat == self.dealer else "")
            for s in self.stakes
        )
        self.say(f"stakes: {who}")
        if len(self.boodle_cards) == len(totals):
            spread = " · ".join(
                f"{card.pretty} +{total}"
                for card, total in zip(self.boodle_cards, totals, strict=True)
            )
            self.say(f"on the boodle: {spread}" + (f" · kitty +{kitty}" if kitty else ""))
        elif kitty:
            self.say(f"kitty +{kitty}")
        self.stakes = []

    def flush_payments(self) -> None:
        if not self.payments:
            return
        payees = {p.payee for p in self.payments}
        parts = []
        for pay in self.payments:
            short = f" of {pay.owed} owed" if pay.chips < pay.owed else ""
            parts.append(f"{self.name(pay.payer)} {pay.chips}{short}")
        if len(payees) == 1 and None not in payees:
            (payee,) = payees
            assert payee is not None
            self.say(f"{self.name(payee)} collects: " + ", ".join(parts))
        else:
            self.say("into the pot: " + ", ".join(parts))
        self.payments = []

    # -- one event --------------------------------------------------------------------

    def event(self, event: Event) -> None:
        in_run = isinstance(event, CardPlayed | BoodleWon | RunStopped | WentOut)
        if not in_run or (isinstance(event, CardPlayed) and event.lead):
            self.flush_run("")
        if not isinstance(event, StakePlaced):
            self.flush_stakes()
        if not isinstance(event, ChipsPaid):
            self.flush_payments()
        tell = _TELL.get(type(event))
        if tell is not None:
            tell(self, event)

    # -- each kind of event, told (``_TELL`` maps the kinds to these) ------------------

    def tell_hand_started(self, event: HandStarted) -> None:
        self.dealer = event.dealer
        if self.lines:
            self.lines.append("")
        self.lines.append(f"Hand {event.hand} — dealer: {self.name(event.dealer)}")

    def tell_player_eliminated(self, event: PlayerEliminated) -> None:
        given = ", ".join(f"{self.name(s)} +{c}" for s, c in event.shares)
        tail = f"; {event.chips} chips shared: {given}" if given else ""
        self.lines.append(eliminated(self.name(event.seat), tail))

    def tell_stake_placed(self, event: StakePlaced) -> None:
        self.stakes.append(event)

    def tell_cards_dealt(self, event: CardsDealt) -> None:
        sizes = ((self.name(s), n) for s, n in enumerate(event.hand_sizes))
        self.say(dealt(sizes, event.dead_hand_size))
        for seat, hand in enumerate(event.hands):
            if hand is not None and hand:
                self.say(f"{INDENT}{self.name(seat)}: {cards(hand)}")
        dead = event.dead_hand
        if dead is not None and dead:
            self.say(f"{INDENT}dead hand: {cards(dead)}")
            self.dead_shown = True

    def tell_dead_hand_decided(self, event: DeadHandDecided) -> None:
        self.say(dead_hand_decided(self.name(event.dealer), event.choice))

    def tell_bids_revealed(self, event: BidsRevealed) -> None:
        self.say(bids_revealed((self.name(s), c) for s, c in event.bids))

    def tell_hand_swapped(self, event: HandSwapped) -> None:
        seat = event.seat
        if event.price:  # a free exchange is already told by the dealer's decision
            to = self.name(event.paid_to) if event.paid_to is not None else "the kitty"
            self.say(swapped_for(self.name(seat), event.price, to))
        if event.hand is not None:
            self.say(f"{INDENT}{self.name(seat)} now holds: {cards(event.hand)}")

    def tell_card_played(self, event: CardPlayed) -> None:
        if self.run and self.run[-1][0] == event.seat:
            self.run[-1][1].append(event.card)
        else:
            self.run.append((event.seat, [event.card]))

    def tell_boodle_won(self, event: BoodleWon) -> None:
        self.after_run.append(boodle_won(self.name(event.seat), event.card.pretty, event.chips))

    def tell_run_stopped(self, event: RunStopped) -> None:
        missing = event.missing
        reason = stop_reason(event.cause, event.card.pretty, missing.pretty if missing else "?")
        self.flush_run(f"stop ({reason})")

    def tell_went_out(self, event: WentOut) -> None:
        self.flush_run(went_out(self.name(event.seat)))

    def tell_lead_passed(self, event: LeadPassed) -> None:
        self.say(lead_passed(self.name(event.from_seat), self.name(event.to_seat)))

    def tell_hand_blocked(self, event: HandBlocked) -> None:
        self.blocked = True
        self.say(HAND_BLOCKED)

    def tell_chips_paid(self, event: ChipsPaid) -> None:
        self.payments.append(event)

    def tell_pot_shared(self, event: PotShared) -> None:
        self.say(pot_shared(self.name(event.seat), event.chips))

    def tell_kitty_won(self, event: KittyWon) -> None:
        self.say(kitty_won(self.name(event.seat), event.chips))

    def tell_hand_ended(self, event: HandEnded) -> None:
        left = [f"{self.name(s)} {cards(h)}" for s, h in enumerate(event.hands) if h]
        if left:
            self.say("left in hand: " + " · ".join(left))
        if event.dead_hand and not self.dead_shown:
            self.say(f"dead hand: {cards(event.dead_hand)}")
        if self.blocked:
            winners = event.winners
            if winners:
                who = ", ".join(self.name(s) for s in winners)
                self.say(f"fewest cards: {who} {'wins' if len(winners) == 1 else 'win'}")
            else:
                self.say("nobody pays; the stakes stay on the boodle cards")
        self.blocked = False
        self.dead_shown = False

    def tell_match_ended(self, event: MatchEnded) -> None:
        places, chips = event.places, event.chips
        self.lines.append("")
        self.lines.append(f"Match over ({match_ending(event.reason)}). Final places:")
        order = sorted(range(len(places)), key=lambda seat: (places[seat], seat))
        for seat in order:
            self.say(f"{places[seat]}. {self.name(seat)} — {chips[seat]} chips")


# Each kind of event and the method that tells it: one line per kind to find.
_TELL: dict[type, Callable[[_Renderer, Any], None]] = {
    HandStarted: _Renderer.tell_hand_started,
    PlayerEliminated: _Renderer.tell_player_eliminated,
    StakePlaced: _Renderer.tell_stake_placed,
    CardsDealt: _Renderer.tell_cards_dealt,
    DeadHandDecided: _Renderer.tell_dead_hand_decided,
    BidsRevealed: _Renderer.tell_bids_revealed,
    HandSwapped: _Renderer.tell_hand_swapped,
    CardPlayed: _Renderer.tell_card_played,
    BoodleWon: _Renderer.tell_boodle_won,
    RunStopped: _Renderer.tell_run_stopped,
    WentOut: _Renderer.tell_went_out,
    LeadPassed: _Renderer.tell_lead_passed,
    HandBlocked: _Renderer.tell_hand_blocked,
    ChipsPaid: _Renderer.tell_chips_paid,
    PotShared: _Renderer.tell_pot_shared,
    KittyWon: _Renderer.tell_kitty_won,
    HandEnded: _Renderer.tell_hand_ended,
    MatchEnded: _Renderer.tell_match_ended,
}
