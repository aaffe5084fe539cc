"""The rules of a match from a preset, its options and a hand limit: one builder for all.

``newmarket match``, ``sprt``, ``simulate``, a league file's [rules] and a
competition file's all name rules the same way: a preset (``engine.presets``),
options over it (``Rules.with_options``, which takes text or typed values) and
a hand limit over both.  Each names a mistake in its own words (``--rules``,
``rules.preset``), so the builder's error says which part was refused and
leaves the naming to its caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from engine import NewmarketError, Rules, preset

RulesPart = Literal["preset", "options", "hand_limit"]


class RulesChoiceError(ValueError):
    """A preset or an option the engine refused, or a hand limit below 1.

    The message is the engine's (or ``must be at least 1, got N``), without a key;
    ``part`` says which of the builder's arguments it was about.
    """

    def __init__(self, part: RulesPart, problem: str) -> None:
        super().__init__(problem)
        self.part: RulesPart = part


def build_rules(
    preset_name: str, options: Mapping[str, object], hand_limit: int | None = None
) -> Rules:
    """The preset, with ``options`` over it and ``hand_limit`` (when given) over both.

    A caller that forbids giving the hand limit twice checks that before; here the
    ``hand_limit`` argument wins, as a command's ``--hand-limit`` wins over ``--option``.
    """
    try:
        rules = preset(preset_name)
    except NewmarketError as error:
        raise RulesChoiceError("preset", str(error)) from None
    changes = dict(options)
    if hand_limit is not None:
        if hand_limit < 1:
            raise RulesChoiceError("hand_limit", f"must be at least 1, got {hand_limit}")
        changes["hand_limit"] = hand_limit
    try:
        return rules.with_options(changes)
    except NewmarketError as error:
        raise RulesChoiceError("options", str(error)) from None
