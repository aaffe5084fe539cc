"""The speed round's shortcuts change no byte a user sees: the log and the wire are the same.

A connection over file descriptors writes and reads them directly, and over
any other stream goes through trio's ``Stream`` (``referee.connection``); a
match without a log file builds no log records at all (``_Referee.logging``).
The same match, with the same fake bots on a virtual clock, is played over
memory streams and over socket pairs, with and without a log file: every
seat's wire, the log file and the result must come out the same.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import trio

from engine import preset
from referee.match import MatchResult, play_match
from referee.timecontrol import TimeControl
from tests.referee.fakes import fake_table, randomly

CONTROL = TimeControl(move_time=1.0, time_bank=5.0)


async def play(log: Path | None, *, sockets: bool) -> tuple[MatchResult, list[list[str]]]:
    policies = [randomly(seed) for seed in range(4)]
    async with fake_table(policies, CONTROL, sockets=sockets) as (sessions, wires):
        if sockets:  # the road under test is the descriptors' one
            for session in sessions:
                assert session.connection is not None
                assert isinstance(session.connection.stream, trio.SocketStream)
        result = await play_match(
            sessions,
            dataclasses.replace(preset("boodle"), hand_limit=6),
            7,
            time_control=CONTROL,
            match_id="fast-paths",
            log_path=log,
        )
    return result, [wire.transcript for wire in wires]


def scored(result: MatchResult) -> dict[str, object]:
    """The result as a league records it, where its log went left out."""
    record = result.to_json()
    record.pop("log_path")
    return record


def log_lines(path: Path) -> tuple[list[str], list[str]]:
    """The log's lines, the header's wall-clock start time and the result's own path
    left out: the game, in order, and then the match's end, sorted.

    Each seat is told the end by its own task, all at once (``finish_all``), in an
    order of trio's choosing (it reverses a batch of tasks at random), with or
    without the shortcuts; so those records are compared as a set.
    """
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header.pop("started", None)
    lines[0] = json.dumps(header)
    lines = [line.replace(str(path), "LOG") for line in lines]
    end = next(i for i, line in enumerate(lines) if '"type":"match_end"' in line)
    return lines[:end], sorted(lines[end:])


async def test_the_log_and_the_wire_are_the_same_over_descriptors_and_streams(
    autojump_clock: object, tmp_path: Path
) -> None:
    streams, streams_wire = await play(tmp_path / "streams.jsonl", sockets=False)
    fds, fds_wire = await play(tmp_path / "fds.jsonl", sockets=True)
    assert streams.hands == 6
    assert fds_wire == streams_wire
    assert log_lines(tmp_path / "fds.jsonl") == log_lines(tmp_path / "streams.jsonl")
    assert scored(fds) == scored(streams)


async def test_a_match_without_a_log_file_plays_and_scores_the_same(
    autojump_clock: object, tmp_path: Path
) -> None:
    logged, logged_wire = await play(tmp_path / "logged.jsonl", sockets=True)
    unlogged, unlogged_wire = await play(None, sockets=True)
    assert unlogged_wire == logged_wire
    assert scored(unlogged) == scored(logged)
