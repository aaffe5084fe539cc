"""Where a page names a command's option with its default, the default is the command's own.

docs/bots.md once said `check`'s time bank was 0 while the help and the run
gave 10 s; a bot writer reads the page, not the source.  Every
"`--flag VALUE` (N s)" on a page is checked against ``newmarket COMMAND
--help`` for the command the page names in the same paragraph.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.clirun import newmarket

DOCS = Path(__file__).resolve().parents[2] / "docs"

# (page, command whose options the paragraph lists, the paragraph's first words)
PARAGRAPHS = [("bots.md", "check", "Options: `--move-time SECONDS`")]

DOCUMENTED = re.compile(r"`(--[a-z-]+) [A-Z]+` \((\d+(?:\.\d+)?) s\)")
OPTION = re.compile(r"^\s+(?:-\w, )?(--[a-z-]+)", re.M)  # a line of the help that opens an option
DEFAULT = re.compile(r"\[default: (\d+(?:\.\d+)?)\]")


def help_defaults(text: str) -> dict[str, float]:
    """Each option's numeric default, read from its own entry of the help (up to the next)."""
    starts = list(OPTION.finditer(text))
    defaults = {}
    for this, following in zip(starts, [*starts[1:], None], strict=True):
        entry = text[this.start() : following.start() if following else None]
        if (found := DEFAULT.search(entry)) is not None:
            defaults[this.group(1)] = float(found.group(1))
    return defaults


def paragraph(page: str, start: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    at = text.index(start)
    end = text.find("\n\n", at)
    return text[at : end if end >= 0 else None]


@pytest.mark.parametrize(("page", "command", "start"), PARAGRAPHS)
def test_the_defaults_a_page_gives_are_the_commands(
    page: str, command: str, start: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    documented = {flag: float(value) for flag, value in DOCUMENTED.findall(paragraph(page, start))}
    assert documented, f"docs/{page}: no `--flag VALUE` (N s) found after {start!r}"
    monkeypatch.setenv("COLUMNS", "200")  # one option to a line: its default beside it
    code, out, _ = newmarket(command, "--help")
    assert code == 0
    defaults = help_defaults(out)
    wrong = {
        flag: (said, defaults.get(flag))
        for flag, said in documented.items()
        if defaults.get(flag) != said
    }
    assert wrong == {}, f"docs/{page} gives these defaults, `{command} --help` others: {wrong}"
