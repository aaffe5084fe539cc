"""Encoding and decoding messages: what goes on the wire and what the two sides accept."""

from __future__ import annotations

import msgspec
import pytest

from protocol.events import EVENT_TAGS, CardPlayed, WentOut
from protocol.framing import MAX_LINE_BYTES, LineTooLongError
from protocol.messages import (
    BOT_MESSAGE_TYPES,
    PROTOCOL_VERSION,
    REFEREE_MESSAGE_TYPES,
    Events,
    Hello,
    MalformedMessageError,
    MatchStart,
    Ready,
    RefereeMessage,
    Reply,
    Request,
    decode_bot_message,
    decode_referee_message,
    encode,
)
from tests.protocol.samples import BOT_MESSAGES, EVENTS, REFEREE_MESSAGES


def test_the_protocol_version_is_1() -> None:
    assert PROTOCOL_VERSION == 1


def test_message_and_event_tags_do_not_collide() -> None:
    assert not (REFEREE_MESSAGE_TYPES & BOT_MESSAGE_TYPES)
    assert not ((REFEREE_MESSAGE_TYPES | BOT_MESSAGE_TYPES) & EVENT_TAGS)


def test_samples_cover_every_type() -> None:
    tags = {msgspec.json.decode(encode(m))["type"] for m in REFEREE_MESSAGES}
    assert tags == REFEREE_MESSAGE_TYPES
    assert {msgspec.json.decode(encode(m))["type"] for m in BOT_MESSAGES} == BOT_MESSAGE_TYPES
    assert {msgspec.json.decode(msgspec.json.encode(e))["type"] for e in EVENTS} == EVENT_TAGS


@pytest.mark.parametrize("message", REFEREE_MESSAGES, ids=lambda m: type(m).__name__)
def test_referee_messages_round_trip(message: RefereeMessage) -> None:
    line = encode(message)
    assert decode_referee_message(line.rstrip(b"\n")) == message


@pytest.mark.parametrize("message", BOT_MESSAGES, ids=lambda m: type(m).__name__)
def test_bot_messages_round_trip(message: Ready | Reply) -> None:
    assert decode_bot_message(encode(message)) == message


def test_a_line_is_compact_json_with_the_type_first_and_one_newline() -> None:
    line = encode(Reply(id=7, choice="TH"))
    assert line == b'{"type":"reply","id":7,"choice":"TH"}\n'


def test_a_request_leaves_out_the_fields_of_other_decisions() -> None:
    lead = msgspec.json.decode(encode(REFEREE_MESSAGES[3]))
    assert lead["decision"] == "lead"
    assert not {"min_bid", "max_bid", "stake_total", "boodle_cards"} & set(lead)
    bid = msgspec.json.decode(encode(REFEREE_MESSAGES[5]))
    assert bid["min_bid"] == 0 and bid["max_bid"] == 40


def test_hidden_hands_travel_as_null() -> None:
    batch = msgspec.json.decode(encode(Events(events=[EVENTS[7]])))
    assert batch["events"][0]["hand"] is None
    assert batch["events"][0]["paid_to"] is None


def test_a_trailing_newline_or_crlf_is_accepted_by_the_decoders() -> None:
    assert decode_bot_message(b'{"type":"reply","id":1,"choice":0}\r\n') == Reply(id=1, choice=0)


def test_encode_refuses_a_line_over_the_cap() -> None:
    huge = Hello(protocol=1, referee="x" * MAX_LINE_BYTES)
    with pytest.raises(LineTooLongError):
        encode(huge)


# ------------------------------------------------------------ strict decoding of bot lines


@pytest.mark.parametrize(
    ("line", "problem", "words"),
    [
        (b"hello", "not_json", "not JSON"),
        (b'{"type":"reply","id":1,"choice":"2C"', "not_json", "not JSON"),
        (b'{"type":"reply","id":1,"choice":"2C"} {}', "not_json", "trailing"),
        (b'{"type":"ready","name":"\xff","protocol":1}', "not_utf8", "UTF-8"),
        (b'["reply",1,"2C"]', "not_object", "an array"),
        (b'"reply"', "not_object", "a string"),
        (b"null", "not_object", "null"),
        (b'{"id":1,"choice":"2C"}', "missing_type", '"type"'),
        (b'{"type":"replay","id":1,"choice":"2C"}', "unknown_type", '"replay"'),
        (b'{"type":"hello","protocol":1,"referee":"x"}', "unknown_type", "ready, reply"),
        (b'{"type":7}', "unknown_type", "7"),
        (b'{"type":"reply","choice":"2C"}', "missing_field", "`id`"),
        (b'{"type":"reply","id":1}', "missing_field", "`choice`"),
        (b'{"type":"ready","protocol":1}', "missing_field", "`name`"),
        (b'{"type":"reply","id":"1","choice":"2C"}', "wrong_type", "$.id"),
        (b'{"type":"reply","id":1.0,"choice":"2C"}', "wrong_type", "$.id"),
        (b'{"type":"reply","id":0,"choice":"2C"}', "wrong_type", ">= 1"),
        (b'{"type":"reply","id":1,"choice":true}', "wrong_type", "$.choice"),
        (b'{"type":"reply","id":1,"choice":null}', "wrong_type", "$.choice"),
        (b'{"type":"reply","id":1,"choice":[1,"2"]}', "wrong_type", "$.choice[1]"),
        (b'{"type":"reply","id":1,"choice":{"card":"2C"}}', "wrong_type", "$.choice"),
        (b'{"type":"ready","name":"","protocol":1}', "wrong_type", "$.name"),
        (b'{"type":"reply","id":1,"choice":"2C","card":"2C"}', "unknown_field", "`card`"),
        (b'{"type":"ready","name":"x","protocol":1,"seat":0}', "unknown_field", "`seat`"),
    ],
)
def test_malformed_bot_lines_are_named(line: bytes, problem: str, words: str) -> None:
    with pytest.raises(MalformedMessageError) as caught:
        decode_bot_message(line)
    assert caught.value.problem == problem
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_malformed_message_error_is_a_value_error() -> None:
    assert issubclass(MalformedMessageError, ValueError)


def test_the_reason_names_the_message_type() -> None:
    with pytest.raises(MalformedMessageError, match=r"^reply: expected `int`"):
        decode_bot_message(b'{"type":"reply","id":"x","choice":0}')


def test_ready_needs_only_name_and_protocol() -> None:
    assert decode_bot_message(b'{"type":"ready","name":"awk","protocol":1}') == Ready(
        name="awk", protocol=1, version="", token=None
    )


# ------------------------------------------------------------ lenient decoding of referee lines


def test_unknown_fields_from_the_referee_are_ignored() -> None:
    line = b'{"type":"hello","protocol":1,"referee":"r","motd":"hi","features":[1]}'
    assert decode_referee_message(line) == Hello(protocol=1, referee="r")


def test_unknown_referee_message_types_decode_to_none() -> None:
    assert decode_referee_message(b'{"type":"spectate","table":3}') is None


def test_unknown_event_types_are_dropped_from_a_batch() -> None:
    line = (
        b'{"type":"events","events":[{"type":"went_out","seat":1},'
        b'{"type":"table_chat","text":"gg"},{"type":"card_played","seat":0,"card":"2C",'
        b'"lead":true,"think_ms":3}]}'
    )
    assert decode_referee_message(line) == Events(
        events=[WentOut(seat=1), CardPlayed(seat=0, card="2C", lead=True)]
    )


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"{", "not_json"),
        (b"[]", "not_object"),
        (b'{"protocol":1}', "missing_type"),
        (b'{"type":"hello","protocol":"1","referee":"r"}', "wrong_type"),
        (b'{"type":"request","id":1}', "missing_field"),
        (b'{"type":"events","events":[{"type":"went_out","seat":"1"}]}', "wrong_type"),
        (b'{"type":"events","events":[{"type":"went_out"},{"type":"x"}]}', "missing_field"),
        (
            b'{"type":"request","id":1,"decision":"fold","legal":[],"default":0,"hand":[],'
            b'"hand_sizes":[],"chips":[],"boodle":[],"kitty":0,"time_left_ms":1,'
            b'"time_bank_ms":0}',
            "wrong_type",
        ),
    ],
)
def test_a_referee_line_that_is_wrong_still_raises(line: bytes, problem: str) -> None:
    with pytest.raises(MalformedMessageError) as caught:
        decode_referee_message(line)
    assert caught.value.problem == problem


def test_cards_must_be_canonical_text() -> None:
    line = encode(REFEREE_MESSAGES[3]).replace(b'"3D"', b'"10D"')
    # The error names the bad text and where it is (CardText is a Literal of the 52 texts).
    with pytest.raises(
        MalformedMessageError, match=r"request: invalid enum value '10D' - at `\$\.hand\[1\]`"
    ):
        decode_referee_message(line)


def test_match_start_rules_keep_their_json_types() -> None:
    start = decode_referee_message(encode(REFEREE_MESSAGES[1]))
    assert isinstance(start, MatchStart)
    assert start.rules["dead_hand"] is True
    assert start.rules["boodle_cards"] == ["AS", "KH"]


def test_messages_are_immutable() -> None:
    request = REFEREE_MESSAGES[3]
    assert isinstance(request, Request)
    with pytest.raises(AttributeError):
        request.id = 9  # type: ignore[misc]
