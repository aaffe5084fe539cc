"""The pipe between a table pool and a table worker: typed messages, one JSON line each.

The two ends are the same program's, but the worker's end runs bot processes
and may die or write anything at any moment, so what arrives is decoded into
one of the declared messages or refused with ``PipeError`` naming what was
wrong; nothing else escapes the reader, however deep or strange the line
(``protocol.nesting_depth`` bounds it before it is decoded)::

    pool -> worker   Setup  {"type": "setup", "time_control": {...}, "logs": DIR | null,
                             "number": N, "bots": [...], "sandbox": "...", ...}
                     Play   {"type": "play", "key": {...}, "rules": {...},
                             "bots": {"INDEX": spec} | null, "keep": [INDEX, ...] | null}
    worker -> pool   Result {"type": "result", "result": {...},   (MatchResult.to_json)
                             "bot_starts": N, "most_bots": N}
                     Warn   {"type": "warn", "text": "..."}
                     Failed {"type": "error", "text": "..."}      (then it exits)

The sandbox setting (``referee.sandbox.setting_to_env``'s text) travels in
``Setup``: each worker resolves it on the machine where its bots run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any, Generic, TypeVar

import msgspec
import trio

from protocol import nesting_depth
from protocol.timing import DEFAULT_STDERR_CAP_BYTES
from referee.bots import BotSpec
from referee.match.archive import DEFAULT_LOG_FORM, LogForm
from referee.match.key import MatchKey
from referee.transport.timecontrol import TimeControl

PIPE_NESTING = 64  # a result nests about 6 deep; the pipe's reader is bounded all the same


class PipeError(ValueError):
    """A line on the pipe between a pool and a table worker is not one of its messages."""


class _Message(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Setup(_Message, frozen=True, tag="setup"):
    """The worker's first message: its settings for every match it will play.

    A roster that changes as it goes (the competition server) sends no ``bots``
    here; each ``Play`` then names the bots at its table.  ``niceness`` is taken
    by the worker and its bots, ``stderr_cap`` bounds each bot's stderr kept per
    match, and ``stderr_files`` false keeps no whole-session stderr files.
    ``bot_processes`` bounds the bot processes the worker runs at once and
    ``per_bot`` those of one bot (0: the worker's default,
    ``referee.tables.worker.IDLE_PER_SEAT``; ``referee.tables.bot_processes``).
    ``log_form`` is how each match's log is kept (``referee.match.archive``).
    """

    time_control: TimeControl
    logs: str | None
    number: int  # the worker's number, in its bots' stderr file names
    bots: list[BotSpec] = msgspec.field(default_factory=list)
    sandbox: str = ""  # the sandbox setting; empty: the default level and limits
    niceness: int = 0
    stderr_cap: int = DEFAULT_STDERR_CAP_BYTES
    stderr_files: bool = True
    bot_processes: int = 0
    per_bot: int = 0
    log_form: LogForm = DEFAULT_LOG_FORM


class Play(_Message, frozen=True, tag="play"):
    """A match to play; ``bots`` (learnt or relearnt) and ``keep`` for a changing roster.

    ``keep`` names the bots still in play: the processes of the others are
    ended, so a superseded version's process does not linger.
    """

    key: MatchKey
    rules: dict[str, Any]  # Rules.to_dict(); Rules.from_dict checks it
    bots: dict[int, BotSpec] | None = None
    keep: list[int] | None = None


class Result(_Message, frozen=True, tag="result"):
    """A match's result, and the worker's bot processes so far: started, and most at once."""

    result: dict[str, Any]  # result_json(result); result_from_json checks it
    bot_starts: int = 0
    most_bots: int = 0


class Warn(_Message, frozen=True, tag="warn"):
    text: str


class Failed(_Message, frozen=True, tag="error"):
    """The referee side of the worker failed (a log it cannot write); it exits after."""

    text: str


ToWorker = Setup | Play
FromWorker = Result | Warn | Failed


def _encode_hook(value: object) -> object:
    if isinstance(value, PurePath):  # a bot's working directory
        return str(value)
    raise NotImplementedError(f"cannot send a {type(value).__name__} to a table worker")


def _decode_hook(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, str):
        return Path(value)
    raise NotImplementedError(f"cannot read a {kind.__name__} from a table worker's pipe")


_encoder = msgspec.json.Encoder(enc_hook=_encode_hook)
_to_worker = msgspec.json.Decoder(ToWorker, dec_hook=_decode_hook)
_from_worker = msgspec.json.Decoder(FromWorker, dec_hook=_decode_hook)


def encode(message: ToWorker | FromWorker) -> bytes:
    """``message`` as one line of the pipe, newline included."""
    return _encoder.encode(message) + b"\n"


def decode_to_worker(line: bytes) -> ToWorker:
    """A line the pool sent, or ``PipeError`` saying why it is not one of its messages."""
    return _decode(_to_worker, line)  # type: ignore[no-any-return]


def decode_from_worker(line: bytes) -> FromWorker:
    """A line a table worker sent, or ``PipeError`` saying why it is not one of its messages."""
    return _decode(_from_worker, line)  # type: ignore[no-any-return]


def _decode(decoder: msgspec.json.Decoder[Any], line: bytes) -> Any:
    if nesting_depth(line, PIPE_NESTING) > PIPE_NESTING:
        raise PipeError(f"arrays or objects nested more than {PIPE_NESTING} deep")
    try:
        return decoder.decode(line)
    except UnicodeDecodeError:
        raise PipeError("not valid UTF-8") from None
    except msgspec.ValidationError as error:
        raise PipeError(f"not a message: {error}") from None
    except msgspec.DecodeError as error:
        raise PipeError(f"not JSON: {str(error).removeprefix('JSON is malformed: ')}") from None
    except RecursionError:  # only if the caller's own stack was already nearly full
        raise PipeError(f"arrays or objects nested more than {PIPE_NESTING} deep") from None


Message = TypeVar("Message")


class MessageReader(Generic[Message]):
    """Messages, one per line, from a byte stream; ``next`` is None when the stream ends."""

    def __init__(self, stream: trio.abc.ReceiveStream, decode: Callable[[bytes], Message]) -> None:
        self.stream = stream
        self.decode = decode
        self.buffer = bytearray()

    async def next(self) -> Message | None:
        """The next message, or None at the end; ``PipeError`` for a line that is not one."""
        while b"\n" not in self.buffer:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.buffer += data
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return self.decode(line)
