"""Which table takes which group when remote versions play: without a server.

A group with a remote version belongs to the remote table (its connection is
the server's), a group without one to a local table, and a restart's
unfinished groups go back to the same kind of table.  A remote version is
seated only while connected; its token is its own and stable.
"""

from __future__ import annotations

from pathlib import Path

import trio

from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.play import GroupQueue, group_matches
from referee.server.remote import CompetitionLobby, bot_token


def competition(tmp_path: Path) -> Competition:
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "x"\nhouse_bots = ["random", "lowest", "tracker"]\n'
        "[remote]\nport = 0\n"
    )
    config = load_config(path)
    store = CompetitionStore.open(config.database)
    made = Competition(config, store)
    made.ensure_house_bots(config.house_bots)
    return made


async def test_groups_go_to_their_kind_of_table_and_remote_versions_only_when_connected(
    tmp_path: Path,
) -> None:
    cup = competition(tmp_path)
    store = cup.store
    house = [v.id for v in store.versions()]
    alice, _token = store.add_participant("alice")
    remote = store.add_version(alice.id, "remote", "", "", 0)
    cup.lobby = CompetitionLobby(cup)  # registers the pending remote version
    assert cup.lobby.bots[remote.id].remote
    token = bot_token(store.secret, remote.id)
    assert token == bot_token(store.secret, remote.id) != bot_token(store.secret, remote.id + 1)
    assert len(token) == 32

    local_group = store.plan_group(11, tuple(house), "test")
    remote_group = store.plan_group(12, (remote.id, house[0], house[1]), "test")
    queue = GroupQueue(cup)  # both unfinished: as after a restart
    with trio.fail_after(5):
        assert (await queue.next_group(remote=True))[0] == remote_group
        assert (await queue.next_group(remote=False))[0] == local_group

    # A remote group's rotations each have a deal of their own; a local group's share one.
    assert len({key.seed for key in group_matches(cup, remote_group, 1, set())}) == 3
    assert {key.seed for key in group_matches(cup, local_group, 1, set())} == {11}

    # Admitted but not connected: never a candidate, at either kind of table.
    store.decide(remote.id, "admitted", "ok", "", cup.lobby.bots[remote.id].to_json())
    assert remote.id not in {c.version for c in queue.candidates(remote=True)}
    assert remote.id not in {c.version for c in queue.candidates(remote=False)}
    with trio.move_on_after(1.5):  # no connected remote version: the remote table waits
        await queue.next_group(remote=True)
        raise AssertionError("the remote table planned a group with no remote bot connected")
    store.close()
