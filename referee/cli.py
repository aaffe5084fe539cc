"""The ``newmarket`` command line: one typer app, one module per command.

Each command lives in ``referee/commands/<name>.py`` and is registered here, so
adding a command touches this file in one line and nothing else.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="newmarket",
    help="Newmarket (Michigan, Boodle, Stops): rules engine, bot referee and leagues.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Imported here so that `newmarket --help` stays quick and import cycles stay impossible.
    from referee.commands import bots, demo, match, replay, rules, simulate

    app.command("rules")(rules.rules_command)
    app.command("simulate")(simulate.simulate_command)
    app.command("demo")(demo.demo_command)
    app.command("bots")(bots.bots_command)
    app.command("match")(match.match_command)
    app.command("replay")(replay.replay_command)
    from referee.commands.sprt import sprt_command

    app.command("sprt")(sprt_command)
    from referee.commands.check import check_command

    app.command("check")(check_command)
    from referee.commands import league, standings

    app.command("league")(league.league_command)
    app.command("standings")(standings.standings_command)
    from referee.commands.report import report_command

    app.command("report")(report_command)
    from referee.commands.connect import connect_command
    from referee.commands.tokens import tokens_command

    app.command("tokens")(tokens_command)
    app.command("connect")(connect_command)
    from referee.commands.serve import serve_command

    app.command("serve")(serve_command)


_register()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
