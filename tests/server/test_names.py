"""Participant names: the organiser's house bots cannot be impersonated, nor anybody else.

Each refusal is what a participant registering (on the web or by the
organiser's ``add-participant``) is told, in one line.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore, StoreError
from referee.server.names import looks_like, normal_name
from tests.server.inprocess import open_competition


@pytest.mark.parametrize(
    ("existing", "newcomer"),
    [
        ("alice", "Alice"),  # another case
        ("alice", "ALICE"),
        ("alice", "\u0430lice"),  # a Cyrillic а
        ("alice", "\u0430l\u0456ce"),  # a Cyrillic а and і
        ("scope", "\u0455\u0441\u043e\u0440\u0435"),  # all Cyrillic: one script, same look
        ("alice", "aIice"),  # a capital I for the l
        ("mary", "rnary"),  # r n for m
        ("admin2", "ADMlN2"),  # an l for the I of the upper-case name
        ("alice", "\uff41\uff4c\uff49\uff43\uff45"),  # full-width: NFKC makes it alice
        ("bob", "bob "),  # the same once trimmed
    ],
)
def test_a_look_alike_of_a_registered_name_is_refused(
    tmp_path: Path, existing: str, newcomer: str
) -> None:
    store = CompetitionStore.open(tmp_path / "cup.sqlite")
    store.add_participant(existing)
    with pytest.raises(StoreError, match=f"is taken(: it looks like '{existing}')?$"):
        store.add_participant(newcomer)
    assert [p.name for p in store.participants()] == [existing]
    store.close()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("house:squatter", "':' is not allowed"),
        ("house\ua789squatter", "'\ua789' is not allowed"),  # a letter that looks like a colon
        ("House", "is reserved"),
        ("ADMIN", "is reserved"),
        ("house-tracker", "is reserved (it looks like 'house:')"),  # as house:tracker
        ("House Random", "is reserved (it looks like 'house:')"),
        ("a\u200bb", "'U+200B' is not allowed"),  # zero width space
        ("evil\u202egnp.exe", "'U+202E' is not allowed"),  # right-to-left override
        ("<img src=x>", "'<' is not allowed"),
        ("pay\u0440al", "mixes scripts"),  # a Cyrillic р among Latin letters
        ("a  b", "one space at most"),
        ("...", "needs a letter or a digit"),
        ("x" * 41, "1 to 40 characters"),
    ],
)
def test_reserved_and_unsafe_names_are_refused_in_one_line(
    tmp_path: Path, name: str, why: str
) -> None:
    store = CompetitionStore.open(tmp_path / "cup.sqlite")
    with pytest.raises(StoreError, match=re.escape(why)) as refused:
        store.add_participant(name)
    assert "\n" not in str(refused.value)
    assert store.participants() == []
    store.close()


def test_names_in_other_scripts_and_distinct_names_are_welcome(tmp_path: Path) -> None:
    store = CompetitionStore.open(tmp_path / "cup.sqlite")
    names = [
        "alice",
        "ali",
        "all",
        "bill",
        "bob",
        "rob",
        "José",
        "Zoë",
        "李小龙",
        "Анна",
        "b.o_2",
        "household",
    ]
    for name in names:
        store.add_participant(name)
    assert [p.name for p in store.participants()] == names
    # Stored in NFKC, and found by any form of it.
    store.add_participant("\uff4a\uff41\uff4e\uff45")  # full-width jane
    found = store.participant_by_name("\uff4a\uff41\uff4e\uff45")
    assert found is not None and found.name == "jane"
    store.close()


def test_the_look_alike_rule_is_symmetric() -> None:
    for a, b in (("alice", "\u0430lice"), ("mary", "rnary"), ("Bob", "BOB")):
        assert looks_like(a, b) and looks_like(b, a)
    assert not looks_like("ann", "anne") and not looks_like("ali", "all")
    assert normal_name("  Zo\u0065\u0308  ") == "Zo\u00eb"  # composed, trimmed


def test_a_house_bot_is_the_organisers_mark_not_its_name(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    competition.ensure_house_bots(("random",))
    (house,) = store.versions()
    assert house.participant_name == "house:random" and competition.is_house(house)
    # A participant cannot take a house name, however written.
    for name in ("house:tracker", "HOUSE:random", "house\ua789tracker"):
        with pytest.raises(StoreError):
            store.add_participant(name)
    # A name an older server let somebody register is nobody's house bot: the mark is.
    with sqlite3.connect(store.path) as raw:
        raw.execute(
            "INSERT INTO participants (name, token_hash, created_at) "
            "VALUES ('house:squatter', 'x', 0)"
        )
    squatter = store.participant_by_name("house:squatter")
    assert squatter is not None
    version = store.add_version(squatter.id, "python3", "main.py", "", 1)
    assert not competition.is_house(version)
    store.close()


def test_a_house_name_taken_under_an_older_server_does_not_make_its_owner_a_house_bot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    with sqlite3.connect(store.path) as raw:  # registered before names had rules
        raw.execute(
            "INSERT INTO participants (name, token_hash, created_at) "
            "VALUES ('house:lowest', 'x', 0)"
        )
    squatter = store.participant_by_name("house:lowest")
    assert squatter is not None
    store.add_version(squatter.id, "python3", "main.py", "", 1)
    competition.ensure_house_bots(("lowest", "random"))
    assert store.house_participants() == {
        p.id for p in store.participants() if p.name == "house:random"
    }
    assert "house bot 'lowest' not added: a participant registered" in capsys.readouterr().err
    # A house bot of such a database (its versions all the server's bundled bot) is marked.
    fresh = Competition(competition.config, store)
    with sqlite3.connect(store.path) as raw:
        raw.execute("DELETE FROM house_participants")
    fresh.ensure_house_bots(("random",))
    assert len(store.house_participants()) == 1
    store.close()
