"""The pipe between a pool and its table workers: typed messages, and bad lines refused clearly.

A table worker runs bot processes and may die or write anything; what the
pool reads from it is one of its messages or a ``PipeError`` saying what was
wrong, which the pool turns into ``WorkerDied`` (the match is played again),
never a crash of the league or the server.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio

from engine import preset
from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.tables.job import WorkerDied
from referee.tables.messages import (
    Failed,
    PipeError,
    Play,
    Result,
    Setup,
    Warn,
    decode_from_worker,
    decode_to_worker,
    encode,
)
from referee.tables.process import WORKER_COMMAND, WorkerProcess
from referee.transport.timecontrol import TimeControl

KEY = MatchKey("m7", 7, 1, 2, 0, 99, (0, 2, 1), (40, 40, 40), 12345)
SPEC = BotSpec("ann", ("python3", "ann.py"), cwd=Path("/srv/ann"), env={"LEVEL": "3"})


def test_every_message_arrives_as_it_was_sent() -> None:
    sent: list[Setup | Play] = [
        Setup(TimeControl(move_time=0.5), "/logs", 3, [SPEC], '{"level": "none"}', 5, 1024),
        Setup(TimeControl(), None, 1),
        Play(KEY, preset("boodle").to_dict(), {4: SPEC}, [0, 4]),
        Play(KEY, preset("boodle").to_dict()),
    ]
    for message in sent:
        assert decode_to_worker(encode(message).rstrip(b"\n")) == message
    back: list[Result | Warn | Failed] = [
        Result({"match_id": "m7"}),
        Warn("ann could not start"),
        Failed("m7: disk full"),
    ]
    for reply in back:
        assert decode_from_worker(encode(reply).rstrip(b"\n")) == reply


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"Traceback (most recent call last):", "not JSON"),
        (b'{"type": "result"', "not JSON"),
        (b'{"type": "warn", "text": "\xff"}', "not valid UTF-8"),
        (b"[1, 2]", "not a message"),
        (b'{"text": "no type"}', "not a message"),
        (b'{"type": "hello", "text": "x"}', "not a message"),
        (b'{"type": "warn"}', "not a message: Object missing required field `text`"),
        (b'{"type": "warn", "text": 5}', "not a message: Expected `str`, got `int`"),
        (b'{"type": "warn", "text": "x", "extra": 1}', "not a message"),
        (b'{"type": "result", "result": ' + b"[" * 5000 + b"]" * 5000 + b"}", "nested"),
        (b'{"type": "play", "key": {}, "rules": {}}', "not a message"),  # a pool's, not a worker's
    ],
)
def test_a_line_that_is_not_a_workers_message_is_a_pipe_error_naming_why(
    line: bytes, why: str
) -> None:
    with pytest.raises(PipeError) as caught:
        decode_from_worker(line)
    assert why in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_bot_spec_that_breaks_its_own_rules_is_refused_on_the_pipe() -> None:
    line = encode(Play(KEY, {}, {1: SPEC})).replace(b'"transport":"stdio"', b'"transport":"udp"')
    with pytest.raises(PipeError, match="transport"):
        decode_to_worker(line.rstrip(b"\n"))


# A stand-in for a table worker that has gone wrong: it reads the pool's two lines
# (setup, play) and answers the play with the line given as its first argument.
_BROKEN_WORKER = (
    "import sys; sys.stdin.readline(); sys.stdin.readline(); "
    "sys.stdout.buffer.write(sys.argv[1].encode('latin-1') + b'\\n'); sys.stdout.flush(); "
    "sys.stdin.read()"
)


@pytest.mark.parametrize(
    ("reply", "death"),
    [
        ("I am not JSON", "its table worker wrote a bad line (not JSON"),
        ('{"type": "result", "result": {"seats": "none"}}', "its table worker sent a bad result"),
        ('{"type": "shout", "text": "hi"}', "its table worker wrote a bad line (not a message"),
    ],
)
async def test_a_worker_that_answers_garbage_is_a_death_not_a_crash(reply: str, death: str) -> None:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-c", _BROKEN_WORKER, reply],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    worker = WorkerProcess(process, warn=lambda _text: None)
    try:
        await worker.send(Setup(TimeControl(), None, 1))
        with trio.fail_after(30):
            with pytest.raises(WorkerDied) as caught:
                await worker.result_of(Play(KEY, preset("boodle").to_dict()))
        assert str(caught.value).startswith(death)
    finally:
        await worker.close()


def test_a_worker_sent_a_bad_line_exits_with_one_line_not_a_traceback() -> None:
    done = subprocess.run(
        WORKER_COMMAND,
        input=b'{"type": "setup", "number": "one"}\n',
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        "table worker: a bad line from its pool (not a message: Expected `int`, got `str` "
        "- at `$.number`)"
    ]
