"""The remote lobby and its tokens, on loopback sockets driven by hand (no bot processes).

Each test plays a participant's side of the handshake with a raw socket and
checks what a participant or an organiser would see: the refusal line, who
is connected, the tokens file, the league file's errors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import trio

from protocol.faults import FaultKind
from protocol.messages import PROTOCOL_VERSION
from referee.bots import BotSpec
from referee.league.league_file import ConfigError, parse_config
from referee.transport.lobby import (
    RemoteLobby,
    TokenFileError,
    issue_tokens,
    league_tokens,
    open_lobby,
    read_tokens,
)
from referee.transport.timecontrol import TimeControl

BOTS = [BotSpec("alice", (), transport="tcp"), BotSpec("bob", (), transport="tcp")]
TOKENS = {0: "alice-secret", 1: "bob-secret"}
CONTROL = TimeControl(startup_time=30)


async def join(
    lobby: RemoteLobby, token: str | None
) -> tuple[trio.SocketStream, dict[str, object]]:
    """Connect, read hello, send ready with ``token``; returns the stream and the hello."""
    assert lobby.address is not None
    stream = await trio.open_tcp_stream(*lobby.address)
    hello = json.loads(await read_line(stream))
    ready: dict[str, object] = {"type": "ready", "name": "x", "version": "1", "protocol": 1}
    if token is not None:
        ready["token"] = token
    await stream.send_all(json.dumps(ready).encode() + b"\n")
    return stream, hello


async def read_line(stream: trio.SocketStream) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = await stream.receive_some(65536)
        if not chunk:
            break
        data += chunk
    return data


async def until_connected(lobby: RemoteLobby, bot: int) -> None:
    with trio.fail_after(30):
        while lobby.live(bot) is None:
            await lobby.wait_for_change(math.inf)


async def test_a_bot_is_known_by_its_token_and_a_wrong_one_is_refused() -> None:
    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=60) as lobby:
        stranger, hello = await join(lobby, "guess")
        assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL_VERSION
        refusal = json.loads(await read_line(stranger))
        assert refusal["type"] == "fault" and "token" in refusal["detail"]
        assert await stranger.receive_some(100) == b""  # and the connection is closed
        assert lobby.live(0) is None and lobby.live(1) is None

        bob, _ = await join(lobby, "bob-secret")
        await until_connected(lobby, 1)
        assert lobby.live(0) is None
        assert lobby.absent_deadline(1) == -math.inf
        await bob.aclose()


async def test_a_second_connection_is_refused_during_a_match_and_replaces_an_idle_one() -> None:
    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=60) as lobby:
        first, _ = await join(lobby, "alice-secret")
        await until_connected(lobby, 0)
        session = lobby.live(0)
        lobby.busy.add(0)  # as the pool marks a bot at a table
        second, _ = await join(lobby, "alice-secret")
        refusal = json.loads(await read_line(second))
        assert "already connected and playing" in refusal["detail"]
        assert lobby.live(0) is session
        lobby.busy.discard(0)
        third, _ = await join(lobby, "alice-secret")
        with trio.fail_after(30):
            while lobby.live(0) is session:
                await lobby.wait_for_change(math.inf)
        assert session is not None and not session.alive
        assert await first.receive_some(100) == b""  # the old connection is closed
        await third.aclose()


async def test_a_bot_whose_session_died_reconnects_with_its_token() -> None:
    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=60) as lobby:
        first, _ = await join(lobby, "alice-secret")
        await until_connected(lobby, 0)
        old = lobby.live(0)
        assert old is not None
        old.lose(FaultKind.EOF, "it closed the connection")  # as a match notices a drop
        assert lobby.live(0) is None
        assert lobby.absent_deadline(0) == pytest.approx(trio.current_time() + 60, abs=5)
        again, _ = await join(lobby, "alice-secret")
        await until_connected(lobby, 0)
        assert lobby.live(0) is not old
        await first.aclose()
        await again.aclose()


async def test_an_absent_bot_gets_a_dead_session_saying_why() -> None:
    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=7) as lobby:
        missing = lobby.absent_session(1)
        assert not missing.alive and missing.death is not None
        assert "did not connect within 7 s (no-show)" in missing.death.detail


def test_tokens_are_kept_renewed_on_request_and_private(tmp_path: Path) -> None:
    path = tmp_path / "cup.tokens.json"
    first = issue_tokens(path, ["alice", "bob"])
    assert len(set(first.values())) == 2 and all(len(token) >= 32 for token in first.values())
    assert issue_tokens(path, ["alice", "bob"]) == first
    renewed = issue_tokens(path, ["alice", "bob"], renew=["bob"])
    assert renewed["alice"] == first["alice"] and renewed["bob"] != first["bob"]
    assert read_tokens(path) == renewed
    assert path.stat().st_mode & 0o077 == 0


def test_a_league_without_a_token_for_a_remote_bot_says_which(tmp_path: Path) -> None:
    path = tmp_path / "cup.tokens.json"
    with pytest.raises(TokenFileError, match="newmarket tokens"):
        league_tokens(path, BOTS)
    issue_tokens(path, ["alice"])
    with pytest.raises(TokenFileError, match="'bob'"):
        league_tokens(path, BOTS)


LEAGUE = """
[league]
seed = 1
table_size = 3
[remote]
port = 9000
wait = 30
[[bots]]
name = "a"
remote = true
[[bots]]
name = "b"
command = "random"
[[bots]]
name = "c"
command = "random"
"""


def test_the_league_file_declares_remote_bots_and_where_to_listen(tmp_path: Path) -> None:
    config = parse_config(LEAGUE, tmp_path / "cup.toml")
    assert config.bots[0].remote and not config.bots[1].remote
    assert (config.remote.host, config.remote.port, config.remote.wait) == ("127.0.0.1", 9000, 30)
    assert config.tokens_path == tmp_path / "cup.tokens.json"
    with pytest.raises(ConfigError, match=r"bots\[0\]\.command: a remote bot is started by"):
        parse_config(LEAGUE.replace("remote = true", 'remote = true\ncommand = "x"'), tmp_path)
    with pytest.raises(ConfigError, match=r"remote\.wait: must be a positive"):
        parse_config(LEAGUE.replace("wait = 30", "wait = 0"), tmp_path / "cup.toml")


async def test_a_port_in_use_is_one_clear_error_before_anything_is_played() -> None:
    with trio.socket.socket() as taken:
        await taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"cannot listen for remote bots on 127.0.0.1:{port}: "):
            async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=port, wait=60):
                pass


async def test_two_connections_replacing_one_at_once_leave_one_seated_and_close_the_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A new connection waits for the old session's end; a third, coming meanwhile, finds
    # the old one already lost and is seated at once.  The waiting one then used to seat
    # itself over the third without ending it: the third's socket stayed open for good,
    # one leaked per try for whoever holds the token.
    from referee.transport.session import BotSession

    async with open_lobby(BOTS, TOKENS, CONTROL, host="127.0.0.1", port=0, wait=60) as lobby:
        first, _ = await join(lobby, "alice-secret")
        await until_connected(lobby, 0)
        old = lobby.live(0)
        assert old is not None
        waiting = trio.Event()
        gate = trio.Event()
        real_end = BotSession.end

        async def slow_end(self: BotSession) -> None:
            if self is old:
                waiting.set()
                await gate.wait()
            await real_end(self)

        monkeypatch.setattr(BotSession, "end", slow_end)
        second, _ = await join(lobby, "alice-secret")
        with trio.fail_after(30):
            await waiting.wait()  # the second connection is inside the old session's end
        third, _ = await join(lobby, "alice-secret")
        with trio.fail_after(30):
            while lobby.live(0) is None:  # the third is seated meanwhile
                await lobby.wait_for_change(math.inf)
        gate.set()
        # Exactly one of the two stays seated; the other's connection is closed.
        closed = 0
        for stream in (second, third):
            with trio.move_on_after(5):
                while await stream.receive_some(65536):
                    pass
                closed += 1
        assert closed == 1
        live = lobby.live(0)
        assert live is not None and live.alive and live is not old
        for stream in (first, second, third):
            await stream.aclose()
