"""A participant's Atom feed (RFC 4287): ``/p/NAME/feed.atom``, from ``referee.server.events``.

A feed reader polls it, so a participant learns that a version was admitted
or rejected (with the failing step), that one crashed or timed out for the
first time (with a link to the match), a phase change or a final result,
without watching the pages.  It is public, as the participant's page is,
and says no more than that page: the events are public text, and every
text that came from a process goes through ``hide_paths``.  A challenge's
events (``PRIVATE_KINDS``) are the exception: a challenge is seen by its
requester and opponents only (``referee.server.challenges``), so they are in
the feed only for the participant itself, signed in or with its token.

The XML is built by ``xml.etree.ElementTree``, which escapes every text and
attribute, so a version's detail can never become markup.  Ids are
``urn:uuid:`` names derived from the competition's name and the event's
number, so they stay the same whatever host name the feed is read through.
"""

from __future__ import annotations

import datetime
import re
import uuid
import xml.etree.ElementTree as ET
from urllib.parse import quote

from referee.server.competition import Competition
from referee.server.competition_db import Participant
from referee.server.events import participant_events
from referee.server.views import hide_paths, server_places

ATOM = "http://www.w3.org/2005/Atom"
MEDIA_TYPE = "application/atom+xml"
ENTRIES = 50  # the newest; a feed reader keeps what it has seen
PRIVATE_KINDS = ("challenge_played", "challenge_failed")


# Characters XML 1.0 cannot hold at all, escaped or not (a compiler's colour codes, say).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _stamp(moment: float) -> str:
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).isoformat(timespec="seconds")


def _id(competition: Competition, *parts: object) -> str:
    name = "/".join(["newmarket", competition.config.name, *(str(p) for p in parts)])
    return uuid.uuid5(uuid.NAMESPACE_URL, name).urn


def _add(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attributes)
    if text is not None:
        element.text = _text(text)
    return element


def atom_feed(
    competition: Competition, participant: Participant, base_url: str, private: bool = False
) -> bytes:
    """The participant's feed; ``base_url`` (``http://host:port``) makes its links whole.
    ``private``: the reader is the participant, and is told of its challenges too."""
    ET.register_namespace("", ATOM)
    base = base_url.rstrip("/")
    without = () if private else PRIVATE_KINDS
    events = participant_events(competition.store, participant.id, ENTRIES, without)
    page = f"{base}/p/{quote(participant.name)}"
    feed = ET.Element(f"{{{ATOM}}}feed")
    _add(feed, "title", f"{participant.name} in {competition.config.name}")
    _add(feed, "id", _id(competition, "participant", participant.id))
    _add(feed, "updated", _stamp(max([e.at for e in events], default=participant.created_at)))
    _add(feed, "link", rel="self", href=f"{page}/feed.atom", type=MEDIA_TYPE)
    _add(feed, "link", rel="alternate", href=page, type="text/html")
    author = _add(feed, "author")
    _add(author, "name", competition.config.name)
    places = server_places(competition)
    for event in events:
        entry = _add(feed, "entry")
        _add(entry, "title", hide_paths(event.title, places))
        _add(entry, "id", _id(competition, "event", event.id))
        _add(entry, "updated", _stamp(event.at))
        _add(entry, "link", rel="alternate", href=base + event.link, type="text/html")
        _add(entry, "category", term=event.kind)
        if event.detail:
            _add(entry, "summary", hide_paths(event.detail, places))
    data: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return data
