"""Events: published once, with the decision or the match that caused them (no server)."""

from __future__ import annotations

from pathlib import Path

from referee.match.result import FaultRecord
from referee.server.events import (
    decide,
    mark_delivered,
    participant_events,
    publish_event,
    record_match,
    retry_later,
    undelivered,
)
from tests.server.inprocess import admitted_group, finished, open_competition


def test_a_decision_and_a_first_crash_are_each_told_once_to_their_owner(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        group = admitted_group(store)
        alice, bob, _carol = group.versions
        rejected = store.add_version(store.version(bob).participant, "python3", "b.py", "", 1)  # type: ignore[union-attr]
        decide(store, rejected.id, "rejected", "check: step 2: timeout fault: no reply")
        decide(store, rejected.id, "rejected", "check: step 2: timeout fault: no reply")
        result = finished("g1r0", 5)
        result.seats[0].faults.append(FaultRecord(kind="crash", hand=2, detail="exit 1"))
        assert record_match(store, group, 0, group.versions, result, None, identity=5)
        assert not record_match(store, group, 0, group.versions, result, None, identity=5)
        again = finished("g1r1", 5)
        again.seats[1].faults.append(FaultRecord(kind="crash", hand=1, detail="exit 1"))
        record_match(store, group, 1, (bob, alice, group.versions[2]), again, None, identity=5)
        everyone = publish_event(store, None, "phase", "Submissions close", "/")

        alice_owner = store.version(alice).participant  # type: ignore[union-attr]
        bob_owner = store.version(bob).participant  # type: ignore[union-attr]
        told_alice = [(e.kind, e.title, e.link) for e in participant_events(store, alice_owner)]
        assert told_alice == [
            ("phase", "Submissions close", "/"),
            ("crash", "alice v1: its first crash, in match g1r0 (hand 2)", "/matches/g1r0"),
        ]
        told_bob = [(e.kind, e.title) for e in participant_events(store, bob_owner)]
        assert told_bob == [
            ("phase", "Submissions close"),
            ("rejected", "bob v2 rejected: check: step 2: timeout fault: no reply"),
        ]
        assert everyone is not None
    finally:
        store.close()


def test_a_failed_delivery_waits_twice_as_long_each_time(tmp_path: Path) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    try:
        first = publish_event(store, None, "phase", "Open", "/", at=100.0)
        assert [e.id for e in undelivered(store, now=100.0)] == [first]
        (event,) = undelivered(store, now=100.0)
        assert retry_later(store, event, now=100.0) == 5.0
        assert undelivered(store, now=104.0) == []
        (event,) = undelivered(store, now=105.0)
        assert retry_later(store, event, now=105.0) == 10.0
        mark_delivered(store, event.id)
        assert undelivered(store, now=10_000.0) == []
    finally:
        store.close()
