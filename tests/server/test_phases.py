"""A contest's phases: dates in the file, enforced by the server with an injected clock.

Uploads are refused before the opening and after the freeze (one line, by the
page and the API alike), every page shows the phase and the countdown to the
next date, and the organiser moves a date with ``newmarket serve move-phase``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import ConfigError, PhaseDates, load_config
from referee.server.phases import current, phase_at
from tests.clirun import newmarket
from tests.server.inprocess import api_upload

PHASES = """
[phases]
opens = "2026-12-01T09:00Z"
freeze = 2026-12-20T18:00:00Z
finals = "2026-12-21T00:00+00:00"
ends = "2026-12-24T00:00Z"
"""


def at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def contest(tmp_path: Path, extra: str = PHASES) -> Competition:
    path = tmp_path / "cup.toml"
    path.write_text('[competition]\nname = "cup"\nhouse_bots = []\n' + extra)
    config = load_config(path)
    return Competition(config, CompetitionStore.open(config.database))


@pytest.mark.parametrize(
    ("section", "said"),
    [
        ('[phases]\nfreeze = "2026-12-20T18:00"\n', "phases.freeze: '2026-12-20T18:00' has no"),
        ('[phases]\nfreeze = "soon"\n', "phases.freeze: 'soon' is not an ISO 8601 time"),
        ('[phases]\nfrieze = "2026-12-20T18:00Z"\n', "phases.frieze: unknown key"),
        (
            '[phases]\nopens = "2026-12-21T00:00Z"\nfreeze = "2026-12-20T18:00Z"\n',
            "phases: freeze (2026-12-20T18:00:00+00:00) must come after opens",
        ),
        ("[finals]\ngroups = 0\n", "finals.groups: must be 1 to 100000, got 0"),
    ],
)
def test_a_wrong_date_is_one_line_naming_its_key(tmp_path: Path, section: str, said: str) -> None:
    path = tmp_path / "cup.toml"
    path.write_text('[competition]\nname = "cup"\n' + section)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: {said}")
    assert "\n" not in str(caught.value)


def test_the_phase_follows_the_dates(tmp_path: Path) -> None:
    dates = load_config_dates(tmp_path)
    seen = [
        phase_at(dates, datetime.fromisoformat(moment)).name
        for moment in (
            "2026-11-30T00:00Z",
            "2026-12-01T09:00Z",
            "2026-12-20T17:59Z",
            "2026-12-20T18:00Z",
            "2026-12-22T00:00Z",
            "2027-01-01T00:00Z",
        )
    ]
    assert seen == ["before", "open", "open", "frozen", "finals", "ended"]
    ahead = phase_at(dates, datetime(2026, 12, 18, 15, 0, tzinfo=UTC))
    assert ahead.countdown == "submissions close in 2 d 3 h"


def load_config_dates(tmp_path: Path) -> PhaseDates:
    path = tmp_path / "dates.toml"
    path.write_text('[competition]\nname = "cup"\n' + PHASES)
    return load_config(path).contest.phases


async def page(competition: Competition, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        return await client.get(path)


async def test_uploads_are_refused_before_the_opening_and_after_the_freeze(
    tmp_path: Path,
) -> None:
    competition = contest(tmp_path)
    _alice, token = competition.store.add_participant("alice")
    try:
        competition.clock = lambda: at("2026-11-30T12:00Z")
        early = await api_upload(competition, token)
        assert early.status_code == 403
        assert early.json()["error"] == (
            "submissions open at 2026-12-01T09:00:00+00:00; nothing can be uploaded before"
        )
        competition.clock = lambda: at("2026-12-20T18:00Z")
        late = await api_upload(competition, token)
        assert late.status_code == 403
        assert late.json()["error"].startswith(
            "submissions closed at 2026-12-20T18:00:00+00:00 (the freeze)"
        )
        assert competition.store.versions() == []  # nothing stored, nothing to admit
        competition.clock = lambda: at("2026-12-10T12:00Z")
        assert (await api_upload(competition, token)).status_code == 201
        # The page and the API say the phase and the countdown.
        competition.clock = lambda: at("2026-12-20T15:30Z")
        html = (await page(competition, "/")).text
        assert "open for submissions" in html and "submissions close in 2 h 30 min" in html
        phase = (await page(competition, "/api/phase")).json()
        assert phase["phase"] == "open" and phase["next"] == "freeze"
        assert phase["seconds_left"] == 2.5 * 3600
    finally:
        competition.store.close()


def test_the_organiser_moves_the_freeze_and_the_server_obeys(tmp_path: Path) -> None:
    competition = contest(tmp_path)
    config = competition.config.path
    try:
        competition.clock = lambda: at("2026-12-20T19:00Z")
        assert current(competition).name == "frozen"
        code, _out, err = newmarket(
            "serve", "move-phase", "freeze", "2026-12-20T20:00Z", str(config)
        )
        assert code == 0, err
        assert "freeze is now 2026-12-20T20:00:00+00:00" in err
        assert current(competition).name == "open"  # read from the database at every look
        # A move that breaks the order, or a time without its zone, is one line and exit 2.
        code, _out, err = newmarket(
            "serve", "move-phase", "freeze", "2026-12-22T00:00Z", str(config)
        )
        assert code == 2
        assert "finals (2026-12-21T00:00:00+00:00) must come after freeze" in err
        code, _out, err = newmarket("serve", "move-phase", "freeze", "tomorrow", str(config))
        assert code == 2 and "'tomorrow' is not an ISO 8601 time" in err
        code, _out, err = newmarket(
            "serve", "move-phase", "frost", "2026-12-20T20:00Z", str(config)
        )
        assert code == 2 and "unknown phase 'frost'" in err
    finally:
        competition.store.close()


def test_each_phase_is_told_once_to_everyone_and_again_when_a_date_moves(
    tmp_path: Path,
) -> None:
    # Participants learn from their feed that submissions closed: nothing else fires when a
    # date passes.  Told once (a restart does not tell it again), and none before opening.
    from referee.server.events import participant_events
    from referee.server.phase_events import announce_phase
    from referee.server.phases import move_date

    cup = contest(tmp_path)
    alice, _token = cup.store.add_participant("alice")
    cup.clock = lambda: at("2026-11-30T00:00Z")
    assert announce_phase(cup) is None  # before the opening
    cup.clock = lambda: at("2026-12-02T00:00Z")
    assert announce_phase(cup) is not None
    assert announce_phase(cup) is None  # already told
    cup.clock = lambda: at("2026-12-20T19:00Z")
    assert announce_phase(cup) is not None
    titles = [event.title for event in participant_events(cup.store, alice.id)]
    assert titles == [
        "the contest is now: submissions closed",
        "the contest is now: open for submissions",
    ]
    # The organiser moves the freeze later: open again, then frozen again at the new time.
    move_date(cup.config, cup.store, "freeze", "2026-12-20T21:00Z")
    assert announce_phase(cup) is not None  # submissions are open again: told
    cup.clock = lambda: at("2026-12-20T21:30Z")
    assert announce_phase(cup) is not None  # and closed again, at the new time
    assert announce_phase(cup) is None


def test_a_competition_without_dates_tells_no_phase(tmp_path: Path) -> None:
    from referee.server.phase_events import announce_phase

    assert announce_phase(contest(tmp_path, extra="")) is None
