"""What a scenario promises to show the bot, whatever the bot chooses.

A scenario's table is scripted so that a moment happens (a single legal lead,
a blocked hand, an auction); an ``Expect`` checks, from the lines the bot was
sent (``Seen``), that it did.  One that did not is a bug of the check,
reported as such and never blamed on the bot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from referee.tools.check.opponents import Message


@dataclasses.dataclass(frozen=True)
class Seen:
    """What the bot was sent in one scenario: its requests and its events, in order."""

    requests: list[Message]
    events: list[Message]

    def leads(self) -> list[Message]:
        return [r for r in self.requests if r["decision"] == "lead"]


@dataclasses.dataclass(frozen=True)
class Expect:
    """Something a scenario must show the bot, whatever the bot chooses."""

    what: str
    test: Callable[[Seen], bool]


def asked(kind: str, legal: Sequence[str] | None = None) -> Expect:
    """The bot was asked a ``kind`` decision (with exactly ``legal``, if given)."""
    shown = f" with legal {list(legal)}" if legal is not None else ""

    def test(seen: Seen) -> bool:
        return any(
            r["decision"] == kind and (legal is None or r["legal"] == list(legal))
            for r in seen.requests
        )

    return Expect(f"a {kind} request{shown}", test)


def told(event: str, **fields: object) -> Expect:
    """The bot was sent an event of type ``event`` with these field values."""
    shown = "".join(f" {key}={value!r}" for key, value in fields.items())

    def test(seen: Seen) -> bool:
        return any(
            e.get("type") == event and all(e.get(k) == v for k, v in fields.items())
            for e in seen.events
        )

    return Expect(f"a {event} event{shown}", test)


def never_asked() -> Expect:
    return Expect("no request at all", lambda seen: not seen.requests)


def every_lead_single() -> Expect:
    """At least two lead requests, each with exactly one legal card."""
    return Expect(
        "lead requests with a single legal card each",
        lambda seen: len(seen.leads()) >= 2 and all(len(r["legal"]) == 1 for r in seen.leads()),
    )


def passed_lead_changes_suit(suit: str) -> Expect:
    """After a passed lead, the bot's lead excludes ``suit`` although its hand holds one."""

    def test(seen: Seen) -> bool:
        return any(
            any(card[1] == suit for card in r["hand"])
            and all(card[1] != suit for card in r["legal"])
            for r in seen.leads()
        )

    return Expect(f"a lead whose legal cards leave out the {suit} the bot holds", test)


def stopped_at_top_by_king() -> Expect:
    """A run stopped at the top of its suit on a king (aces low)."""
    return Expect(
        "a run stopped at the top of its suit by a king",
        lambda seen: any(
            e.get("type") == "run_stopped"
            and e.get("cause") == "top"
            and str(e.get("card", "")).startswith("K")
            for e in seen.events
        ),
    )
