"""The actions a seat can take. A lead is just the ``Card`` led.

``legal_actions()`` returns one kind at a time, sorted:

* stake placement (``Ante.FREE``): ``Stakes`` with one amount per boodle card,
  in the order of ``Rules.boodle_cards``, summing to ``Rules.stake_total``;
* the dealer's dead-hand choice: a ``DeadHandChoice``;
* a sealed auction bid: ``Bid`` (0 means no bid);
* a lead: the lowest ``Card`` the leader holds in each suit they may lead.
"""

from __future__ import annotations

import dataclasses
import enum

from engine.cards import Card


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Stakes:
    """Chips placed on each boodle card, in the order of ``Rules.boodle_cards``."""

    amounts: tuple[int, ...]


class DeadHandChoice(enum.StrEnum):
    """The dealer's choice after looking at their own hand."""

    AUCTION = "auction"  # sell the unseen dead hand by sealed bids (exchange_or_auction)
    BUY = "buy"  # pay the purchase fee into the kitty and swap (purchase)
    EXCHANGE = "exchange"  # swap unseen for free (exchange, exchange_or_auction)
    KEEP = "keep"  # keep the hand dealt


@dataclasses.dataclass(frozen=True, slots=True, order=True)
class Bid:
    """A sealed bid for the dead hand, in chips; 0 is no bid."""

    chips: int


Action = Card | Stakes | DeadHandChoice | Bid


class Decision(enum.StrEnum):
    """What kind of decision the seat to act faces."""

    STAKE = "stake"
    DEAD_HAND = "dead_hand"
    BID = "bid"
    LEAD = "lead"
