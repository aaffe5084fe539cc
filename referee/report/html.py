"""Building HTML where every string is text unless it is explicitly markup.

Bots are untrusted: a bot may call itself ``<script>``, and its stderr is
whatever it wrote.  So pages are built from ``el(tag, attrs, *children)``,
which escapes every ``str`` child and attribute value; only ``Markup``
(made by ``el`` itself, or by code here that has escaped its input) passes
through unchanged.  Data for scripts goes in ``<script type="application/json">``
with ``<``, ``>`` and ``&`` written as JSON escapes, so no text can close the
script element or open a comment in it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
from collections.abc import Iterable, Mapping
from importlib import resources

from referee.printing import printable_block

_VOID = frozenset({"meta", "link", "br", "hr", "img", "input"})


class Markup(str):
    """A string that is already HTML: never escaped again."""

    __slots__ = ()


Child = "str | int | float | Markup | None | Iterable[Child]"


def esc(text: object) -> Markup:
    """``text`` as HTML text: markup escaped, and control characters (an ANSI escape, a
    ``\\r``, a bidi override) shown as visible escapes (``referee.printing.printable_block``)."""
    return Markup(html.escape(printable_block(str(text)), quote=True))


def render(child: object) -> Markup:
    """A child as HTML: markup as is, text escaped, lists joined, None nothing."""
    if child is None:
        return Markup("")
    if isinstance(child, Markup):
        return child
    if isinstance(child, str | int | float):
        return esc(child)
    if isinstance(child, Iterable):
        return Markup("".join(render(item) for item in child))
    raise TypeError(f"cannot render {type(child).__name__} as HTML")


def el(tag: str, attrs: Mapping[str, object] | None = None, *children: object) -> Markup:
    """``<tag attr="value">children</tag>``; attribute values and text are escaped."""
    parts = [tag]
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        parts.append(name if value is True else f'{name}="{esc(value)}"')
    opening = f"<{' '.join(parts)}>"
    if tag in _VOID:
        return Markup(opening)
    return Markup(f"{opening}{render(children)}</{tag}>")


def json_script(element_id: str, value: object) -> Markup:
    """Data for the page's script, safe whatever strings it holds.

    The script shows these strings as text, so each is ``printable_block``
    first: JSON's own escapes would give an ANSI escape or a bidi override
    back to the page intact.
    """
    text = json.dumps(_printable_data(value), ensure_ascii=False, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(f'<script type="application/json" id="{esc(element_id)}">{text}</script>')


def _printable_data(value: object) -> object:
    if isinstance(value, str):
        return printable_block(value)
    if isinstance(value, dict):
        return {printable_block(str(k)): _printable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable_data(item) for item in value]
    return value


@functools.cache
def static(name: str) -> str:
    """A file of ``referee/report/static`` (the stylesheet, the replay viewer)."""
    text = (resources.files("referee.report") / "static" / name).read_text(encoding="utf-8")
    closing = "</style" if name.endswith(".css") else "</script"
    assert closing not in text.lower(), f"{name} would end its own element"
    return text


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def page(
    title: str,
    body: object,
    *,
    root: str,
    scripts: Iterable[str] = (),
    refresh: int | None = None,
    nav: str | None = "Standings",
) -> str:
    """A whole page; ``root`` is the relative path to the site's top ("", "../").

    The stylesheet and ``scripts`` (files of ``static/``) are written into the
    page itself, so each page stands alone, and the Content-Security-Policy
    lets exactly those run, by their hashes, and nothing load from anywhere:
    no network, and no script a bot's text might smuggle in.  (Hashes rather
    than ``'self'``, which browsers read differently for ``file://`` pages.)
    ``refresh`` (seconds) makes the browser reload the page by itself: the
    standings of a league that is still being played, under ``--watch``.
    ``nav`` names the link to the site's top page (None: a page with no site
    around it, as ``newmarket view`` writes).
    """
    css = static("site.css")
    code = [static(name) for name in scripts]
    script_src = " ".join(_sha256(text) for text in code) or "'none'"
    policy = f"default-src 'none'; style-src {_sha256(css)}; script-src {script_src}"
    head = [
        Markup('<meta charset="utf-8">'),
        el("meta", {"http-equiv": "Content-Security-Policy", "content": policy}),
        el("meta", {"http-equiv": "refresh", "content": str(refresh)}) if refresh else None,
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("title", None, title),
        Markup(f"<style>{css}</style>"),
    ]
    tail = [Markup(f"<script>{text}</script>") for text in code]
    bar = el("nav", None, el("a", {"href": f"{root}index.html"}, nav) if nav else "newmarket")
    document = el("html", {"lang": "en"}, el("head", None, head), el("body", None, bar, body, tail))
    return "<!DOCTYPE html>\n" + document + "\n"
