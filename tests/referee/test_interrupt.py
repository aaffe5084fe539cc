"""Ctrl-C in the middle of a match leaves a log that is a clean prefix of the match.

``newmarket match`` is stopped by SIGINT, which trio turns into a
``KeyboardInterrupt``.  Whatever line the referee was at when the signal came,
the log it leaves must replay up to its end and stop "before the match's
result", never show a line twice or out of the engine's order.

The signal is raised for real (``signal.raise_signal``) at a chosen moment,
from inside the log's write to its file, which is where a loaded machine
most often delivers it: the process is in the ``write`` syscall and Python
runs the handler as it returns.  The bots are coroutines on in-memory streams
(``tests.referee.fakes``), so nothing depends on timing.
"""

from __future__ import annotations

import io
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio

import referee.match.referee
from engine import preset
from referee.match.failures import first_instance
from referee.match.log import LogError, MatchLog
from referee.match.referee import play_match
from referee.tools.replay import verify_log
from referee.transport.timecontrol import TimeControl
from tests.referee.fakes import fake_table, randomly

CONTROL = TimeControl(move_time=1.0, time_bank=0.0, margin=0.05)
LONG = preset("boodle").with_options({"hand_limit": 1000, "starting_chips": 1_000_000})


class _SignalAfterWrite(io.RawIOBase):
    """A file that raises SIGINT just after its ``at``-th write has reached the disk."""

    def __init__(self, file: io.BufferedWriter, at: int) -> None:
        self.file = file
        self.writes = 0
        self.at = at

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        written = self.file.write(data)  # type: ignore[arg-type]
        self.file.flush()
        self.writes += 1
        if self.writes == self.at:
            signal.raise_signal(signal.SIGINT)  # as if it came during the syscall
        return written

    def close(self) -> None:
        self.file.close()
        super().close()


def _log_interrupted_at(write: int) -> Callable[[Path | None], MatchLog]:
    def open_log(path: Path | None) -> MatchLog:
        log = MatchLog(path)
        assert log._file is not None
        log._file = io.BufferedWriter(_SignalAfterWrite(log._file, write), buffer_size=1)
        return log

    return open_log


@contextmanager
def _python_sigint() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt (as in a shell), whatever the test runner set."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _play_until_interrupted(log: Path) -> None:
    async def main() -> None:
        async with fake_table([randomly(seat) for seat in range(3)], CONTROL) as (sessions, _):
            await play_match(sessions, LONG, 5, time_control=CONTROL, match_id="m", log_path=log)

    with _python_sigint(), pytest.raises(BaseException) as raised:
        trio.run(main)
    assert first_instance(raised.value, KeyboardInterrupt) is not None, raised.value


@pytest.mark.parametrize("write", [3, 17, 40, 111])
def test_ctrl_c_during_a_log_write_leaves_a_clean_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: int
) -> None:
    monkeypatch.setattr(referee.match.referee, "MatchLog", _log_interrupted_at(write))
    log = tmp_path / "m.jsonl"
    _play_until_interrupted(log)
    lines = log.read_bytes().splitlines()
    assert len(lines) == len(set(lines)), "a line of the log was written twice"
    with pytest.raises(LogError, match="before the match's result"):
        verify_log(log)
