"""The report's pages are Jinja2 templates (``referee/report/templates``), as the server's are.

One environment set-up (``make_environment``) renders both: the competition
server's pages (``referee.server.app``) come from here too, and include the
report's replay viewer as ``report/replay.html``.

Bots are untrusted: a bot may call itself ``<script>``, and its stderr is
whatever it wrote.  So every template is autoescaped and none marks text
safe: a name, a stderr excerpt or a fault's detail is always text.  Only
values made here are ``Markup``: the site's own stylesheet and scripts, and
the data for the replay viewer (``script_json``).  Every value a template
prints also goes through ``printable_block`` first (the environment's
``finalize``), so a control character (an ANSI escape, a ``\\r``, a bidi
override) shows as a visible escape rather than acting on the page.
``StrictUndefined``: a name a template misspells fails the build instead of
printing nothing.

Each page carries its stylesheet and scripts inline, so it opens from disk
(``file://``) with no server, and its Content-Security-Policy lets exactly
those run, by their hashes, and nothing load from anywhere (``page``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from jinja2 import (
    ChoiceLoader,
    Environment,
    PackageLoader,
    PrefixLoader,
    StrictUndefined,
    select_autoescape,
)
from markupsafe import Markup

from referee.printing import printable_block
from referee.render import match_ending
from referee.report.frames import plural


def _printable(value: object) -> object:
    """What ``{{ value }}`` prints: our own markup as is, any other text made printable."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return printable_block(value)
    return value


class ScriptJSON(Markup):
    """JSON that ``script_json`` made: safe inside ``<script type="application/json">``."""


def script_json(value: object) -> ScriptJSON:
    """Data for a page's script, safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as JSON escapes, so no text can close
    the element or open a comment in it; each string is ``printable_block``
    first, since the script shows them as text and JSON's own escapes would
    hand an ANSI escape or a bidi override back to the page intact.  What it
    made already (a ``ScriptJSON``) it returns as is: the server makes a
    match's replay JSON once and caches it, since a finished log never changes.
    """
    if isinstance(value, ScriptJSON):
        return value
    text = json.dumps(_printable_data(value), ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return ScriptJSON(text)


def _printable_data(value: object) -> object:
    if isinstance(value, str):
        return printable_block(value)
    if isinstance(value, dict):
        return {printable_block(str(k)): _printable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable_data(item) for item in value]
    return value


REPORT_TEMPLATES = "referee.report"


def make_environment(package: str = REPORT_TEMPLATES) -> Environment:
    """The Jinja2 environment for ``package``'s templates: one set-up for every page we serve.

    The report's pages and the competition server's (``referee.server.app``)
    both come from here, so both autoescape, both make every value printable
    (``finalize``), and both fail on a misspelt name (``StrictUndefined``).
    ``package``'s own ``templates/`` are found by name; the report's are also
    found as ``report/NAME`` (for the server: ``report/replay.html``, the
    replay viewer's frame, of which there is one).
    """
    report = PackageLoader(REPORT_TEMPLATES, "templates")
    own = report if package == REPORT_TEMPLATES else PackageLoader(package, "templates")
    env = Environment(
        loader=ChoiceLoader([own, PrefixLoader({"report": report})]),
        autoescape=select_autoescape(("html", "svg"), default=True),
        undefined=StrictUndefined,
        finalize=_printable,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["script_json"] = script_json
    env.filters["plural"] = plural
    # ``{{ result.reason | ending }}``: the report's pages and the server's word a match's
    # end as the terminal does (referee.render).
    env.filters["ending"] = match_ending
    return env


@functools.cache
def environment() -> Environment:
    """The report's own environment."""
    return make_environment()


def render(template: str, **context: Any) -> Markup:
    """A template (a whole page, or a part such as a chart) rendered as markup."""
    return Markup(environment().get_template(template).render(**context))


@functools.cache
def static(name: str) -> Markup:
    """A file of ``referee/report/static`` (the stylesheet, the replay viewer), to inline."""
    text = (resources.files("referee.report") / "static" / name).read_text(encoding="utf-8")
    closing = "</style" if name.endswith(".css") else "</script"
    assert closing not in text.lower(), f"{name} would end its own element"
    return Markup(text)


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def page(
    template: str,
    *,
    title: str,
    root: str,
    scripts: Iterable[str] = (),
    refresh: int | None = None,
    nav: str | None = "Standings",
    **context: Any,
) -> str:
    """A whole page from ``template`` (which extends ``base.html``).

    ``root`` is the relative path to the site's top ("", "../").  The
    stylesheet and ``scripts`` (files of ``static/``) are written into the
    page itself, so each page stands alone, and the Content-Security-Policy
    lets exactly those run, by their hashes (rather than ``'self'``, which
    browsers read differently for ``file://`` pages), and nothing load: no
    network, and no script a bot's text might smuggle in.  ``refresh``
    (seconds) makes the browser reload the page by itself: the standings of a
    league still being played, under ``--watch``.  ``nav`` names the link to
    the site's top page (None: a page with no site around it, as ``newmarket
    view`` writes).
    """
    css = static("site.css")
    code = [static(name) for name in scripts]
    script_src = " ".join(_sha256(text) for text in code) or "'none'"
    policy = f"default-src 'none'; style-src {_sha256(css)}; script-src {script_src}"
    return render(
        template,
        title=title,
        root=root,
        nav=nav,
        refresh=refresh,
        policy=policy,
        css=css,
        scripts=code,
        **context,
    )
