"""The report's templates: whatever a bot says is shown as text, on every kind of page.

The league in ``conftest`` covers markup in a name and in stderr; these
cases need text no real bot run gives on demand: a quote that would close
an attribute, a ``</script>`` inside the replay's data, an ANSI escape and a
bidi override that would act on a reader's page or terminal.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jinja2
import pytest

from referee.report.chart import rating_chart
from referee.report.data import MatchLog
from referee.report.pages import match_view
from referee.report.templating import environment
from referee.text.printing import printable_block

HOSTILE = '"><script>alert(1)</script>\x1b[2J\u202eevil</pre><b>x</b>'


def _as_text(page: str) -> str:
    return re.sub(r"<script type=\"application/json\"[^>]*>.*?</script>", "", page, flags=re.S)


def test_no_template_marks_text_safe() -> None:
    templates = resources.files("referee.report") / "templates"
    names = [entry.name for entry in templates.iterdir()]
    assert "base.html" in names
    for name in names:
        text = (templates / name).read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false", text), name


def test_hostile_text_is_text_on_a_match_page() -> None:
    log = MatchLog(
        path=Path("match.jsonl"),
        header={"rules": {"boodle_cards": ["AH", HOSTILE]}},
        frames=[],
        transcripts=[],
        stderr={0: HOSTILE, 1: "fine"},
        verified=f"seat 0 said {HOSTILE}",
    )
    page = match_view(
        HOSTILE, 7, [HOSTILE, "other"], None, log, bot_links=None, log_href="m.jsonl", root=""
    )
    assert "<script>alert" not in page and "<b>x</b>" not in page and "\x1b" not in page
    assert "\u202e" not in page
    shown = printable_block(HOSTILE)  # the escapes a reader sees instead: \x1b, \u202e
    assert "\\x1b[2J\\u202eevil" in shown
    escaped = shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = escaped.replace('"', "&#34;")
    text = _as_text(page)
    assert text.count(escaped) >= 4  # the title, the heading, the verdict, the stderr's owner
    data = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', page)
    assert data is not None and "<" not in data.group(1)
    assert json.loads(data.group(1))["names"] == [shown, "other"]


def test_a_hostile_name_cannot_leave_the_charts_attribute() -> None:
    svg = str(rating_chart([HOSTILE, "b"], []))
    assert "<script>" not in svg and "\x1b" not in svg
    assert 'data-bot="&#34;&gt;&lt;script&gt;' in svg


def test_a_misspelt_name_in_a_template_fails_the_build() -> None:
    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ no_such_value }}").render()
