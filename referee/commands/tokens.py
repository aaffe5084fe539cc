"""``newmarket tokens LEAGUE.toml``: issue the tokens of a league's remote bots.

One token per ``remote = true`` bot, kept in the league's tokens file
(``[remote] tokens``, default ``<league file stem>.tokens.json`` beside the
league file, readable by its owner only), so running the command again prints
the same tokens and the league uses them.  ``--renew NAME`` replaces one
bot's token (a leaked one).  Each line printed is ``NAME TOKEN``: send each
participant their own line (``--json`` and ``--csv`` give the same pairs as
``name`` and ``token``, for a script that mails them).
"""

from __future__ import annotations

from typing import Annotated

import typer

from referee.commands.common import AsCsv, AsJson, fail
from referee.commands.league import LeagueFile
from referee.league.league_file import ConfigError, load_config
from referee.text.machine import only_one, write_csv, write_json
from referee.transport.lobby import TokenFileError, issue_tokens


def tokens_command(
    league_file: LeagueFile,
    renew: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Give this remote bot a new token (repeat for several)."),
    ] = None,
    as_json: AsJson = False,
    as_csv: AsCsv = False,
) -> None:
    """Issue (or show) one token per remote bot of a league; prints NAME TOKEN lines."""
    only_one(as_json, as_csv)
    try:
        config = load_config(league_file)
        names = [bot.name for bot in config.bots if bot.remote]
        unknown = [name for name in renew or () if name not in names]
        if unknown:
            raise ConfigError(f"--renew: {unknown[0]!r} is not a remote bot of this league")
        if not names:
            raise ConfigError(f"{league_file}: no remote bots (add remote = true to a [[bots]])")
        tokens = issue_tokens(config.tokens_path, names, renew=renew or ())
    except (ConfigError, TokenFileError) as error:
        raise fail(f"{error}") from None
    except OSError as error:
        typer.echo(f"error: {config.tokens_path}: cannot write the tokens: {error}", err=True)
        raise typer.Exit(code=1) from None
    rows: list[dict[str, object]] = [{"name": n, "token": t} for n, t in tokens.items()]
    if as_json:
        write_json({"tokens": rows, "tokens_file": str(config.tokens_path)})
    elif as_csv:
        write_csv(("name", "token"), rows)
    else:
        for name, token in tokens.items():
            typer.echo(f"{name} {token}")
    typer.echo(f"tokens kept in {config.tokens_path}", err=True)
