"""Output for machines: a command's table as one JSON document or as CSV, on stdout.

A command that prints a table for people takes ``--json`` (and ``--csv``
where the output is rows) and prints the same rows with the same names: a
field is its column header's words (``runs_here`` for ``runs here``), so
what a user reads in the table is what a script looks up.  Notes and hints
stay off stdout in these forms, so ``| jq`` reads the document alone.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence

import typer


def field_name(header: str) -> str:
    """A column header as its field's name: ``runs here`` -> ``runs_here``."""
    return header.lower().replace(" ", "_")


def only_one(as_json: bool, as_csv: bool) -> None:
    """Exit 2 with one line if both were given: one would be printed and the other dropped."""
    if as_json and as_csv:
        typer.echo("error: --json and --csv: give one", err=True)
        raise typer.Exit(code=2)


def write_json(document: object) -> None:
    sys.stdout.write(json.dumps(document) + "\n")


def write_csv(fields: Sequence[str], rows: Sequence[Mapping[str, object]]) -> None:
    """``rows`` as CSV with a header line of ``fields``; ``None`` is an empty cell, a
    boolean ``yes`` or ``no`` as the table shows it."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _cell(row.get(key)) for key in fields})
    sys.stdout.write(out.getvalue())


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value
