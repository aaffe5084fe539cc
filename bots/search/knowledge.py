"""What one seat knows about the hand in play, kept from the protocol events.

The SDK's ``TableState`` is made for heuristic bots reading the table; a
search needs more, in the engine's terms: the order of play with who led,
and what every event *proves* about where the unseen cards are.  This module
keeps exactly that and turns it into a ``DealProblem`` for
``bots.search.sampler``.

What the events prove (each a rule of the game, RULES.md "Play"):

* A card played is out of every hand; who played it is in the event.
* A stop with cause ``dead`` proves the missing card is in the dead hand.
* A lead is the leader's *lowest* card of its suit, so at that moment the
  leader held no lower card of that suit; hands only shrink during play, so
  it holds none now either.
* Under ``change_or_same``/``change_or_pass`` a leader must change suit after
  a stop if it can: leading the stopped suit again proves it held nothing
  else.  A ``lead_passed`` event proves the passer, and every live seat
  skipped over, held only the stopped suit.
* A seat that swaps hands with the dead hand knows its old hand is now dead.

Cards here are engine ``Card`` ints (suit-major, 2 low .. Ace high); ``below``
follows the match's rank order, so aces-low matches read "lowest" correctly.
"""

from __future__ import annotations

from collections.abc import Iterable

from bots.search.sampler import DealError, DealProblem
from engine.cards import Card, Rank
from engine.rules import LeadSuit, Rules
from protocol.events import (
    BoodleWon,
    CardPlayed,
    CardsDealt,
    Event,
    HandStarted,
    HandSwapped,
    LeadPassed,
    PlayerEliminated,
    RunStopped,
    StakePlaced,
)

__all__ = ["DEAD_SLOT", "Knowledge", "mask_of"]

DEAD_SLOT = -1
"""The slot of the dead hand in ``Knowledge.deal_problem``'s slot list."""

_ALL = (1 << 52) - 1
_SUIT = tuple(0x1FFF << (13 * suit) for suit in range(4))


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def parse(text: str) -> Card:
    return Card.parse(text)


class Knowledge:
    """One seat's knowledge of the current hand; feed it every event with ``observe``."""

    def __init__(self, seat: int, players: int, rules: Rules) -> None:
        self.seat = seat
        self.players = players
        self.rules = rules
        order = rules.rank_order
        # below[card]: the cards of the same suit lower than ``card`` under the rank order.
        self.below: tuple[int, ...] = tuple(
            mask_of(
                other
                for other in range(13 * (card // 13), 13 * (card // 13) + 13)
                if order.position(Rank(other % 13)) < order.position(Rank(card % 13))
            )
            for card in range(52)
        )
        self.eliminated: set[int] = set()
        self.eliminations: list[tuple[int, int, int]] = []
        self.stacks = [0] * len(rules.boodle_cards)  # chips on each boodle card, carried over
        self.new_hand(0, 0)

    def new_hand(self, number: int, dealer: int) -> None:
        self.hand_number = number
        self.dealer = dealer
        self.played: list[tuple[int, Card]] = []
        self.played_mask = 0
        self.proven_dead = 0  # missing cards of ``dead`` stops
        self.discarded = 0  # our old hand, if we swapped it for the dead hand
        self.dealt_hand = 0  # our hand as dealt
        self.forbidden = [0] * self.players  # per seat: cards it cannot hold
        self.stopped_suit = -1  # the suit of the last run stopped
        self.hand_sizes = [0] * self.players
        self.dead_hand_size = 0
        # Every other seat's lead this hand: (seat, card, how many cards were played
        # before it, the boodle stacks then, the cards gone then (played or proven
        # dead), the dead hand's size).  bots.search.inference reads them.
        self.leads: list[tuple[int, Card, int, tuple[int, ...], int, int]] = []

    # -- events ----------------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        match event:
            case HandStarted(hand_number=number, dealer=dealer):
                self.new_hand(number, dealer)
            case PlayerEliminated(seat=seat, chips=chips):
                self.eliminated.add(seat)
                # (seat, the hand before which it went out, its chips): for final places.
                self.eliminations.append((seat, self.hand_number + 1, chips))
            case CardsDealt(hand_sizes=sizes, dead_hand_size=dead, hand=hand):
                self.hand_sizes = list(sizes)
                self.dead_hand_size = dead
                self.dealt_hand = mask_of(parse(card) for card in hand)
            case HandSwapped(seat=seat, hand_size=size):
                self.dead_hand_size = self.hand_sizes[seat]
                if seat == self.seat:
                    self.discarded = self.dealt_hand
                self.hand_sizes[seat] = size
            case CardPlayed(seat=seat, card=text, lead=lead):
                card = parse(text)
                if lead and seat != self.seat:
                    self._lead_proves(seat, card)
                    gone = self.played_mask | self.proven_dead
                    self.leads.append(
                        (
                            seat,
                            card,
                            len(self.played),
                            tuple(self.stacks),
                            gone,
                            self.dead_hand_size,
                        )
                    )
                self.played.append((seat, card))
                self.played_mask |= 1 << card
                self.hand_sizes[seat] = max(0, self.hand_sizes[seat] - 1)
            case StakePlaced(amounts=amounts) if len(amounts) == len(self.stacks):
                self.stacks = [have + add for have, add in zip(self.stacks, amounts, strict=True)]
            case BoodleWon(card=text):
                card = parse(text)
                if card in self.rules.boodle_cards:
                    self.stacks[self.rules.boodle_cards.index(card)] = 0
            case RunStopped(card=text, cause=cause, missing=missing):
                self.stopped_suit = parse(text) // 13
                if cause == "dead" and missing is not None:
                    self.proven_dead |= 1 << parse(missing)
            case LeadPassed(from_seat=start, to_seat=end):
                # The passer and every live seat skipped held only the stopped suit.
                if self.stopped_suit >= 0:
                    seat = start
                    while seat != end:
                        if seat not in self.eliminated and seat != self.seat:
                            self.forbidden[seat] |= _ALL & ~_SUIT[self.stopped_suit]
                        seat = (seat + 1) % self.players
            case _:
                pass

    def _lead_proves(self, seat: int, card: Card) -> None:
        # A lead is the lowest card the leader holds in that suit.
        self.forbidden[seat] |= self.below[card]
        suit = card // 13
        if (
            self.rules.lead_suit is not LeadSuit.ANY
            and self.stopped_suit == suit
            and self.played  # not the first lead of the hand, which is free
        ):
            # Leading the stopped suit again is allowed only with nothing else in hand.
            self.forbidden[seat] |= _ALL & ~_SUIT[suit]

    # -- the unseen cards --------------------------------------------------------------------

    def known_dead(self) -> int:
        """Cards certainly in the dead hand."""
        return self.proven_dead | self.discarded

    def deal_problem(
        self, hand: Iterable[int], hand_sizes: list[int]
    ) -> tuple[DealProblem, list[int]]:
        """The unseen cards and where they may be; ``hand_sizes`` is the request's (exact).

        Returns the problem and its slots: seat numbers, ``DEAD_SLOT`` for the
        dead hand's unknown part (always last).
        """
        own = mask_of(hand)
        known = own | self.played_mask | self.known_dead()
        pool_mask = _ALL & ~known
        pool = tuple(card for card in range(52) if pool_mask >> card & 1)
        slots = [
            seat
            for seat in range(self.players)
            if seat != self.seat and hand_sizes[seat] > 0 and seat not in self.eliminated
        ]
        room = [hand_sizes[seat] for seat in slots]
        dead_room = len(pool) - sum(room)
        if dead_room < 0:
            raise DealError(f"{len(pool)} unseen cards cannot fill hands of sizes {room}")
        forbidden = [self.forbidden[seat] & pool_mask for seat in slots]
        return (
            DealProblem(pool, (*room, dead_room), (*forbidden, 0)),
            [*slots, DEAD_SLOT],
        )
