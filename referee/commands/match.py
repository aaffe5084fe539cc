"""``newmarket match``: one match between bots, a result table, and a log to replay.

    newmarket match --bot random --bot lowest --bot "python3 mybot.py" --seed 7

Everything the referee itself needs is checked before any bot starts,
including that each bot's program exists and is executable, and a mistake
there is one line on stderr naming the argument, with exit code 2.  After
that nothing a bot does is an error of this command: a bot that fails its
handshake, crashes or cheats is a fault in the result table, and the command
exits 0 because the match was played to its end.  ``--bot NAME=COMMAND``
names a seat; otherwise its name is the bundled name or the command's.  That split is what lets a
script run this fifty times a day and trust the exit code.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import trio
import typer
from rich.console import Console
from rich.table import Table

from engine import DEFAULT_PRESET, MAX_PLAYERS, MIN_PLAYERS, Rules
from referee.bots import BotSpec
from referee.commands.common import (
    DEFAULT_SANDBOX,
    DEFAULT_TIME,
    AsCsv,
    AsJson,
    HandLimit,
    LogDir,
    Margin,
    MaxFaults,
    MoveTime,
    RuleOptions,
    RulesName,
    SandboxLevel,
    Seed,
    StartupTime,
    TimeBank,
    TransportName,
    UsageError,
    Verbose,
    bot_of,
    build_rules,
    deprecated,
    fail,
    sandbox_note,
    sandbox_of,
    time_control,
    transport_of,
)
from referee.match.dealkey import fresh_deal_seed
from referee.match.failures import first_instance
from referee.match.referee import play_match
from referee.match.result import MatchResult, result_json
from referee.sandbox import Sandbox
from referee.text.machine import field_name, only_one, write_csv
from referee.text.printing import print_line, print_whole
from referee.text.render import match_ending
from referee.transport.session import open_bots
from referee.transport.timecontrol import TimeControl

RUNS_DIR = Path("runs")


def build_specs(texts: Sequence[str], transport: str) -> list[BotSpec]:
    if not MIN_PLAYERS <= len(texts) <= MAX_PLAYERS:
        raise UsageError(
            f"--bot: a table seats {MIN_PLAYERS} to {MAX_PLAYERS} bots, got {len(texts)}"
        )
    kind = transport_of(transport)
    return unique_names([bot_of(text, "--bot", kind) for text in texts])


def unique_names(specs: list[BotSpec]) -> list[BotSpec]:
    """The same bot twice at a table is ``random`` and ``random#2``."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        count = seen.get(spec.name, 0) + 1
        seen[spec.name] = count
        if count > 1:
            spec = BotSpec(
                f"{spec.name}#{count}",
                spec.command,
                spec.cwd,
                spec.env,
                spec.transport,
                spec.unavailable,
            )
        out.append(spec)
    return out


def writable_log(path: Path, flag: str = "--log-dir") -> Path:
    """Check that the log can be written before any bot starts."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab"):
            pass
    except OSError as error:
        raise UsageError(f"{flag}: cannot write {path}: {error.strerror or error}") from None
    return path


def result_table(result: MatchResult) -> Table:
    """The places, chips and faults of a match, best first."""
    table = Table(
        title=f"Match {result.match_id} · seed {result.seed} · {result.hands} hands "
        f"({match_ending(result.reason)})",
        title_justify="left",
    )
    # No cell wraps or is cut: on a narrow terminal print_whole leaves out the last columns
    # instead (the faults are listed under the table too).
    for header in RESULT_HEADERS[:-1]:
        numeric = header not in ("name", "status")
        table.add_column(
            header,
            justify="right" if numeric else "left",
            style="bold" if header == "name" else "",
            no_wrap=True,
        )
    table.add_column(RESULT_HEADERS[-1], no_wrap=True)
    for cells in result_rows(result):
        if cells[7] == "disqualified":
            cells[7] = "[red]disqualified[/red]"
        cells[4] = f"{int(cells[4]):+d}"
        table.add_row(*cells[:-1], cells[-1] or "—")
    return table


# The table's headers are the JSON document's field names in words (``net chips`` for
# ``net_chips``), so a script reads the same names a person sees.
RESULT_HEADERS = (
    "place",
    "seat",
    "name",
    "chips",
    "net chips",
    "boodle chips",
    "hands won",
    "status",
    "faults",
)


def result_rows(result: MatchResult) -> list[list[str]]:
    """A row per seat, best first, a cell per ``RESULT_HEADERS``: what the table and --csv show."""
    rows = []
    for seat in sorted(result.seats, key=lambda s: (s.place, s.seat)):
        kinds: dict[str, int] = {}
        for fault in seat.faults:
            kinds[fault.kind] = kinds.get(fault.kind, 0) + 1
        faults = ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in kinds.items())
        rows.append(
            [
                str(seat.place),
                str(seat.seat),
                seat.name,
                str(seat.chips),
                str(seat.net_chips),
                str(seat.boodle_chips),
                str(seat.hands_won),
                seat.status,
                faults,
            ]
        )
    return rows


def print_result(console: Console, result: MatchResult) -> None:
    print_whole(result_table(result), console)  # a file or a pipe gets every column, uncut
    for seat in result.seats:
        for fault in seat.faults:
            where = f"hand {fault.hand}" if fault.hand else "start"
            print_line(
                console, f"  {seat.name} (seat {seat.seat}), {where}: {fault.kind}: {fault.detail}"
            )


async def run_match(
    specs: list[BotSpec],
    rules: Rules,
    seed: int,
    control: TimeControl,
    match_id: str,
    log_path: Path,
    sandbox: Sandbox | None = None,
) -> MatchResult:
    async with open_bots(specs, control, sandbox=sandbox) as sessions:
        return await play_match(
            sessions, rules, seed, time_control=control, match_id=match_id, log_path=log_path
        )


SeatBots = Annotated[
    list[str],
    typer.Option(
        "--bot",
        metavar="BOT",
        help="A bundled bot's name (see `newmarket bots`) or a command line, "
        "optionally NAME=COMMAND to name the seat; one per seat, 3 to 8.",
    ),
]
MatchLog = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        help="The older spelling: the log's file (use --log-dir; works until the next release).",
        hidden=True,
    ),
]


def match_command(
    bot: SeatBots,
    rules_name: RulesName = DEFAULT_PRESET,
    option: RuleOptions = None,
    seed: Seed = None,
    hands: HandLimit = None,
    move_time: MoveTime = DEFAULT_TIME.move_time,
    time_bank: TimeBank = DEFAULT_TIME.time_bank,
    startup_time: StartupTime = DEFAULT_TIME.startup_time,
    margin: Margin = DEFAULT_TIME.margin,
    max_faults: MaxFaults = DEFAULT_TIME.max_faults,
    transport: TransportName = "stdio",
    log_dir: LogDir = None,
    log: MatchLog = None,
    as_json: AsJson = False,
    as_csv: AsCsv = False,
    sandbox_level: SandboxLevel = DEFAULT_SANDBOX,
    verbose: Verbose = False,
) -> None:
    """Play one match between bots and print the result; exit 0 whatever the bots did."""
    try:
        specs = build_specs(bot, transport)
        rules = build_rules(rules_name, option or [], hands, len(specs))
        control = time_control(move_time, time_bank, startup_time, margin, max_faults)
        seed, match_id, dealt = deal_of(seed)
        only_one(as_json, as_csv)
        log_path = writable_log(
            log_file(log_dir, log, match_id), "--log" if log is not None else "--log-dir"
        )
        sandbox = sandbox_of(sandbox_level)
    except UsageError as error:
        raise fail(str(error)) from None
    # stdout holds the result alone (the table, or --json's document), so that
    # `newmarket match ... > result.txt` or `| jq` gets nothing else; what is about to
    # happen (the sandbox, the seats, the seed) is said on stderr, as league and sprt do.
    notes = Console(stderr=True)
    print_line(notes, sandbox_note(sandbox, verbose))
    names = ", ".join(spec.name for spec in specs)
    print_line(notes, f"Playing {names} · {dealt} · log {log_path}")
    result = play_to_end(specs, rules, seed, control, match_id, log_path, sandbox)
    if as_json:
        sys.stdout.write(json.dumps(result_json(result)) + "\n")
        return
    if as_csv:
        fields = [field_name(header) for header in RESULT_HEADERS]
        write_csv(fields, [dict(zip(fields, row, strict=True)) for row in result_rows(result)])
        return
    console = Console()
    print_result(console, result)
    print_line(console, f"Log: {log_path}   (newmarket replay {log_path})")


def log_file(log_dir: Path | None, log: Path | None, match_id: str) -> Path:
    """Where the match's log goes: ``--log-dir`` (default runs/), or the older ``--log FILE``."""
    if log is not None:
        if log_dir is not None:
            raise UsageError("--log: give --log-dir DIR alone (--log FILE is its older spelling)")
        deprecated(f"--log {log}", f"--log-dir {log.parent}")
        return log
    return (log_dir if log_dir is not None else RUNS_DIR) / f"{match_id}.jsonl"


def deal_of(seed: int | None) -> tuple[int, str, str]:
    """The deal's seed, the match id, and how the deal is described before the match."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    # The match id is sent to every bot: it names the seed only when --seed made it
    # public.  Without --seed the cards come from 128 bits nobody can know or search.
    if seed is None:
        secret = "a secret deal (its seed goes to the log)"
        return fresh_deal_seed(), f"{stamp}-{secrets.token_hex(4)}", secret
    return seed, f"{stamp}-{seed}", f"seed {seed}"


def play_to_end(
    specs: list[BotSpec],
    rules: Rules,
    seed: int,
    control: TimeControl,
    match_id: str,
    log_path: Path,
    sandbox: Sandbox,
) -> MatchResult:
    """The match played; Ctrl-C (130) or a log that cannot be written (1) exits instead."""
    try:
        return trio.run(run_match, specs, rules, seed, control, match_id, log_path, sandbox)
    except (KeyboardInterrupt, OSError, BaseExceptionGroup) as error:
        # Ctrl-C, or a log that could not be written, may arrive wrapped by a nursery.  The
        # bots' process trees were ended on the way out (open_bots closes them shielded).
        if first_instance(error, KeyboardInterrupt) is not None:
            typer.echo(f"interrupted; the log so far is in {log_path}", err=True)
            raise typer.Exit(code=130) from None
        log_failure = first_instance(error, OSError)
        if log_failure is None:
            raise
        typer.echo(f"error: the match stopped: {log_failure}", err=True)
        raise typer.Exit(code=1) from None
