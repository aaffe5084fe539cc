"""The operations log: the lines an organiser reads, and the file a page or a script reads back."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pytest

from referee.server.operations import (
    OperationsLog,
    log_operation,
    read_operations,
    set_operations_log,
)
from tests.clirun import newmarket

NOON = 1_795_867_200.0  # 2026-11-28 12:00:00 UTC


def test_a_human_line_has_time_kind_and_fields() -> None:
    out = io.StringIO()
    log = OperationsLog(stream=out, clock=lambda: NOON)
    log.log("upload", participant="alice", version=3, bytes=2048)
    assert out.getvalue() == (
        "newmarket serve: 2026-11-28T12:00:00Z upload participant=alice version=3 bytes=2048\n"
    )


def test_a_json_line_is_one_object_per_line() -> None:
    out = io.StringIO()
    log = OperationsLog(stream=out, format="json", clock=lambda: NOON)
    log.log("rejection", version=4, why="check: illegal move\nforged=1")
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {
        "time": "2026-11-28T12:00:00Z",
        "kind": "rejection",
        "version": 4,
        "why": "check: illegal move\nforged=1",
    }


def test_a_hostile_value_cannot_start_a_line_or_fake_a_field() -> None:
    out = io.StringIO()
    log = OperationsLog(stream=out, clock=lambda: NOON)
    log.log("upload", participant="eve\nnewmarket serve: 2026 stop", version=1)
    log.log("organiser", action="ban", participant="x version=9")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert 'participant="eve\\nnewmarket serve: 2026 stop"' in lines[0]
    assert lines[1].endswith('action=ban participant="x version=9"')


def test_none_and_booleans_read_as_words() -> None:
    out = io.StringIO()
    OperationsLog(stream=out, clock=lambda: NOON).log("pace", settled=True, why=None, rate=1.5)
    assert out.getvalue().endswith(" pace settled=yes why=- rate=1.5\n")


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown operation kind 'uplaod'"):
        OperationsLog(stream=io.StringIO()).log("uplaod")


def test_the_file_gets_json_lines_from_every_process_and_is_private(tmp_path: Path) -> None:
    server = OperationsLog.for_data(tmp_path, stream=io.StringIO())
    shell = OperationsLog.for_data(tmp_path, stream=None)  # a management command
    server.log("start", address="127.0.0.1:8000")
    shell.log("organiser", action="pause", who="shell")
    server.log("stop", why="signal")
    path = tmp_path / "operations.log"
    assert [r["kind"] for r in read_operations(path)] == ["start", "organiser", "stop"]
    assert read_operations(path, limit=1)[0]["why"] == "signal"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_file_that_cannot_be_written_is_said_once_and_the_line_still_goes_out(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    log = OperationsLog(stream=out, path=tmp_path / "missing" / "operations.log")
    log.log("start")
    log.log("stop")
    text = out.getvalue()
    assert text.count("cannot append to the operations log") == 1
    assert " start" in text and " stop" in text


def test_a_cut_line_in_the_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "operations.log"
    path.write_text('{"time":"t","kind":"start"}\n{"time":"t","ki\n')
    assert read_operations(path) == [{"time": "t", "kind": "start"}]
    assert read_operations(tmp_path / "none.log") == []


def test_log_operation_writes_to_the_log_set_for_the_process() -> None:
    out = io.StringIO()
    previous = set_operations_log(OperationsLog(stream=out, clock=lambda: NOON))
    try:
        log_operation("suspension", version=7, why="3 crashes")
    finally:
        set_operations_log(previous)
    assert out.getvalue().endswith(' suspension version=7 why="3 crashes"\n')


def test_serve_refuses_an_unknown_log_format_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "cup.toml"
    config.write_text('[competition]\nname = "x"\nhouse_bots = []\n')
    code, _out, err = newmarket("serve", str(config), "--log-format", "xml")
    assert code == 2
    assert err.strip() == "error: serve: --log-format 'xml': expected human or json"
    assert not (tmp_path / "x-data").exists() and not (tmp_path / "cup-data").exists()


def test_a_management_word_typed_in_the_shell_adds_its_line_to_the_competition_s_log(
    tmp_path: Path,
) -> None:
    # The organiser's actions from the shell land in the same file as the server's own
    # lines, so the operations log tells the whole story whichever way the organiser acted.
    cup = tmp_path / "cup.toml"
    cup.write_text('[competition]\nname = "cup"\n')
    assert newmarket("serve", "pause", str(cup))[0] == 0
    assert newmarket("serve", "add-participant", "alice", str(cup))[0] == 0
    lines = read_operations(tmp_path / "cup-data" / "operations.log")
    assert [(line["kind"], line["action"], line["via"]) for line in lines] == [
        ("organiser", "pause", "cli"),
        ("organiser", "add-participant", "cli"),
    ]
    assert lines[1]["target"] == "alice" and "token" not in json.dumps(lines[1]).lower()
