"""``newmarket league --competition cup.toml``: a local league as the competition server plays.

A participant's local results mean what the server's will only if the
matches are the same: the competition file's rules (its preset, options and
``[tables] hand_limit``), its seats per table, its time control, and its
sandbox level and limits (a competition's are tighter than a league's by
default).  This replaces those of the league file, and plays every table's
seat rotations on one deal, as the server's duplicate groups do.  The league
file keeps what is the participant's: the bots (each in its own directory,
``cwd``, as the server runs a version in its upload's), the schedule's size,
the name.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import msgspec

from engine import DEFAULT_PRESET
from referee.league.league_file import ConfigError, LeagueConfig
from referee.server.competition_file import CompetitionConfig
from referee.server.competition_file import load_config as load_competition
from referee.settings.shared import parse_toml, read_text


def as_on_server(league: LeagueConfig, path: Path) -> tuple[LeagueConfig, CompetitionConfig]:
    """``league`` with the competition file's rules, table size, time control and sandbox.

    Raises ``ConfigError`` (one line) for a mistake in the competition file, or a
    league the server could not play that way.
    """
    competition = load_competition(path)
    if league.format != "round_robin":
        raise ConfigError(
            f"{league.path}: league.format: --competition plays as the server does, in "
            f"duplicate groups: a round_robin league, not {league.format}"
        )
    if len(league.bots) < competition.players:
        raise ConfigError(
            f"{league.path}: bots: {path} seats {competition.players} bots a table; "
            f"the league has {len(league.bots)}"
        )
    if any(bot.remote for bot in league.bots):
        raise ConfigError(
            f"{league.path}: bots: --competition plays the bots here, under the server's "
            "sandbox: no remote bots"
        )
    rules_section = parse_toml(read_text(path), path).get("rules")
    raw = rules_section if isinstance(rules_section, dict) else {}
    options = raw.get("options")
    server_like = dataclasses.replace(
        league,
        rules=competition.rules,
        preset=str(raw.get("preset", DEFAULT_PRESET)),
        options=dict(options) if isinstance(options, dict) else {},
        table_size=competition.players,
        time_control=competition.time_control,
        schedule=msgspec.structs.replace(league.schedule, duplicate=True),
        sandbox_level=competition.sandbox_level,
        sandbox_limits=competition.sandbox_limits,
        public_deals=False,
    )
    return server_like, competition


def competition_note(competition: CompetitionConfig) -> str:
    """The line that says whose rules the league plays by."""
    control = competition.time_control
    return (
        f"as the server of {competition.path} plays: {competition.players} seats a table, "
        f"hand limit {competition.rules.hand_limit}, move time {control.move_time:g} s, "
        f"sandbox {competition.sandbox_level} with its limits"
    )
