"""Line framing: bytes in, complete lines out, with a hard cap on what is buffered.

This module is sans-IO in the manner of h11: ``LineFramer`` does no reading or
writing.  The referee and the Python bot SDK read bytes however their transport
gives them (a pipe, a socket, a test's literal), ``feed`` them in, and act on
the lines that come out.  Keeping the framer free of I/O is what lets one class
serve stdio and TCP alike and lets tests split a stream at every byte.

The cap is the point of the class.  A bot is an untrusted peer: one that
writes a megabyte without a newline must cost the referee at most
``MAX_LINE_BYTES`` of memory and then a named error, never the process's
memory.  So the framer raises ``LineTooLongError`` as soon as an unfinished
line passes the cap, without waiting for a newline that may never come, and
then stays broken: after a framing error nothing that follows on the stream
can be trusted to start at a line boundary.

The rules (SPEC.md, "Framing"): a line ends with ``\\n``; one ``\\r`` just
before it is stripped; a line may hold at most ``MAX_LINE_BYTES`` bytes before
its ``\\n`` (a ``\\r`` counts); lines that are empty or hold only spaces and
tabs are skipped.  Bytes are not decoded here: UTF-8 is checked where the
JSON is parsed, so the error can name the message it spoiled.
"""

from __future__ import annotations

MAX_LINE_BYTES = 65536
"""The most bytes a line may hold before its terminating ``\\n``."""

_BLANK = b" \t"


class FramingError(ValueError):
    """The byte stream cannot be cut into lines any more."""


class LineTooLongError(FramingError):
    """A line passed ``MAX_LINE_BYTES`` before its newline.

    ``lines`` holds the complete lines that came before the long one in the
    same ``feed`` call, so a caller loses no message that was whole.
    """

    def __init__(self, message: str, lines: list[bytes] | None = None) -> None:
        super().__init__(message)
        self.lines: list[bytes] = list(lines or [])


class StreamEndedError(FramingError):
    """``feed`` was called after ``end``."""


class LineFramer:
    """Cuts a byte stream into lines; buffers at most ``max_line_bytes`` of an unfinished line.

    >>> framer = LineFramer()
    >>> framer.feed(b'{"type":"reply"')
    []
    >>> framer.feed(b',"id":1}\\r\\n{"type"')
    [b'{"type":"reply","id":1}']
    >>> framer.end()
    b'{"type"'
    """

    __slots__ = ("_buffer", "_ended", "_error", "_max", "leading_blank_lines")

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be at least 1, got {max_line_bytes}")
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._error: LineTooLongError | None = None
        self._ended = False
        # Blank lines skipped that came before the first line of their ``feed``'s result.
        # Read when a stream's first line is returned, it is that line's number minus one,
        # which a referee quotes to a bot whose first line is not ``ready``.  Counted on
        # the blank lines' own path only: a line of a reply costs nothing more.
        self.leading_blank_lines = 0

    def head(self, limit: int) -> bytes:
        """The first ``limit`` bytes of the unfinished line held now (b"" for none)."""
        return bytes(self._buffer[:limit])

    @property
    def max_line_bytes(self) -> int:
        return self._max

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line held now; never more than ``max_line_bytes``."""
        return len(self._buffer)

    @property
    def failed(self) -> bool:
        """True once a line was too long; every later ``feed`` raises again."""
        return self._error is not None

    def feed(self, data: bytes | bytearray) -> list[bytes]:
        """Add ``data`` and return the lines it completed, without terminators.

        Raises ``LineTooLongError`` once the current line passes the cap (also
        on every later call), and ``StreamEndedError`` after ``end``.
        """
        if self._error is not None:
            raise LineTooLongError(str(self._error))
        if self._ended:
            raise StreamEndedError("the stream has ended; no more data can be fed")
        buffer = self._buffer
        size = len(data)
        if size and not buffer and size <= self._max and data.find(b"\n") == size - 1:
            # The usual read: one whole line (a bot's reply), nothing held before it.
            line = bytes(data[:-1])
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip(_BLANK):
                return [line]
            self.leading_blank_lines += 1
            return []
        lines: list[bytes] = []
        start = 0
        while start < size:
            newline = data.find(b"\n", start)
            if newline < 0:
                if len(buffer) + size - start > self._max:
                    self._fail(len(buffer) + size - start, lines)
                buffer += data[start:]
                break
            length = len(buffer) + newline - start
            if length > self._max:
                self._fail(length, lines)
            if buffer:
                buffer += data[start:newline]
                line = bytes(buffer)
                buffer.clear()
            else:
                line = bytes(data[start:newline])
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip(_BLANK):
                lines.append(line)
            elif not lines:
                self.leading_blank_lines += 1
            start = newline + 1
        return lines

    def end(self) -> bytes | None:
        """Mark the end of the stream; return an unterminated last line, or None if there is none.

        A line without its ``\\n`` is not a message (SPEC.md, "Framing"): the
        caller reports it, it does not parse it.  Blank leftovers count as none.
        """
        self._ended = True
        rest = bytes(self._buffer)
        self._buffer.clear()
        if self._error is not None or not rest.strip(_BLANK + b"\r"):
            return None
        return rest

    def _fail(self, length: int, lines: list[bytes]) -> None:
        self._buffer.clear()
        message = f"line too long: {length} bytes and no newline (the limit is {self._max})"
        self._error = LineTooLongError(message)
        raise LineTooLongError(message, lines)
