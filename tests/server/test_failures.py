"""A table worker that dies mid-group: the group is retried once, then given up, and a
version at every failed table in a row is suspended (a bot attacking its referee)."""

from __future__ import annotations

from pathlib import Path

from referee.server.competition import Competition
from referee.server.config import load_config
from referee.server.play import GroupQueue
from referee.server.store import CompetitionStore


def test_failed_tables_retry_then_give_up_and_suspend_the_common_version(
    tmp_path: Path,
) -> None:
    config_path = tmp_path / "cup.toml"
    config_path.write_text('[competition]\nname = "x"\nhouse_bots = ["random"]\n')
    config = load_config(config_path)
    store = CompetitionStore.open(config.database)
    competition = Competition(config, store)
    competition.ensure_house_bots(config.house_bots)
    house = store.versions()[0].id
    versions = []
    for name in ("alice", "bob", "mallory"):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", {"name": name, "command": ["x"]})
        versions.append(version.id)
    alice, bob, mallory = versions
    queue = GroupQueue(competition)

    first = store.plan_group(1, (mallory, alice, house), "test")
    queue.table_failed(first)
    assert [group.id for group, _done in queue.resumed] == [first.id]  # retried once
    queue.resumed.clear()
    queue.table_failed(first)
    assert queue.resumed == []  # given up
    queue.group_played(store.plan_group(2, (alice, bob, house), "test"))  # alice is fine
    queue.table_failed(store.plan_group(3, (mallory, bob, house), "test"))

    status = {v.id: v.status for v in store.versions()}
    assert status[mallory] == "suspended"
    assert status[alice] == status[bob] == status[house] == "admitted"
    suspended = store.version(mallory)
    assert suspended is not None and "died 3 times" in suspended.detail
    # A restart does not resume a group that was given up.
    assert first.id not in {group.id for group, _done in store.unfinished_groups()}
    store.close()
