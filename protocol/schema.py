"""The JSON Schema of the protocol, generated from the message types.

The structs in ``protocol.messages`` are the single source; ``schema.json``
beside this file is their rendering for bot authors who do not read Python,
committed so it can be read on the web and shipped with the package.  A test
fails when the file is stale.  Regenerate it with::

    .venv/bin/python -m protocol.schema
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec

from protocol.messages import PROTOCOL_VERSION, BotMessage, RefereeMessage

SCHEMA_PATH: Final = Path(__file__).with_name("schema.json")


def build_schema() -> dict[str, Any]:
    """One schema that accepts any line of the protocol; ``$defs`` names every type."""
    (referee, bot), components = msgspec.json.schema_components(
        (RefereeMessage, BotMessage), ref_template="#/$defs/{name}"
    )
    defs = {"RefereeMessage": referee, "BotMessage": bot, **components}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Newmarket bot protocol, version {PROTOCOL_VERSION}",
        "description": (
            "One line of the protocol: a RefereeMessage (referee to bot) or a BotMessage "
            "(bot to referee). See SPEC.md for the meaning of every field."
        ),
        "x-protocol-version": PROTOCOL_VERSION,
        "anyOf": [{"$ref": "#/$defs/RefereeMessage"}, {"$ref": "#/$defs/BotMessage"}],
        "$defs": dict(sorted(defs.items())),
    }


def render_schema() -> str:
    """The exact text of ``schema.json``."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
