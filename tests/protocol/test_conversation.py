"""The conversation's rules: the handshake and the verdict on every line a bot can send."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.conversation import (
    LATE_IDS_KEPT,
    UNEXPECTED_READY,
    Conversation,
    ConversationError,
    HandshakeError,
    Late,
    LineFault,
    Loss,
    excerpt,
)
from protocol.faults import FaultKind
from protocol.messages import (
    PROTOCOL_VERSION,
    Ready,
    Reply,
    decode_referee_message,
    encode,
)

READY = encode(Ready(name="bot", protocol=PROTOCOL_VERSION, version="1.0"))


def reply(request_id: int, choice: object = "7H") -> bytes:
    return encode(Reply(id=request_id, choice=choice))  # type: ignore[arg-type]


def talking() -> Conversation:
    conversation = Conversation()
    conversation.receive_ready(READY)
    return conversation


def waiting_for(*request_ids: int) -> Conversation:
    """A conversation that has issued requests up to the last of ``request_ids``, which waits."""
    conversation = talking()
    for request_id in request_ids:
        assert conversation.issue() == request_id
    conversation.expect(request_ids[-1])
    return conversation


# ---------------------------------------------------------------- the handshake


def test_hello_names_the_protocol_version_and_the_referee() -> None:
    hello = decode_referee_message(Conversation().hello("newmarket 1.2"))
    assert (hello.protocol, hello.referee) == (PROTOCOL_VERSION, "newmarket 1.2")  # type: ignore[union-attr]


def test_a_ready_of_this_version_ends_the_handshake() -> None:
    conversation = Conversation()
    assert not conversation.handshaken
    ready = conversation.receive_ready(READY)
    assert (ready.name, ready.version) == ("bot", "1.0")
    assert conversation.handshaken and conversation.ready == ready


def test_a_first_line_that_is_not_json_is_a_startup_fault_carrying_the_decoding_error() -> None:
    with pytest.raises(HandshakeError) as raised:
        Conversation().receive_ready(b"hello referee")
    assert raised.value.kind == FaultKind.STARTUP
    assert raised.value.detail.startswith("instead of ready: not JSON")
    assert raised.value.malformed is not None and raised.value.malformed.problem == "not_json"


def test_a_reply_before_ready_is_a_startup_fault_naming_what_came() -> None:
    with pytest.raises(HandshakeError) as raised:
        Conversation().receive_ready(reply(1))
    assert (raised.value.kind, raised.value.detail) == (
        FaultKind.STARTUP,
        "the first message must be ready, got reply",
    )
    assert raised.value.malformed is None


def test_another_protocol_version_is_a_protocol_fault() -> None:
    conversation = Conversation()
    with pytest.raises(HandshakeError) as raised:
        conversation.receive_ready(encode(Ready(name="bot", protocol=PROTOCOL_VERSION + 1)))
    assert raised.value.kind == FaultKind.PROTOCOL
    assert raised.value.detail == (
        f"this referee speaks protocol {PROTOCOL_VERSION}; ready says {PROTOCOL_VERSION + 1}"
    )
    assert not conversation.handshaken


def test_the_referee_cannot_handshake_twice_or_ask_before_the_handshake() -> None:
    with pytest.raises(ConversationError):
        talking().receive_ready(READY)
    with pytest.raises(ConversationError):
        Conversation().expect(1)


# ---------------------------------------------------------------- request ids


def test_request_ids_count_from_one_and_are_never_reused() -> None:
    conversation = talking()
    assert [conversation.issue() for _ in range(3)] == [1, 2, 3]


# ---------------------------------------------------------------- the verdict on a line


def test_the_reply_to_the_waiting_request_is_the_reply_itself() -> None:
    conversation = waiting_for(1)
    verdict = conversation.receive(reply(1, "QS"))
    assert verdict == Reply(id=1, choice="QS")
    assert conversation.waiting is None


def test_a_second_reply_is_a_protocol_fault_that_resolves_nothing() -> None:
    conversation = waiting_for(1)
    conversation.receive(reply(1))
    assert conversation.issue() == 2
    conversation.expect(2)
    verdict = conversation.receive(reply(1))
    assert verdict == LineFault(
        FaultKind.PROTOCOL, "a second reply to request 1 (waiting for request 2)", 1, False
    )
    assert conversation.waiting == 2  # request 2 still waits


def test_a_reply_to_a_request_never_sent_is_a_protocol_fault() -> None:
    verdict = waiting_for(1).receive(reply(999))
    assert verdict == LineFault(
        FaultKind.PROTOCOL,
        "a reply to request 999, which was never sent (waiting for request 1)",
        999,
    )


def test_a_stray_reply_with_no_request_waiting_says_nothing_of_waiting() -> None:
    conversation = talking()
    verdict = conversation.receive(reply(5))
    assert verdict == LineFault(FaultKind.PROTOCOL, "a reply to request 5, which was never sent", 5)


def test_a_ready_after_the_handshake_is_a_protocol_fault_and_the_request_still_waits() -> None:
    conversation = waiting_for(1)
    assert conversation.receive(READY) == LineFault(FaultKind.PROTOCOL, UNEXPECTED_READY)
    assert conversation.waiting == 1
    assert conversation.receive(reply(1)) == Reply(id=1, choice="7H")


def test_a_malformed_line_resolves_the_waiting_request_and_its_reply_is_then_late() -> None:
    conversation = waiting_for(1)
    verdict = conversation.receive(b'{"type":"reply","id":1}')  # no choice
    assert isinstance(verdict, LineFault)
    assert (verdict.kind, verdict.request_id, verdict.resolves) == (FaultKind.MALFORMED, 1, True)
    assert verdict.detail.endswith('(line: {"type":"reply","id":1})')
    assert conversation.waiting is None
    assert conversation.receive(reply(1)) == Late(Reply(id=1, choice="7H"))
    # Only the first late reply is discarded: a second one is a second reply.
    second = conversation.receive(reply(1))
    assert isinstance(second, LineFault) and second.detail == "a second reply to request 1"


def test_a_malformed_line_with_no_request_waiting_resolves_nothing() -> None:
    verdict = talking().receive(b"\xff\xfe")
    assert isinstance(verdict, LineFault)
    assert (verdict.kind, verdict.request_id, verdict.resolves) == (
        FaultKind.MALFORMED,
        None,
        False,
    )


def test_a_reply_to_a_request_given_up_is_late_once() -> None:
    conversation = waiting_for(1)
    conversation.give_up()  # it timed out
    assert conversation.receive(reply(1, "2C")) == Late(Reply(id=1, choice="2C"))
    assert isinstance(conversation.receive(reply(1)), LineFault)


def test_only_the_last_given_up_ids_are_remembered_as_late() -> None:
    conversation = talking()
    for _ in range(LATE_IDS_KEPT + 1):
        conversation.expect(conversation.issue())
        conversation.give_up()
    forgotten = conversation.receive(reply(1))
    assert isinstance(forgotten, LineFault) and forgotten.kind == FaultKind.PROTOCOL
    assert isinstance(conversation.receive(reply(2)), Late)


def test_a_malformed_fault_quotes_at_most_80_characters_of_the_line() -> None:
    assert excerpt(b"x" * 80) == "x" * 80
    assert excerpt(b"x" * 81) == "x" * 77 + "..."
    verdict = talking().receive(b"y" * 500)
    assert isinstance(verdict, LineFault) and verdict.detail.endswith("y" * 77 + "...)")


# ---------------------------------------------------------------- failures below the lines


@pytest.mark.parametrize("loss", list(Loss))
def test_any_loss_between_hello_and_ready_is_a_startup_fault(loss: Loss) -> None:
    conversation = Conversation()
    conversation.hello("newmarket")
    assert conversation.lost(loss) == FaultKind.STARTUP


@pytest.mark.parametrize(
    ("loss", "kind"),
    [
        (Loss.ENDED, FaultKind.EOF),
        (Loss.EXITED, FaultKind.CRASH),
        (Loss.LINE_TOO_LONG, FaultKind.LINE_TOO_LONG),
        (Loss.SILENT, FaultKind.TIMEOUT),
        (Loss.NOT_READING, FaultKind.TIMEOUT),
    ],
)
def test_a_loss_after_ready_has_its_own_kind(loss: Loss, kind: FaultKind) -> None:
    assert talking().lost(loss) == kind
    assert Conversation().lost(loss) == kind  # a conversation over a stream never greeted


# ---------------------------------------------------------------- properties

Step = tuple[str, int]
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("ask"), st.just(0)),
        st.tuples(st.just("give_up"), st.just(0)),
        st.tuples(st.just("reply"), st.integers(min_value=1, max_value=40)),
        st.tuples(st.just("garbage"), st.just(0)),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_every_reply_gets_the_verdict_of_the_spec_model(steps: list[Step]) -> None:
    """A reply answers the waiting request, is late once after its request was given
    up (by a timeout or a malformed line), and is otherwise a protocol fault; only a
    malformed line resolves the waiting request."""
    conversation = talking()
    last = 0
    waiting: int | None = None
    late: set[int] = set()
    for step, value in steps:
        if step == "ask":
            last += 1
            assert conversation.issue() == last
            conversation.expect(last)
            waiting = last
        elif step == "give_up":
            if waiting is not None:
                late.add(waiting)
            conversation.give_up()
            waiting = None
        elif step == "garbage":
            verdict = conversation.receive(b"not json")
            assert isinstance(verdict, LineFault) and verdict.kind == FaultKind.MALFORMED
            assert (verdict.request_id, verdict.resolves) == (waiting, waiting is not None)
            if waiting is not None:
                late.add(waiting)
            waiting = None
        else:
            verdict = conversation.receive(reply(value))
            if value == waiting:
                assert verdict == Reply(id=value, choice="7H")
                waiting = None
            elif value in late:
                assert verdict == Late(Reply(id=value, choice="7H"))
                late.discard(value)
            else:
                assert isinstance(verdict, LineFault)
                assert (verdict.kind, verdict.request_id, verdict.resolves) == (
                    FaultKind.PROTOCOL,
                    value,
                    False,
                )
                second = value <= last
                assert verdict.detail.startswith(
                    f"a second reply to request {value}"
                    if second
                    else f"a reply to request {value}, which was never sent"
                )
        assert conversation.waiting == waiting


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_get_a_verdict_and_never_an_exception(line: bytes) -> None:
    conversation = waiting_for(1)
    verdict = conversation.receive(line)
    assert isinstance(verdict, Reply | Late | LineFault)
    if isinstance(verdict, LineFault) and verdict.kind == FaultKind.MALFORMED:
        assert verdict.resolves and conversation.waiting is None
