"""``newmarket check``: does a bot speak the protocol? One bot, scripted scenarios, a verdict.

    newmarket check --bot "python3 mybot.py"     as match, league and sprt name a bot
    newmarket check -- python3 mybot.py          the same
    newmarket check random
    newmarket check --transport tcp --move-time 0.5 -- node bots/js/bot.js
    newmarket check --rules stops --option kitty_ante=2 --matches 50 --seed 7 -- ./mybot

The work is ``referee.tools.check``'s; this module is only the command line, and
keeps the exit codes a script can rely on: 0 when the bot passed, 1 when it
failed (the report says where and shows the transcript), 2 when the command
itself was used wrongly (one line on stderr naming the argument), which
includes a program that does not exist or cannot be executed, and a bundled
bot that cannot run on this machine (no ``node``, no C compiler): neither is
a failure of the bot.

As a stress tool, ``--matches N`` plays N random matches after the scripted
scenarios, under ``--rules`` / ``--option`` / ``--hand-limit``, with
``--players`` seats and every deal and opponent choice from ``--seed``
(printed, so a failure can be played again).  Giving any of those flags
without ``--matches`` plays ten.  ``--show-stderr`` prints everything the bot
wrote to stderr, on a pass too.  The match logs are written to a temporary
directory that is removed at the end, or kept in ``--log-dir``.

The report is printed stage by stage as the check goes, because a bot that
uses its whole move time (a search bot) takes a minute to get through every
scenario; ``--json`` prints the whole report once, at the end.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Annotated

import typer

from engine import DEFAULT_PRESET, MAX_PLAYERS, MIN_PLAYERS
from referee.bots import BotSpec, command_name, resolve_bot
from referee.commands.common import (
    DEFAULT_PLAYERS,
    DEFAULT_SANDBOX,
    DEFAULT_TIME,
    AsJson,
    HandLimit,
    LogDir,
    Margin,
    MaxFaults,
    MoveTime,
    Players,
    RuleOptions,
    SandboxLevel,
    Seed,
    StartupTime,
    TimeBank,
    TransportName,
    UsageError,
    bot_of,
    build_rules,
    fail,
    made_log_dir,
    sandbox_of,
    startable,
    time_control,
    transport_of,
)
from referee.text.printing import printable_block
from referee.tools.check import (
    SCENARIOS,
    CheckReport,
    Scenario,
    Stage,
    check_bot,
    random_scenarios,
    render_footer,
    render_header,
    render_stage,
)
from referee.transport.timecontrol import TimeControl

IMPLIED_MATCHES = 10  # --rules, --option, --seed, ... without --matches


def build_spec(words: list[str], transport: str, bot: str | None = None) -> BotSpec:
    """The bot: ``--bot BOT`` as every command names one, or the words after ``--`` (one word
    may be a bundled name or a quoted command line)."""
    kind = transport_of(transport)
    if bot is not None:
        if words:
            raise UsageError("--bot: give the bot once, with --bot or after --, not both")
        return bot_of(bot, "--bot", kind)
    if not words:
        raise UsageError(
            "--bot: give the bot to check, e.g. `newmarket check --bot 'python3 bot.py'`"
        )
    try:
        if len(words) == 1:
            spec = resolve_bot(words[0], transport=kind)
        else:
            spec = BotSpec(command_name(tuple(words)), tuple(words), transport=kind)
    except ValueError as error:
        raise UsageError(f"COMMAND: {error}") from None
    return startable(spec, "COMMAND")


def build_scenarios(
    rules_name: str | None,
    options: list[str],
    hands: int | None,
    players: int,
    seed: int | None,
    matches: int | None,
) -> tuple[tuple[Scenario, ...], int | None]:
    """The scripted scenarios, then the random matches asked for; and their seed (if any)."""
    stress = (rules_name, seed, hands) != (None, None, None) or bool(options) or players != 4
    count = matches if matches is not None else (IMPLIED_MATCHES if stress else 0)
    if count < 0:
        raise UsageError(f"--matches: must be 0 or more, got {count}")
    if not count:
        return SCENARIOS, None
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise UsageError(f"--players: a table seats {MIN_PLAYERS} to {MAX_PLAYERS}, got {players}")
    name = rules_name or DEFAULT_PRESET
    rules = build_rules(name, options, hands, players)
    if seed is None:
        seed = secrets.randbelow(1 << 31)
    label = " ".join([f"{name} rules", *options])
    return (*SCENARIOS, *random_scenarios(rules, players, seed, count, label)), seed


BotCommand = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="COMMAND",
        help="The bot as words after `--` (the same as --bot).",
        show_default=False,
    ),
]
RandomMatches = Annotated[
    int | None,
    typer.Option(
        "--matches",
        metavar="N",
        help="Random matches to play after the scripted scenarios (default: 0, or "
        f"{IMPLIED_MATCHES} when --rules, --option, --hand-limit, --players or --seed "
        "is given).",
        show_default=False,
    ),
]
RandomRules = Annotated[
    str | None,
    typer.Option(
        "--rules",
        metavar="NAME",
        help=f"The random matches' rule preset (see `newmarket rules`; default {DEFAULT_PRESET}).",
        show_default=False,
    ),
]
ShowStderr = Annotated[
    bool, typer.Option("--show-stderr", help="Print all the bot's stderr, on a pass too.")
]


CheckedBot = Annotated[
    str | None,
    typer.Option(
        "--bot",
        metavar="BOT",
        help="The bot: a bundled bot's name (see `newmarket bots`) or a command line, "
        "optionally NAME=COMMAND, as `match --bot` takes it.",
        show_default=False,
    ),
]


def check_command(
    command: BotCommand = None,
    bot: CheckedBot = None,
    matches: RandomMatches = None,
    rules_name: RandomRules = None,
    option: RuleOptions = None,
    hands: HandLimit = None,
    players: Players = DEFAULT_PLAYERS,
    seed: Seed = None,
    move_time: MoveTime = DEFAULT_TIME.move_time,
    time_bank: TimeBank = DEFAULT_TIME.time_bank,
    startup_time: StartupTime = DEFAULT_TIME.startup_time,
    margin: Margin = DEFAULT_TIME.margin,
    max_faults: MaxFaults = DEFAULT_TIME.max_faults,
    transport: TransportName = "stdio",
    sandbox_level: SandboxLevel = DEFAULT_SANDBOX,
    show_stderr: ShowStderr = False,
    log_dir: LogDir = None,
    as_json: AsJson = False,
) -> None:
    """Run one bot through scripted scenarios covering every message and decision of every
    preset, then any random matches asked for; exit 0 if it conforms to SPEC.md, 1 (with a
    transcript) if it does not."""
    try:
        spec = build_spec(command or [], transport, bot)
        control = time_control(move_time, time_bank, startup_time, margin, max_faults)
        scenarios, stress_seed = build_scenarios(
            rules_name, option or [], hands, players, seed, matches
        )
        sandbox = sandbox_of(sandbox_level)
        made_log_dir(log_dir)
    except UsageError as error:
        raise fail(str(error)) from None
    if not as_json:
        print_header(spec, control, len(scenarios), stress_seed)
    report = check_bot(
        spec,
        control,
        scenarios=scenarios,
        keep_logs=log_dir,
        on_stage=None if as_json else show_stage,
        sandbox=sandbox,
    )
    if as_json:
        document = {**report.to_json(), "seed": stress_seed}
        sys.stdout.write(json.dumps(document) + "\n")
    else:
        print_footer(report, show_stderr, log_dir)
    if not report.ok:
        raise typer.Exit(code=1)


def print_header(
    spec: BotSpec, control: TimeControl, scenarios: int, stress_seed: int | None
) -> None:
    """The bot, its time control, and the random matches to come with their seed."""
    header = render_header(spec, control)
    if stress_seed is not None:
        random_count = scenarios - len(SCENARIOS)
        matches_word = "match" if random_count == 1 else "matches"
        header += f"then {random_count} random {matches_word}, seed {stress_seed}\n"
    sys.stdout.write(header + "\n")
    sys.stdout.flush()


def show_stage(stage: Stage) -> None:
    """One stage as it ends, so a slow bot's check is seen going."""
    sys.stdout.write(printable_block(render_stage(stage)))  # a bot's lines and stderr
    sys.stdout.flush()


def print_footer(report: CheckReport, show_stderr: bool, log_dir: Path | None) -> None:
    """The verdict, and where a passing bot's match logs were kept."""
    sys.stdout.write(printable_block(render_footer(report, show_stderr=show_stderr)))
    if report.ok and log_dir is not None:  # (a failure names its match's log)
        logs = sorted(log_dir.glob("*.jsonl"))
        if logs:
            sys.stdout.write(
                f"Match logs kept in {log_dir} "
                f"(newmarket replay {logs[0]} verifies and shows one)\n"
            )
