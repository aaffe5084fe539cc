"""The line framer: what a referee or a bot sees when bytes arrive in odd pieces."""

from __future__ import annotations

import pytest

from protocol.framing import (
    MAX_LINE_BYTES,
    LineFramer,
    LineTooLongError,
    StreamEndedError,
)


def test_the_cap_is_64_kib() -> None:
    assert MAX_LINE_BYTES == 65536


def test_one_feed_may_hold_many_lines() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert framer.buffered == 0


def test_a_line_split_over_feeds_comes_out_once_whole() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"type":') == []
    assert framer.feed(b'"reply","id"') == []
    assert framer.feed(b":7}\n{") == [b'{"type":"reply","id":7}']
    assert framer.buffered == 1


def test_every_split_point_gives_the_same_lines() -> None:
    stream = b'{"x":"\xc3\xa9"}\r\n\n{"y":[1,2]}\n   \n{"z":3}\n'
    expected = [b'{"x":"\xc3\xa9"}', b'{"y":[1,2]}', b'{"z":3}']
    for cut in range(len(stream) + 1):
        framer = LineFramer()
        lines = framer.feed(stream[:cut]) + framer.feed(stream[cut:])
        assert lines == expected, cut
        assert framer.end() is None


def test_byte_by_byte_feeding_works() -> None:
    framer = LineFramer()
    lines: list[bytes] = []
    for byte in b"ab\r\ncd\n":
        lines += framer.feed(bytes([byte]))
    assert lines == [b"ab", b"cd"]


def test_crlf_is_stripped_but_a_lone_cr_inside_a_line_is_kept() -> None:
    framer = LineFramer()
    assert framer.feed(b"a\r\nb\rc\n") == [b"a", b"b\rc"]


def test_only_one_cr_is_stripped() -> None:
    assert LineFramer().feed(b"a\r\r\n") == [b"a\r"]


def test_blank_lines_are_skipped() -> None:
    framer = LineFramer()
    assert framer.feed(b"\n\r\n \t \n\t\r\nx\n") == [b"x"]


def test_the_first_line_knows_its_number_however_the_stream_is_cut() -> None:
    """A referee quotes a bad first line with its number: blank lines before it count."""
    stream = b"\n \t\r\n\nhello\n\nworld\n"
    for cut in range(1, len(stream)):
        framer = LineFramer()
        first = framer.feed(stream[:cut])
        if not first:
            first = framer.feed(stream[cut:])
        assert first[0] == b"hello"
        assert framer.leading_blank_lines + 1 == 4, cut


def test_a_line_of_exactly_the_cap_is_accepted() -> None:
    framer = LineFramer()
    line = b"x" * MAX_LINE_BYTES
    assert framer.feed(line) == []
    assert framer.buffered == MAX_LINE_BYTES
    assert framer.feed(b"\n") == [line]


def test_the_cap_counts_a_carriage_return() -> None:
    framer = LineFramer()
    with pytest.raises(LineTooLongError):
        framer.feed(b"x" * MAX_LINE_BYTES + b"\r\n")


def test_one_byte_over_the_cap_fails_without_waiting_for_the_newline() -> None:
    framer = LineFramer()
    framer.feed(b"x" * MAX_LINE_BYTES)
    with pytest.raises(LineTooLongError, match="65536"):
        framer.feed(b"x")
    assert framer.failed
    assert framer.buffered == 0


def test_a_complete_line_over_the_cap_in_one_feed_fails() -> None:
    framer = LineFramer(max_line_bytes=10)
    with pytest.raises(LineTooLongError):
        framer.feed(b"x" * 11 + b"\n")


def test_lines_before_the_long_one_are_not_lost() -> None:
    framer = LineFramer(max_line_bytes=10)
    with pytest.raises(LineTooLongError) as caught:
        framer.feed(b"ok1\nok2\n" + b"y" * 50)
    assert caught.value.lines == [b"ok1", b"ok2"]


def test_after_a_long_line_the_framer_stays_broken() -> None:
    framer = LineFramer(max_line_bytes=10)
    with pytest.raises(LineTooLongError):
        framer.feed(b"y" * 11)
    with pytest.raises(LineTooLongError):
        framer.feed(b"\nfine\n")
    assert framer.end() is None


def test_a_flood_never_buffers_more_than_the_cap() -> None:
    framer = LineFramer(max_line_bytes=1000)
    with pytest.raises(LineTooLongError):
        for _ in range(10_000):
            framer.feed(b"z" * 97)
            assert framer.buffered <= 1000
    assert framer.buffered == 0


def test_a_huge_chunk_fails_at_once_and_is_not_copied_into_the_buffer() -> None:
    framer = LineFramer()
    with pytest.raises(LineTooLongError):
        framer.feed(b"z" * (50 * MAX_LINE_BYTES))
    assert framer.buffered == 0


def test_end_reports_an_unterminated_last_line() -> None:
    framer = LineFramer()
    assert framer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert framer.end() == b'{"b"'


def test_end_at_a_line_boundary_reports_nothing() -> None:
    framer = LineFramer()
    framer.feed(b"x\n")
    assert framer.end() is None
    assert LineFramer().end() is None


def test_end_ignores_blank_leftovers() -> None:
    framer = LineFramer()
    framer.feed(b"x\n  \r")
    assert framer.end() is None


def test_feeding_after_the_end_is_an_error() -> None:
    framer = LineFramer()
    framer.end()
    with pytest.raises(StreamEndedError):
        framer.feed(b"x\n")


def test_framing_errors_are_value_errors() -> None:
    assert issubclass(LineTooLongError, ValueError)


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        LineFramer(max_line_bytes=0)


def test_a_bytearray_from_a_stream_can_be_fed() -> None:
    framer = LineFramer()
    assert framer.feed(bytearray(b"a\nb")) == [b"a"]
    assert framer.feed(bytearray(b"\n")) == [b"b"]
