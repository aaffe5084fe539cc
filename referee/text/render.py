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

from collections.abc import Iterable, Sequence

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

        match event:
            case HandStarted(hand, dealer):
                self.dealer = dealer
                if self.lines:
                    self.lines.append("")
                self.lines.append(f"Hand {hand} — dealer: {self.name(dealer)}")
            case PlayerEliminated(seat, chips, shares):
                given = ", ".join(f"{self.name(s)} +{c}" for s, c in shares)
                tail = f"; {chips} chips shared: {given}" if given else ""
                self.lines.append(eliminated(self.name(seat), tail))
            case StakePlaced():
                self.stakes.append(event)
            case CardsDealt(sizes, dead_size, hands, dead):
                self.say(dealt(((self.name(s), n) for s, n in enumerate(sizes)), dead_size))
                for seat, hand in enumerate(hands):
                    if hand is not None and hand:
                        self.say(f"{INDENT}{self.name(seat)}: {cards(hand)}")
                if dead is not None and dead:
                    self.say(f"{INDENT}dead hand: {cards(dead)}")
                    self.dead_shown = True
            case DeadHandDecided(dealer, choice):
                self.say(dead_hand_decided(self.name(dealer), choice))
            case BidsRevealed(bids):
                self.say(bids_revealed((self.name(s), c) for s, c in bids))
            case HandSwapped(seat, price, paid_to, hand, _size):
                if price:  # a free exchange is already told by the dealer's decision
                    to = self.name(paid_to) if paid_to is not None else "the kitty"
                    self.say(swapped_for(self.name(seat), price, to))
                if hand is not None:
                    self.say(f"{INDENT}{self.name(seat)} now holds: {cards(hand)}")
            case CardPlayed(seat, card, _lead):
                if self.run and self.run[-1][0] == seat:
                    self.run[-1][1].append(card)
                else:
                    self.run.append((seat, [card]))
            case BoodleWon(seat, card, chips):
                self.after_run.append(boodle_won(self.name(seat), card.pretty, chips))
            case RunStopped(card, cause, missing):
                reason = stop_reason(cause, card.pretty, missing.pretty if missing else "?")
                self.flush_run(f"stop ({reason})")
            case WentOut(seat):
                self.flush_run(went_out(self.name(seat)))
            case LeadPassed(from_seat, to_seat):
                self.say(lead_passed(self.name(from_seat), self.name(to_seat)))
            case HandBlocked():
                self.blocked = True
                self.say(HAND_BLOCKED)
            case ChipsPaid():
                self.payments.append(event)
            case PotShared(seat, chips):
                self.say(pot_shared(self.name(seat), chips))
            case KittyWon(seat, chips):
                self.say(kitty_won(self.name(seat), chips))
            case HandEnded(hands, dead, winners):
                left = [f"{self.name(s)} {cards(h)}" for s, h in enumerate(hands) if h]
                if left:
                    self.say("left in hand: " + " · ".join(left))
                if dead and not self.dead_shown:
                    self.say(f"dead hand: {cards(dead)}")
                if self.blocked:
                    if winners:
                        who = ", ".join(self.name(s) for s in winners)
                        self.say(f"fewest cards: {who} {'wins' if len(winners) == 1 else 'win'}")
                    else:
                        self.say("nobody pays; the stakes stay on the boodle cards")
                self.blocked = False
                self.dead_shown = False
            case MatchEnded(places, chips, reason):
                self.lines.append("")
                why = match_ending(reason)
                self.lines.append(f"Match over ({why}). Final places:")
                order = sorted(range(len(places)), key=lambda seat: (places[seat], seat))
                for seat in order:
                    self.say(f"{places[seat]}. {self.name(seat)} — {chips[seat]} chips")
