"""The engine's named errors. All are ``ValueError``s, as in python-chess.

Two families for actions, so a referee can tell a bot that sent nonsense from
one that sent a well-formed move the rules forbid:

* ``MalformedActionError``: not an action of the kind the current decision
  takes (wrong type, wrong shape, negative chips).
* ``IllegalActionError``: well-formed, but not among the legal actions now.

Either way the state is left exactly as it was.
"""

from __future__ import annotations


class NewmarketError(ValueError):
    """Base of every error the engine raises on purpose."""


class MalformedCardError(NewmarketError):
    """A card's text is not in the canonical form (``QH``, ``TS``...)."""


class RulesError(NewmarketError):
    """An invalid rule option or combination; the message names the option."""


class MalformedActionError(NewmarketError):
    """The action is not of the kind the pending decision takes."""


class IllegalActionError(NewmarketError):
    """The action is well-formed but against the rules here and now."""


class MatchOverError(NewmarketError):
    """An action was applied to a match that has ended."""
