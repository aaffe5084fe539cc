"""The sections of SPEC.md that are generated: rule options, presets, the example transcript.

SPEC.md holds each between ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->`` markers; ``test_spec.py`` fails when one
differs from what this module produces, so a new option, a changed preset or
a change in the engine's play cannot silently leave the spec behind.  Rewrite
them in place with::

    .venv/bin/python -m tests.protocol.spec_sections
"""

from __future__ import annotations

import enum
import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path

from engine import PRESETS, Rules
from engine.presets import preset_summary
from engine.rules import OPTION_NAMES
from tests.protocol.transcript import transcript_lines


def _values(name: str) -> str:
    """The values an option takes, as a bot reads them in ``match_start.rules``."""
    default = getattr(Rules(), name)
    if isinstance(default, enum.Enum):
        return " ".join(f"`{json.dumps(member.value)}`" for member in type(default))
    if isinstance(default, bool):
        return "`true` `false`"
    if name == "boodle_cards":
        return "list of distinct cards"
    if name in ("ante_per_card", "dealer_ante_per_card", "kitty_ante"):
        return "integer >= 0"
    if name == "end_players":
        return "integer 1..7, below the number of players"
    return "integer >= 1"


def _json(rules: Rules, name: str) -> str:
    return json.dumps(rules.to_dict()[name], separators=(",", ":"))


def rule_options_table() -> str:
    docs = Rules.option_docs()
    default = Rules()
    rows = [
        "| option | values | default | meaning |",
        "|---|---|---|---|",
    ]
    for name in OPTION_NAMES:
        rows.append(f"| `{name}` | {_values(name)} | `{_json(default, name)}` | {docs[name]} |")
    return "\n".join(rows)


def presets_table() -> str:
    names = list(PRESETS)
    built = {name: PRESETS[name]() for name in names}
    rows = [
        "| option | " + " | ".join(f"`{name}`" for name in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for option in OPTION_NAMES:
        cells = " | ".join(f"`{_json(built[name], option)}`" for name in names)
        rows.append(f"| `{option}` | {cells} |")
    return "\n".join(rows)


def presets_list() -> str:
    """Each preset's source and its docstring: how it reads its text, silent points included."""
    items = []
    for name, build in PRESETS.items():
        paragraphs = inspect.cleandoc(build.__doc__ or "").split("\n\n")
        body = " ".join(" ".join(p.split()) for p in paragraphs[1:])
        items.append(f"- **`{name}`**: {preset_summary(name)} {body}")
    return "\n".join(items)


def transcript_block() -> str:
    return "```transcript\n" + "\n".join(transcript_lines()) + "\n```"


SECTIONS: dict[str, Callable[[], str]] = {
    "rule-options": rule_options_table,
    "presets-list": presets_list,
    "presets": presets_table,
    "transcript": transcript_block,
}

SPEC_PATH = Path(__file__).resolve().parents[2] / "SPEC.md"

_SECTION = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[a-z-]+) -->\n)"
    r"(?P<body>.*?)"
    r"(<!-- END GENERATED: (?P=name) -->)",
    re.DOTALL,
)


def generated_sections(text: str) -> dict[str, str]:
    """The body of each generated section in ``text``, by name (without a final newline)."""
    return {m["name"]: m["body"].removesuffix("\n") for m in _SECTION.finditer(text)}


def regenerate(text: str) -> str:
    """``text`` with every generated section rebuilt."""

    def rebuild(match: re.Match[str]) -> str:
        body = SECTIONS[match["name"]]()
        return f"{match[1]}{body}\n{match[4]}"

    return _SECTION.sub(rebuild, text)


if __name__ == "__main__":
    SPEC_PATH.write_text(regenerate(SPEC_PATH.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"rewrote the generated sections of {SPEC_PATH}")
