"""Participant names: one normal form, and no name that looks like another.

A name is shown on every page and is how people tell participants apart, so
a newcomer must not be able to pass for somebody else: ``Alice`` beside
``alice``, a Cyrillic ``а`` in ``аlice``, ``rn`` for ``m``, or a name in the
organiser's house style (``house:tracker``).  The rule:

1. the name is NFKC-normalised (a full-width ``ａ`` is ``a``) and trimmed;
2. it is 1 to 40 characters of letters, combining marks, digits, ``-``,
   ``_``, ``.`` and single inner spaces (no ``:``, ``/``, control, format or
   bidi characters), with at least one letter or digit;
3. it must not mix scripts with look-alike letters (``confusable_homoglyphs``'
   ``is_dangerous``, as django-registration checks user names);
4. its *skeletons* must differ from every existing name's and must not begin
   with a reserved prefix's, nor with the prefix's word and another separator
   (``house-tracker`` passes for ``house:tracker`` as well).

A skeleton follows Unicode TR39's: each character is replaced by one
representative of its class in Unicode's confusables data (shipped by
``confusable_homoglyphs``; classes of single characters and strings such as
``rn`` for ``m``); a name has three, as written, in lower and in upper case.
Two names that share a skeleton look alike.
"""

from __future__ import annotations

import functools
import unicodedata

from confusable_homoglyphs import confusables

from bots.registry import BUNDLED

MAX_LENGTH = 40
MARKS = "\u200e\u200f"  # left-to-right and right-to-left marks
PUNCTUATION = frozenset("-_.")
# The organiser's namespace: house bots are named house:NAME (and marked as house bots in
# the database, not by their name), these words would pass for the organiser, and a bundled
# bot's name for a house bot (any of them may be one): a participant "tracker" beside
# "house:tracker" was taken for it, and was sent the challenges meant for it.
RESERVED_PREFIXES = ("house:",)
# ``:`` is no name's, but a prefix written with another separator passes for it as well:
# "house-tracker v1" beside "house:tracker v1" on the leaderboard.
PREFIX_SEPARATORS = " -_."
RESERVED_NAMES = (
    "house",
    "admin",
    "administrator",
    "organiser",
    "organizer",
    "newmarket",
    *BUNDLED,
)


class NameRefusedError(ValueError):
    """A name that cannot be registered; the message says why in one line."""


def normal_name(text: str) -> str:
    """``text`` in its normal form (NFKC, trimmed), or ``NameRefusedError`` if no name may be so."""
    name = unicodedata.normalize("NFKC", text).strip()
    if not 1 <= len(name) <= MAX_LENGTH:
        raise NameRefusedError(f"participant name: 1 to {MAX_LENGTH} characters")
    for char in name:
        category = unicodedata.category(char)
        if char in PUNCTUATION or char == " " or (category[0] in "LMN" and category != "No"):
            continue
        shown = char if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"
        raise NameRefusedError(
            f"participant name: {shown!r} is not allowed (letters, digits, - _ . and "
            "single spaces only)"
        )
    if "  " in name:
        raise NameRefusedError("participant name: one space at most between words")
    if not any(char.isalnum() for char in name):
        raise NameRefusedError("participant name: needs a letter or a digit")
    return name


def check_script(name: str) -> None:
    """``NameRefusedError`` if ``name`` mixes scripts with look-alike letters (``pаypal``)."""
    if confusables.is_dangerous(name):
        raise NameRefusedError(
            f"participant name {name!r} mixes scripts with look-alike letters; "
            "write it in one script"
        )


@functools.cache
def _classes() -> dict[str, str]:
    """Each confusable character's representative: the same for its whole class.

    ``confusables_data`` links each entry of Unicode's confusables.txt both ways
    (source and prototype); its connected parts are TR39's classes.  A class
    holding a string (``rn``) is represented by it, as TR39 maps ``m`` to
    ``rn``; otherwise by its lowest code point.
    """
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def rank(node: str) -> tuple[int, int, str]:
        return (-len(node), ord(node[0]), node)

    data: dict[str, list[dict[str, str]]] = confusables.confusables_data
    for key, glyphs in data.items():
        for glyph in glyphs:
            # Some entries carry invisible direction marks around the glyph (Hebrew).
            char, other = key.strip(MARKS), glyph["c"].strip(MARKS)
            if not char or not other:
                continue
            a, b = find(char), find(other)
            if a != b:
                low, high = sorted((a, b), key=rank)
                parent[high] = low
    return {node: find(node) for node in list(parent) if len(node) == 1}


def _shape(text: str) -> str:
    """TR39's skeleton: NFD, each character its class's representative, NFD again."""
    classes = _classes()
    current = unicodedata.normalize("NFD", text)
    for _ in range(4):  # a representative's own characters represent themselves: one round
        mapped = "".join(classes.get(char, char) for char in current)
        following = unicodedata.normalize("NFD", mapped)
        if following == current:
            break
        current = following
    return current


@functools.lru_cache(maxsize=4096)  # every registration compares with every name there
def skeletons(name: str) -> frozenset[str]:
    """What ``name`` looks like: two names a reader could take for one another share one.

    TR39's skeleton of the name as written, in lower case and in upper case: a
    look-alike (``aIice`` for ``alice``), a name in another case (``ALICE``),
    or both (``ADMlN`` for ``admin``).  Case and look are not chained further:
    ``all`` does not pass for ``ali``.
    """
    return frozenset(_shape(form) for form in (name, name.casefold(), name.upper()))


def looks_like(name: str, other: str) -> bool:
    return not skeletons(name).isdisjoint(skeletons(other))


def reserved(name: str) -> str | None:
    """The reserved word or prefix ``name`` looks like, if any."""
    shapes = skeletons(name)
    for prefix in RESERVED_PREFIXES:
        written = [prefix, *(prefix[:-1] + separator for separator in PREFIX_SEPARATORS)]
        starts = {start for form in written for start in skeletons(form)}
        if any(shape.startswith(start) for shape in shapes for start in starts):
            return prefix
    for word in RESERVED_NAMES:
        if not shapes.isdisjoint(skeletons(word)):
            return word
    return None
