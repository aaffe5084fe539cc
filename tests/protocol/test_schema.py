"""protocol/schema.json is generated from the types and must never go stale."""

from __future__ import annotations

import json

from protocol.messages import BOT_MESSAGE_TYPES, PROTOCOL_VERSION, REFEREE_MESSAGE_TYPES
from protocol.schema import SCHEMA_PATH, build_schema, render_schema


def test_the_committed_schema_is_fresh() -> None:
    committed = SCHEMA_PATH.read_text(encoding="utf-8")
    assert committed == render_schema(), (
        "protocol/schema.json is stale: regenerate it with `.venv/bin/python -m protocol.schema` "
        "and commit the result"
    )


def test_the_schema_names_every_message_and_the_version() -> None:
    schema = build_schema()
    assert schema["x-protocol-version"] == PROTOCOL_VERSION
    defs = schema["$defs"]
    tags = set()
    for name in ("RefereeMessage", "BotMessage"):
        mapping = defs[name]["discriminator"]["mapping"]
        tags |= set(mapping)
        for ref in mapping.values():
            assert ref.removeprefix("#/$defs/") in defs
    assert tags == REFEREE_MESSAGE_TYPES | BOT_MESSAGE_TYPES


def test_bot_messages_forbid_extra_properties_in_the_schema() -> None:
    defs = build_schema()["$defs"]
    assert defs["Reply"].get("additionalProperties") is False
    assert "additionalProperties" not in defs["Request"]


def test_the_schema_file_is_valid_json_ending_in_a_newline() -> None:
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    json.loads(text)
