"""The server's one remote table, with a participant whose bot reconnects in a loop.

The real remote table (``remote_table_loop``: the scheduler's groups, the
lobby, the pool, the results in the store) on trio's virtual clock; only the
match itself is a stand-in (``RemotePool._play_seated``), which takes twenty
seconds, and in which the looping bot's connection drops half-way.  The
looping bot's owner then connects again fifty seconds later, through the
lobby's real handshake, each time.  The well-behaved remote bot must keep a
fair share of the table, and the looping one must be benched, for longer
each time, told so when it connects.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from protocol.faults import FaultKind
from referee.match.result import MatchResult, SeatResult
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import load_config
from referee.server.play import GroupQueue
from referee.server.remote import CompetitionLobby, bot_token, remote_table_loop
from referee.tables.job import TableJob
from referee.tables.remote_pool import RemotePool

MATCH = 20.0  # seconds a stand-in match takes
RECONNECT = 50.0  # seconds the looping bot's owner takes to connect again
RUN = 3 * 3600.0  # seconds of virtual time the table plays


@pytest.fixture
def autojump_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


@pytest.fixture
def cups(tmp_path: Path) -> Iterator[Callable[[], Competition]]:
    """Makes competitions: three house bots, a remote port, remote bots waited for 60 s."""
    made: list[CompetitionStore] = []

    def make() -> Competition:
        folder = tmp_path / f"cup{len(made)}"
        folder.mkdir()
        path = folder / "cup.toml"
        path.write_text(
            '[competition]\nname = "x"\nhouse_bots = ["random", "lowest", "tracker"]\n'
            "[remote]\nport = 0\nwait = 60\n"
        )
        store = CompetitionStore.open(load_config(path).database)
        made.append(store)
        competition = Competition(load_config(path), store)
        competition.ensure_house_bots(competition.config.house_bots)
        return competition

    yield make
    for store in made:
        store.close()


class Owner:
    """A participant's side of the lobby: connects its bot with its token, as a bridge does."""

    def __init__(self, lobby: CompetitionLobby, version: int, host: str) -> None:
        self.lobby = lobby
        self.version = version
        self.host = host
        self.refusals: list[str] = []

    async def connect(self, nursery: trio.Nursery) -> None:
        """Connect; refused, try again ``RECONNECT`` seconds later (an owner's restart loop)."""
        while not await self._try(nursery):
            await trio.sleep(RECONNECT)

    async def _try(self, nursery: trio.Nursery) -> bool:
        ours, theirs = trio.testing.memory_stream_pair()
        nursery.start_soon(self.lobby.admit, theirs, (self.host, 40000))
        hello = await _line(ours)
        assert json.loads(hello)["type"] == "hello"
        token = bot_token(self.lobby.competition.store.secret, self.version)
        ready = {"type": "ready", "name": "b", "protocol": 1, "token": token}
        await ours.send_all(json.dumps(ready).encode() + b"\n")
        # Refused at once (one fault line), or seated: nothing more comes until a match.
        with trio.move_on_after(1):
            answer = await _line(ours)
            if answer:
                self.refusals.append(json.loads(answer)["detail"])
                return False
        return True


async def _line(stream: trio.abc.Stream) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = await stream.receive_some(65536)
        if not chunk:
            break
        data += chunk
    return data


def stand_in_match(
    looper: int, owner: Owner, nursery: trio.Nursery
) -> Callable[[RemotePool, TableJob], Awaitable[MatchResult]]:
    """``RemotePool._play_seated``'s stand-in: ``looper``'s connection drops half-way."""

    async def play(pool: RemotePool, job: TableJob) -> MatchResult:
        seated = {}
        for bot in job.key.bots:
            if pool.bots[bot].remote:
                seated[bot] = pool.lobby.live(bot) or pool.lobby.absent_session(bot)
        await trio.sleep(MATCH / 2)
        session = seated.get(looper)
        if session is not None and session.alive:  # its connection drops mid-match ...
            session.lose(FaultKind.EOF, "it closed the connection")
            await session.end()

            async def again() -> None:  # ... and its owner connects again a bit later
                await trio.sleep(RECONNECT)
                await owner.connect(nursery)

            nursery.start_soon(again)
        await trio.sleep(MATCH / 2)
        seats = [
            SeatResult(seat, pool.bots[bot].name, seat + 1, 40, "ok", [], 0, 0, 0)
            for seat, bot in enumerate(job.key.bots)
        ]
        return MatchResult(job.key.match_id, job.key.seed, {}, 1, seats, None, "hand_limit")

    return play


async def play_for_a_while(
    cup: Competition, monkeypatch: pytest.MonkeyPatch, loop: bool
) -> tuple[dict[int, int], Owner, list[str], tuple[int, int]]:
    """Matches played per version in ``RUN`` seconds, the looping owner, the lobby's notes."""
    store = cup.store
    remote = []
    for name in ("loopy", "steady"):
        participant, _token = store.add_participant(name)
        remote.append(store.add_version(participant.id, "remote", "", "", 0).id)
    loopy, steady = remote
    notes: list[str] = []
    monkeypatch.setattr("referee.server.remote._note", notes.append)
    lobby = CompetitionLobby(cup)
    lobby.note = notes.append
    cup.lobby = lobby
    lobby.start_clock()
    owner = Owner(lobby, loopy, "198.51.100.7")
    async with trio.open_nursery() as nursery:
        monkeypatch.setattr(
            RemotePool,
            "_play_seated",
            stand_in_match(loopy if loop else -1, owner, nursery),
        )
        await Owner(lobby, steady, "203.0.113.9").connect(nursery)
        await owner.connect(nursery)
        nursery.start_soon(remote_table_loop, cup, GroupQueue(cup), lobby, 0)
        await trio.sleep(RUN)
        nursery.cancel_scope.cancel()
    rows = store._db.execute("SELECT version, COUNT(*) FROM seats GROUP BY version").fetchall()
    return {int(v): int(n) for v, n in rows}, owner, notes, (loopy, steady)


async def test_a_bot_reconnecting_in_a_loop_is_benched_and_the_other_keeps_its_share(
    autojump_clock: trio.testing.MockClock,
    cups: Callable[[], Competition],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Fair, to measure by: two steady remote bots share the table, nobody is benched.
    fair, owner, notes, (first, second) = await play_for_a_while(cups(), monkeypatch, False)
    assert not owner.refusals and not [note for note in notes if "benched" in note]
    assert math.isclose(fair[first], fair[second], rel_tol=0.25), fair

    cup = cups()
    played, owner, notes, (loopy, steady) = await play_for_a_while(cup, monkeypatch, True)
    # The steady bot keeps its fair share of the table (without the bench, the table
    # waited for the loopy one so often that it played two thirds of that), and the
    # loopy one plays far less than its share.
    assert played[steady] >= 0.9 * fair[second], (played, fair)
    assert played.get(loopy, 0) < fair[first] / 3, (played, fair)
    benches = [note for note in notes if " benched for " in note]
    lengths = [float(note.split(" benched for ")[1].split(" s")[0]) for note in benches]
    assert lengths[:4] == [60, 120, 240, 480], benches  # a growing back-off
    assert cup.lobby is not None
    assert all(note.startswith(f"lobby: {cup.lobby.bots[loopy].name} ") for note in benches)
    # Connecting while benched: refused, told how long and why, never seated.
    assert owner.refusals and all(" is benched for " in text for text in owner.refusals)
    assert "each next bench is twice as long" in owner.refusals[0]
