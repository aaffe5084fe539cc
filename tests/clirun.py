"""Run ``newmarket`` in this process exactly as its console script does: ``referee.cli.run``.

typer's ``CliRunner.invoke(app)`` goes through typer's own error handling
(boxed panels for a usage error); the console script goes through
``referee.cli.run``, which prints one ``error:`` line instead.  Tests of what
a user sees call this.
"""

from __future__ import annotations

import sys

from typer.testing import CliRunner

from referee.cli import run


def newmarket(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``newmarket ARGS...``."""
    with CliRunner().isolation() as (out, err, _):
        try:
            code = run(list(args))
        except SystemExit as stop:  # a command that exits by itself
            code = stop.code if isinstance(stop.code, int) else 1
        sys.stdout.flush()
        sys.stderr.flush()
        return code, out.getvalue().decode(), err.getvalue().decode()
