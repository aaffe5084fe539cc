"""Breaks SPEC.md 3.3 only where the scripted scenarios cannot reach: dies in its 16th match.

The check's scripts are 15 matches, so this bot passes them all; only
``newmarket check --matches N`` (random matches after the scripts) finds it,
as a bot that fails in long play (a leak, a counter that overflows) is found.
"""

from tests.check.bots._base import Message, Wire, answer_default, log, run


def answer(wire: Wire, request: Message) -> None:
    if wire.matches >= 15:
        log("sixteenth-match: giving up")
        raise SystemExit(3)
    answer_default(wire, request)


if __name__ == "__main__":
    run(answer, name="sixteenth-match")
