"""What a user meets in daily use of ``newmarket``, beyond the shared conventions.

Each test is one thing a bot writer, a league organiser or a host ran into
(Ctrl-C midway, a table piped into a file, help read at 80 columns) and
asserts what they now see.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn

import pytest
import trio
from rich.console import Console

import referee.commands.check
import referee.commands.connect
import referee.commands.sprt
from bots.registry import BUNDLED
from engine import preset
from referee.bots import resolve_bot
from referee.cli import EXIT_CODES, SHORT_HELP
from referee.commands.bots import bots_table
from referee.commands.match import print_result
from referee.league.league_file import load_config
from referee.league.standings import StandingRow, Standings
from referee.match.result import MatchResult, SeatResult
from referee.text.printing import print_whole
from referee.tools.check import render_stderr
from tests.clirun import newmarket
from tests.match_logs import log_text, only_log

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def test_ctrl_c_inside_a_trio_nursery_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ctrl-C during `newmarket check` or `sprt` lands in a nursery, which wraps it in an
    # exception group: that used to end in a traceback (and exit 1) instead of exit 130.
    def check_interrupted(*_args: Any, **_kwargs: Any) -> NoReturn:
        async def pressed() -> None:
            raise KeyboardInterrupt

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(pressed)

        trio.run(main)
        raise AssertionError("unreachable")

    monkeypatch.setattr(referee.commands.check, "check_bot", check_interrupted)
    code, _out, err = newmarket("check", "random")
    assert code == 130
    assert err.strip() == "interrupted"


# ---------------------------------------------------------------- tables, piped or on a terminal


def test_bots_and_rules_piped_keep_every_row_and_hint_on_one_line() -> None:
    # Piped (`newmarket bots | less`), the tables were laid out at 80 columns: the C bot's
    # build path was cut with an ellipsis and every description and hint wrapped mid-phrase.
    _code, out, _err = newmarket("bots")
    lines = out.splitlines()
    assert "…" not in out
    for name, bot in BUNDLED.items():
        row = next(line for line in lines if line.startswith(f"│ {name} "))
        assert bot.description in row
    hint = "Give a name to --bot (`--bot tracker`), or any command line "
    assert hint + '(`--bot "node bots/js/bot.js"`).' in lines
    _code, out, _err = newmarket("rules")
    assert "`newmarket rules NAME` shows every option of a preset; " in out
    assert any(line.endswith("changes one.") and "rules NAME" in line for line in out.splitlines())
    _code, out, _err = newmarket("rules", "stops")
    for option, _value, meaning in preset("stops").describe():
        assert any(option in line and meaning in line for line in out.splitlines()), option


def terminal(width: int) -> tuple[Console, io.StringIO]:
    screen = io.StringIO()
    return Console(file=screen, force_terminal=True, width=width, color_system=None), screen


def test_standings_on_a_narrow_terminal_leave_out_columns_instead_of_cutting_names() -> None:
    # rich squeezed the 17 columns into 80: the rank column vanished and every name and
    # score was cut to two letters and an ellipsis.
    names = ["alice", "bob-the-builder", "carol", "dave"]
    rows = [
        StandingRow(rank=n, name=name, matches=40, score=1.5 - n, score_low=-9.5, score_high=9.5)
        for n, name in enumerate(names, start=1)
    ]
    h2h = {a: {b: (0.5, 4) for b in names if b != a} for a in names}
    standings = Standings("cup", "round_robin", 40, 40, True, rows, head_to_head=h2h)
    table = standings.table(all_columns=True)
    console, screen = terminal(80)
    print_whole(table, console)
    text = screen.getvalue()
    assert "…" not in text
    *table_lines, note = text.rstrip("\n").splitlines()
    assert all(len(line) <= 80 for line in table_lines)
    header = next(line for line in table_lines if "score" in line)
    assert header.split()[:3] == ["rank", "name", "score"]
    for n, name in enumerate(names, start=1):
        assert any(line.split()[:2] == [str(n), name] for line in table_lines)
    assert note.startswith("(left out to fit 80 columns: ")
    assert "faults, disqualifications;" in note and "less -S" in note
    wide, screen = terminal(200)
    print_whole(table, wide)  # room for everything: nothing left out
    assert "left out" not in screen.getvalue() and " disqualifications" in screen.getvalue()
    # Without --all, the one ranking and its intervals fit 80 columns whole.
    narrow, screen = terminal(80)
    print_whole(standings.table(), narrow)
    assert "left out" not in screen.getvalue() and "…" not in screen.getvalue()


def test_a_match_result_on_a_narrow_terminal_keeps_every_name_whole() -> None:
    seats = [
        SeatResult(n, name, n + 1, 40 - n, "ok", [], -n, 0, 1)
        for n, name in enumerate(["a-rather-long-bot-name", "random", "lowest"])
    ]
    result = MatchResult("m1", 7, {}, 3, seats, None, "hand_limit")
    console, screen = terminal(60)
    print_result(console, result)
    text = screen.getvalue()
    assert "a-rather-long-bot-name" in text and "…" not in text
    assert "left out to fit 60 columns:" in text


# ---------------------------------------------------------------- help at 80 columns


def test_the_command_list_is_whole_and_in_the_order_users_meet_the_commands() -> None:
    # Each command's first docstring sentence was cut with "..." at 80 columns.
    _code, out, _err = newmarket("--help")
    listed = out.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == list(SHORT_HELP)
    for line, (name, text) in zip(listed, SHORT_HELP.items(), strict=True):
        assert line.split(None, 1) == [name, text]
        assert len(line) <= 80 and "..." not in line
    assert list(SHORT_HELP)[:3] == ["bots", "check", "match"]


@pytest.mark.parametrize("command", sorted(EXIT_CODES))
def test_every_help_line_fits_80_columns_and_each_exit_code_is_given_once(command: str) -> None:
    _code, out, _err = newmarket(command, "--help")
    assert max(len(line) for line in out.splitlines()) <= 80
    codes = out.split("Exit codes:\n", 1)[1].splitlines()
    numbers = [line.split()[0] for line in codes if line.startswith("    ") and line[4] != " "]
    assert len(numbers) == len(set(numbers)), codes  # sprt said "2 ..., or 2 a usage error"


# typer's names for a value's Python type: <int>, <float>, <str>, <path>, <list[str]>, <int range>
PYTHON_TYPE = re.compile(r"<(?:int|float|str|path|bool|list\[\w+\]|(?:int|float) range)>")


@pytest.mark.parametrize("command", sorted(EXIT_CODES))
def test_help_names_what_each_value_is_never_a_python_type(command: str) -> None:
    # typer wrote `COMMAND <list[str]>` for check's bot, `LOG <path>`, `--seed <int>`,
    # `--db <path>` and `-j, --concurrency, --jobs <int range>`: Python, not the user's words.
    _code, out, _err = newmarket(command, "--help")
    assert not PYTHON_TYPE.search(out), PYTHON_TYPE.findall(out)
    rows = [line.strip().split("  ")[0] for line in out.splitlines()]
    expected = {
        "check": ["COMMAND", "--matches N", "--rules NAME", "--move-time SECONDS",
                  "--transport stdio|tcp", "--sandbox LEVEL", "--log-dir, --logs DIR"],
        "match": ["--bot BOT", "--option KEY=VALUE", "--seed N", "--log-dir, --logs DIR"],
        "replay": ["LOG", "--seat SEAT", "--feed COMMAND"],
        "view": ["LOG", "--out DIR"],
        "league": ["LEAGUE.toml", "--db FILE", "-j, --concurrency, --jobs N",
                   "--cluster ADDRESS", "--port PORT"],
        "sprt": ["--candidate BOT", "--elo0 ELO", "--alpha P", "--score chips|places"],
        "report": ["--db FILE", "--out DIR", "--interval SECONDS"],
        "connect": ["HOST:PORT", "[-- COMMAND...]", "--bot BOT", "--token TOKEN", "--wait SECONDS"],
        "demo": ["--hand-limit, --hands N"],
        "simulate": ["--total-hands N", "--players N"],
    }  # fmt: skip
    for row in expected.get(command, []):
        assert row in rows, (row, rows)


# ---------------------------------------------------------------- Ctrl-C keeps what was learnt


def test_sprt_interrupted_prints_the_estimate_so_far_and_how_to_repeat_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ctrl-C midway through an SPRT ended in a traceback and lost the running estimate;
    # fastchess prints the result so far.  The Ctrl-C here lands after the first group.
    real_run = referee.commands.sprt.run_sprt

    async def pressed_after_one_group(settings: Any, report: Any) -> Any:
        def report_then_press(*args: Any) -> None:
            report(*args)
            raise KeyboardInterrupt

        return await real_run(settings, report_then_press)

    monkeypatch.setattr(referee.commands.sprt, "run_sprt", pressed_after_one_group)
    code, out, err = newmarket(
        "sprt", "--candidate", "lowest", "--baseline", "random", "--players", "3",
        "--hands", "2", "--seed", "5", "--sandbox", "none",
    )  # fmt: skip
    assert (code, out) == (130, ""), err  # like every command's "interrupted": on stderr
    last = err.splitlines()[-1]
    assert last.startswith("interrupted, undecided after 2 matches: chips/hand ")
    assert last.endswith("(--seed 5 plays the same deals)")


# ---------------------------------------------------------------- serve's management commands


def test_serve_management_says_how_to_name_the_competition_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `newmarket serve pause` looks for competition.toml; without one it said only
    # "cannot read", and `serve cup.toml add-participant alice` that it expected a file.
    monkeypatch.chdir(tmp_path)
    code, out, err = newmarket("serve", "pause")
    assert (code, out) == (2, "")
    assert err == (
        "error: competition.toml: no such competition file; name yours after the action "
        "(newmarket serve pause cup.toml)\n"
    )
    code, _out, err = newmarket("serve", "cup.toml", "add-participant", "alice")
    assert code == 2
    assert err == (
        "error: serve: the action comes first: newmarket serve add-participant alice cup.toml\n"
    )


def test_serve_management_takes_the_older_dash_c_spelling_with_a_note(tmp_path: Path) -> None:
    # `serve pause -c cup.toml` was the only spelling; it works for one more release.
    cup = tmp_path / "cup.toml"
    cup.write_text('[competition]\nname = "cup"\n')
    code, _out, err = newmarket("serve", "pause", "-c", str(cup))
    assert code == 0
    assert err.splitlines() == [
        f"note: 'newmarket serve pause -c {cup}' is the older spelling of "
        f"'newmarket serve pause {cup}'; it works until the next release",
        "competition 'cup': paused",
    ]
    code, _out, err = newmarket("serve", "resume", str(cup), "-c", str(tmp_path / "other.toml"))
    assert code == 2 and "two competition files" in err


# ---------------------------------------------------------------- the examples


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.toml")), ids=lambda path: path.name)
def test_every_example_league_loads_with_bundled_bots(example: Path) -> None:
    config = load_config(example)
    assert len(config.bots) >= config.table_size
    assert all(bot.command for bot in config.bots)  # every bot starts here, none is remote


def test_the_quick_example_leaves_out_the_search_bot_that_takes_hours() -> None:
    config = load_config(EXAMPLES / "quick.toml")
    assert "search" not in [bot.name for bot in config.bots]
    assert config.rules.hand_limit <= 10


def test_connect_takes_a_bundled_bot_by_name_as_check_and_match_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `newmarket connect HOST:PORT --token T -- random`, to try a league's address before
    # one's own bot is ready, said "program 'random' is not on PATH".
    started: list[list[str]] = []

    async def bridge(host: str, port: int, token: str, command: list[str], **_: Any) -> int:
        started.append(command)
        return 0

    monkeypatch.setattr(referee.commands.connect, "bridge", bridge)
    code, _out, err = newmarket("connect", "127.0.0.1:7464", "--token", "t", "--", "random")
    assert code == 0, err
    assert started == [list(resolve_bot("random").command)]


def test_a_cutechess_style_single_dash_option_is_named_as_typed() -> None:
    # click read `-concurrency` as `-c -o -n ...` and said "No such option: -c".
    code, _out, err = newmarket("league", "league.toml", "-concurrency", "2")
    assert code == 2
    assert err == (
        "error: No such option: -concurrency; did you mean --concurrency? "
        "(see `newmarket league --help`)\n"
    )
    code, _out, err = newmarket("match", "-games", "3", "--bot", "random")
    assert code == 2
    assert err.startswith("error: No such option: -games (options here take two dashes; ")
    assert "docs/cli.md" in err and len(err.splitlines()) == 1


def test_a_demo_of_one_hand_says_one_hand() -> None:
    _code, out, _err = newmarket("demo", "--seed", "3", "--hands", "1")
    assert out.startswith("Newmarket demo: boodle rules, 4 random players, 1 hand, seed 3 ")


def test_check_of_one_random_match_says_one_match(monkeypatch: pytest.MonkeyPatch) -> None:
    def stop_after_the_header(*_args: Any, **_kwargs: Any) -> NoReturn:
        raise KeyboardInterrupt

    monkeypatch.setattr(referee.commands.check, "check_bot", stop_after_the_header)
    code, out, _err = newmarket("check", "--matches", "1", "--seed", "4", "random")
    assert code == 130
    assert "\nthen 1 random match, seed 4\n" in out


# ---------------------------------------------------------------- a bot writer's slips


def test_a_bot_file_given_without_its_interpreter_gets_the_command_that_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `--bot mybot.py` is looked up on PATH, as a shell would; the error said only that.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybot.py").write_text("print('ready')\n")
    (tmp_path / "bots").mkdir()
    code, _out, err = newmarket("match", "--bot", "random", "--bot", "lowest", "--bot", "mybot.py")
    assert code == 2
    assert err == (
        "error: --bot: program 'mybot.py' is not on PATH; "
        "to run the file mybot.py here, give 'python3 mybot.py'\n"
    )
    code, _out, err = newmarket("check", "--", "./bots")
    assert (code, err) == (2, "error: COMMAND: program './bots' is a directory\n")


def test_ctrl_c_while_the_commands_are_imported_is_one_line_and_exit_130() -> None:
    # Ctrl-C in the first second (a league started on the wrong file) used to print a
    # traceback through whichever import it landed in.
    interrupt_an_import = (
        "import sys\n"
        "class Pressed:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'referee.commands.check':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Pressed())\n"
        "from referee.cli import main\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", interrupt_an_import],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "interrupted\n")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--alpha", "2"], "--alpha: must be between 0 and 0.5 (exclusive), got 2"),
        (["--elo1", "-5"], "--elo1: must be greater than --elo0 (0), got -5"),
        (["--chips1", "-1"], "--chips1: must be greater than --chips0 (0 chips per hand), got -1"),
        (["--log-dir", "/proc/no/such"], "--log-dir /proc/no/such: cannot create the directory"),
    ],
)
def test_sprt_hypotheses_errors_name_the_flag_typed(flags: list[str], message: str) -> None:
    # They named all six flags at once ("--elo0/--elo1/--chips0/--chips1/--alpha/--beta:
    # alpha: ...") and --elo1 -5 as "chips1 (-0.06666666666666667) must be greater ...".
    code, _out, err = newmarket("sprt", "--candidate", "lowest", "--baseline", "random", *flags)
    assert code == 2
    assert err.startswith(f"error: {message}") and len(err.splitlines()) == 1


def test_check_with_a_log_dir_that_cannot_be_made_is_a_usage_error() -> None:
    # It was a traceback from deep in the check, after the header was printed.
    code, out, err = newmarket("check", "--log-dir", "/proc/no/such", "--matches", "1", "random")
    assert (code, out) == (2, "")
    assert err == (
        "error: --log-dir /proc/no/such: cannot create the directory: No such file or directory\n"
    )


@pytest.mark.parametrize("command", [["standings", "--db", "x.db"], ["league", "x.toml"]])
def test_json_and_csv_together_is_a_usage_error(command: list[str]) -> None:
    # --json won and --csv was dropped without a word.
    code, out, err = newmarket(*command, "--json", "--csv")
    assert (code, out) == (2, "")
    assert err == "error: --json and --csv: give one (the standings are printed once)\n"


def test_bots_on_an_80_column_terminal_fold_a_long_path_instead_of_cutting_it() -> None:
    console, screen = terminal(80)
    table = bots_table()
    table.add_row("mine", "c", "yes", "built: /root/.cache/newmarket/bot-e497a6f1965c9be6", "mine")
    console.print(table)
    folded = "".join(line.split("│")[4].strip() for line in screen.getvalue().splitlines()[-6:-1])
    assert "…" not in screen.getvalue()
    assert "/root/.cache/newmarket/bot-e497a6f1965c9be6" in folded


def test_help_as_a_command_and_other_tools_names_for_ours() -> None:
    code, out, _err = newmarket("help", "league")
    assert code == 0 and out.startswith("Usage: newmarket league ")
    code, out, _err = newmarket("help")
    assert code == 0 and "Commands:" in out
    # click guessed 'replay' for 'play'.
    code, out, err = newmarket("play", "--bot", "random")
    assert (code, out) == (2, "")
    assert err == (
        "error: No such command 'play'; newmarket calls it 'match' (see `newmarket match --help`)\n"
    )


def test_output_cut_short_by_its_reader_exits_141_not_the_failure_code(tmp_path: Path) -> None:
    # `newmarket replay LOG | head` exited 1, replay's "the log does not verify".
    played = subprocess.run(
        [sys.executable, "-m", "referee.cli", "match", "--bot", "random", "--bot", "lowest",
         "--bot", "tracker", "--seed", "3", "--hands", "3", "--sandbox", "none",
         "--log-dir", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, check=False,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    log = only_log(tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write fails
    try:
        reader_gone = subprocess.run(
            [sys.executable, "-m", "referee.cli", "replay", str(log)],
            stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=REPO, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (reader_gone.returncode, reader_gone.stderr) == (141, "")


# ---------------------------------------------------------------- replay of a file that is no log


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (b"", "is empty"),
        (b"hello\n", "line 1: not JSON"),
        (b'{"type": "result"}\n', "line 1: the first line must be the header, got 'result'"),
        (b'{"type": "header", "format": 9}\n', "line 1: log format 9; this replay reads"),
        (b'{"type": "header"', "line 1: the last line is cut short"),
    ],
)
def test_replay_of_a_file_that_is_no_match_log_is_a_usage_error(
    tmp_path: Path, content: bytes, what: str
) -> None:
    # An empty file or a wrong one (a league's TOML, a CSV) exited 1, "does not verify",
    # which a script reads as a tampered log; it is a bad argument, as a missing file is.
    bad = tmp_path / "games.jsonl"
    bad.write_bytes(content)
    for args in (["replay"], ["replay", "--json"], ["replay", "--seat", "0", "--wire"], ["view"]):
        code, out, err = newmarket(*args, str(bad))
        assert (code, out) == (2, ""), args
        assert err.startswith(f"error: LOG: {bad}") and what in err, args
        assert err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == [bad]  # view wrote no page of it


# ---------------------------------------------------------------- stdout holds the result alone


def test_match_and_sprt_piped_put_the_result_alone_on_stdout(tmp_path: Path) -> None:
    # `newmarket match ... > result.txt` began with the sandbox's description and a
    # "Playing ..." line, and `sprt > verdict.txt` with every progress line: notes belong
    # on stderr, as a league's progress does, so stdout is the result a script reads.
    log = tmp_path / "m.jsonl"
    code, out, err = newmarket(
        "match", "--bot", "random", "--bot", "lowest", "--bot", "tracker",
        "--seed", "3", "--hands", "2", "--sandbox", "none", "--log-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith("Match ") and "seed 3" in out.splitlines()[0]
    (log,) = tmp_path.glob("*.jsonl")
    assert out.splitlines()[-1] == f"Log: {log}   (newmarket replay {log})"
    assert "sandbox" not in out and "Playing" not in out
    # rich padded the title to the table's width: a pipe gets no trailing spaces.
    assert [line.rstrip() for line in out.splitlines()] == out.splitlines()
    assert err.splitlines()[0].startswith("sandbox none")
    assert err.splitlines()[1] == f"Playing random, lowest, tracker · seed 3 · log {log}"
    code, out, err = newmarket(
        "sprt", "--candidate", "lowest", "--baseline", "random", "--players", "3",
        "--hands", "2", "--seed", "3", "--max-matches", "2", "--sandbox", "none",
    )  # fmt: skip
    assert code == 2, err  # undecided after one group
    assert out.startswith("undecided after 2 matches (2 matches, ") and out.count("\n") == 1
    assert "LLR" in err and "undecided" not in err


# ---------------------------------------------------------------- a bot's long stderr line


def test_a_bot_that_cannot_start_is_said_once_with_both_ends_of_its_stderr_and_its_log(
    tmp_path: Path,
) -> None:
    # "warning: broken could not start: ...; stderr: Traceback ... No mod…": cut at 160
    # characters, the line's end (what was wrong) lost, with no word of where the rest was.
    # And said again for every start each worker tried, then once more per match as
    # "mNN: broken disqualified (startup ...)": dozens of times in a league of 30 bots.
    said = "import numpy as np; ModuleNotFoundError: No module named 'numpy' " + "x" * 200
    (tmp_path / "broken.py").write_text(
        f"import sys\nsys.stderr.write({said + ' END'!r} + '\\n')\nsys.exit(1)\n"
    )
    (tmp_path / "cup.toml").write_text(
        '[league]\nname = "t"\nseed = 1\ntable_size = 3\nhand_limit = 1\nlogs = "logs"\n'
        "[schedule]\nduplicate = false\n"
        '[[bots]]\nname = "random"\ncommand = "random"\n'
        '[[bots]]\nname = "lowest"\ncommand = "lowest"\n'
        '[[bots]]\nname = "longest"\ncommand = "longest"\n'
        f'[[bots]]\nname = "broken"\ncommand = ["{sys.executable}", "broken.py"]\n'
    )
    code, _out, err = newmarket(
        "league", str(tmp_path / "cup.toml"), "--db", str(tmp_path / "cup.db"),
        "--sandbox", "none", "-j", "2",
    )  # fmt: skip
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, err  # 9 of the 12 matches, on two workers: one line, one count
    said_once, counted = warnings
    match_id = said_once.removeprefix("warning: ").split(":")[0]
    assert said_once.startswith(
        f"warning: {match_id}: broken could not start: exited with status 1 before ready; "
        "stderr: import numpy as np; ModuleNotFoundError: No module named"
    )
    assert " chars… " in said_once and "xxx END (whole stderr in " in said_once
    log = Path(said_once.split("(whole stderr in ")[1].split(")")[0])
    assert log == tmp_path / "logs" / f"{match_id}.nmr"  # a compact record, by default
    assert said + " END" in log_text(log)  # the whole line is where the warning says
    assert said_once.endswith(
        "; disqualified here and in each match it cannot start (one line at the end counts them)"
    )
    assert counted == (
        "warning: broken could not start in 9 matches of this run, each a disqualification "
        f"with its seat played by the default policy (the first: {match_id})"
    )


def test_check_show_stderr_shows_every_line_whole() -> None:
    # --show-stderr promised "all the bot's stderr", yet cut every line past 180
    # characters; without it a cut line now says so, and how to see it whole.
    long = "warning: " + "y" * 300 + " END"
    assert render_stderr(f"starting\n{long}\n", None) == [
        "The bot's stderr:",
        "  | starting",
        f"  | {long}",
    ]
    head, first, cut = render_stderr(f"starting\n{long}\n", 20)
    assert head == (
        "The bot's stderr (lines over 180 characters cut in the middle; "
        "--show-stderr shows it all, whole):"
    )
    assert first == "  | starting" and " chars… " in cut and cut.endswith("y END")


def test_arguments_are_named_in_help_and_errors_as_the_docs_name_them() -> None:
    # `newmarket league` said "Missing argument 'league_file'" and replay's help read
    # "newmarket replay [OPTIONS] {log}": Python's parameter names, not the docs' LOG.
    for command, name in [("replay", "LOG"), ("view", "LOG"), ("league", "LEAGUE.toml"),
                          ("tokens", "LEAGUE.toml")]:  # fmt: skip
        code, out, _err = newmarket(command, "--help")
        assert code == 0 and out.splitlines()[0].endswith(f" {{{name}}}"), out
        code, out, err = newmarket(command)
        assert (code, out) == (2, "")
        assert err.startswith(f"error: Missing argument '{name}'."), err
    _code, out, _err = newmarket("rules", "--help")
    assert out.splitlines()[0] == "Usage: newmarket rules [OPTIONS] [NAME]"


def test_demo_league_refuses_the_flags_it_would_ignore() -> None:
    # `newmarket demo --league --seed 5` played the fixed demo league as if 5 were its seed.
    for flag, value in (("--seed", "5"), ("--hand-limit", "2")):
        code, out, err = newmarket("demo", "--league", flag, value)
        assert (code, out) == (2, "")
        assert err == (
            f"error: {flag}: only for the hand-by-hand demo; --league plays a fixed league "
            "(its own seed, 4 hands a match)\n"
        )


def test_a_spin_setting_that_is_no_number_of_microseconds_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NEWMARKET_SPIN", "lots")
    code, out, err = newmarket("rules")
    assert code == 2 and out == ""
    assert err == (
        "error: NEWMARKET_SPIN: expected microseconds from 0 to 1000 (0: never spin), got 'lots'\n"
    )
    monkeypatch.setenv("NEWMARKET_SPIN", "0")
    code, out, _ = newmarket("rules")
    assert code == 0 and "boodle" in out
