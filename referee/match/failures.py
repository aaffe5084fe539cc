"""Finding the referee's own failure inside trio's exception groups.

A trio nursery wraps whatever its body or children raise in an exception
group, and nurseries nest (a match inside its bots' sessions inside a
league's pool), so an ``OSError`` from a log that could not be written
reaches a command several groups deep.  A command that reports it in one
line asks ``first_instance`` for it rather than unwrapping by hand.
"""

from __future__ import annotations

from typing import TypeVar

E = TypeVar("E", bound=BaseException)


def first_instance(error: BaseException, kinds: type[E] | tuple[type[E], ...]) -> E | None:
    """``error`` if it is one of ``kinds``, else the first such in its groups, depth first."""
    if isinstance(error, kinds):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = first_instance(inner, kinds)
            if found is not None:
                return found
    return None
