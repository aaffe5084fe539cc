"""The server's templates, rendered in process: the report's environment, the report's viewer.

A participant's name may hold ``</script>`` (names only need to be
printable), and the text a bot writes (a fault's detail, its stderr, a
transcript line) may hold anything: an ANSI escape, a bidi override.  On a
match page all of it is text, in the page and in the replay's data; and a
template that names a value nobody passed fails rather than printing nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jinja2
import pytest

from referee.report.templating import script_json
from referee.server.app import templates
from referee.text.printing import printable_block

HOSTILE = '</script><script>alert(1)</script>"\x1b[2J\u202eevil<b>x</b>'
SHOWN = printable_block(HOSTILE)  # what a reader sees: \x1b and \u202e as escapes
ESCAPED = (
    SHOWN.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
)


def page_context(**context: Any) -> dict[str, Any]:
    """What ``Pages.render`` gives every page, for a visitor who is not signed in."""
    base = {
        "competition": "cup",
        "viewer": None,
        "csrf": "token",
        "self_registration": False,
        "message": None,
        "organiser": False,
    }
    return {**base, **context}


def match_page(label: str, *, replay: bool = True) -> str:
    seat = {
        "seat": 0,
        "version": 1,
        "label": label,
        "participant": label,
        "place": 1,
        "chips": 30,
        "net_chips": 10,
        "status": "active",
        "faults": [],
    }
    data = {"names": [label, "other"], "boodle_cards": ["AH"], "pretty": {}, "frames": []}
    view = {
        "match_id": "g1r0",
        "group": 1,
        "rotation": 0,
        "cards_public": True,
        "in_play": None,
        "seed": 7,
        "hands": 3,
        "reason": "hands",
        "seats": [seat],
        "replay": data if replay else None,
        "stderr": {label: HOSTILE},
        "transcripts": [
            {
                "seat": 0,
                "label": label,
                "hand": 2,
                "kind": "illegal",
                "detail": HOSTILE,
                "lines": [{"mark": "<", "text": HOSTILE}],
            }
        ],
    }
    # A fault's evidence quotes what the bot wrote (referee.server.match_faults).
    faults = [
        {
            "label": label,
            "hand": 2,
            "kind": "malformed",
            "meaning": "its line was not a reply",
            "line": HOSTILE,
            "request": HOSTILE,
            "came_back": HOSTILE,
            "time_used_ms": 3.5,
            "consequence": HOSTILE,
        }
    ]
    context = page_context(view=view, replay=script_json(data) if replay else None, faults=faults)
    return templates().get_template("match.html").render(**context)


def test_a_hostile_name_and_bot_text_are_text_on_the_match_page() -> None:
    page = match_page(HOSTILE)
    assert "\x1b" not in page and "\u202e" not in page and "<b>x</b>" not in page
    assert page.count("<script") == 2  # the replay's data and replay.js, nothing else
    data = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', page, re.S)
    assert data is not None and "<" not in data.group(1)
    assert json.loads(data.group(1))["names"] == [SHOWN, "other"]
    text = page.replace(data.group(0), "")
    # The seat's link, the transcript's heading, detail and line, the stderr's summary and text.
    assert text.count(ESCAPED) >= 5
    assert '<a href="/p/%3C/script%3E%3Cscript%3Ealert%281%29%3C/script%3E' in text


def test_the_match_page_shows_the_reports_replay_viewer() -> None:
    page = match_page("alice/v1")
    viewer = templates().get_template("report/replay.html").render(replay=script_json({"a": 1}))
    # The viewer's frame is the report's own, control for control.
    for control in re.findall(r'id="([a-z-]+)"', viewer):
        assert f'id="{control}"' in page
    assert '<script src="/report/replay.js"></script>' in page
    without = match_page("alice/v1", replay=False)
    assert 'id="replay"' not in without and "replay.js" not in without
    assert "This match's log is no longer kept" in without


def test_a_misspelt_name_in_a_server_template_fails() -> None:
    with pytest.raises(jinja2.UndefinedError):
        templates().from_string("{{ no_such_value }}").render()
    # A page rendered without a value it names fails too, instead of showing a blank.
    with pytest.raises(jinja2.UndefinedError, match="reason"):
        templates().get_template("error.html").render(**page_context(status=404))
    shown = (
        templates().get_template("error.html").render(**page_context(status=404, reason=HOSTILE))
    )
    assert f'<p id="error">{ESCAPED}</p>' in shown
