"""The web side's limits on one client, in process and in virtual time (trio's autojump clock).

A body that trickles is cut off at its deadline; requests with a body from
nobody signed in are capped per address; the connection guard keeps its
reserve of descriptors; an answer the client never reads ends its
connection.  ``test_slow_clients.py`` does the same to a real server.
"""

from __future__ import annotations

import json
from pathlib import Path

import trio
import trio.testing
from starlette.types import ASGIApp, Message

from referee.server.app import build_app
from referee.server.competition import Competition
from referee.server.config import load_config
from referee.server.listener import ConnectionGuard, GuardedStream, reserve_for
from referee.server.store import CompetitionStore

FORM = [(b"content-type", b"application/x-www-form-urlencoded")]


def open_cup(tmp_path: Path) -> tuple[CompetitionStore, ASGIApp]:
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "Cup"\nself_registration = true\n'
        "[server]\nsecure_cookies = false\nbody_timeout = 20\nbody_rate = 10\n"
        "anonymous_per_address = 2\nanonymous = 3\n"
    )
    config = load_config(path)
    store = CompetitionStore.open(config.database)
    return store, build_app(Competition(config, store))


async def request(
    app: ASGIApp,
    path: str,
    chunks: list[tuple[float, bytes]],
    client: str = "192.0.2.1",
    headers: list[tuple[bytes, bytes]] = FORM,
    complete: bool = False,
) -> tuple[int, str, float]:
    """POST ``path`` whose body comes as ``(seconds later, bytes)`` chunks, the last one its
    end if ``complete``, else it waits for ever: the status, the answer's text and when it
    came (virtual seconds)."""
    started = trio.current_time()
    length = sum(len(chunk) for _, chunk in chunks)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"cup"),
            (b"content-length", str(length if complete else length + 1000).encode()),
            *headers,
        ],
        "client": (client, 40000),
        "server": ("cup", 80),
    }
    queue = list(chunks)
    status = 0
    body = b""

    async def receive() -> Message:
        if not queue:
            await trio.sleep_forever()
        wait, chunk = queue.pop(0)
        await trio.sleep(wait)
        return {"type": "http.request", "body": chunk, "more_body": bool(queue) or not complete}

    async def send(message: Message) -> None:
        nonlocal status, body
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body += message.get("body", b"")

    await app(scope, receive, send)
    return status, body.decode(), trio.current_time() - started


async def test_a_trickling_body_is_cut_off_at_its_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    store, app = open_cup(tmp_path)
    # A byte every 5 s: 20 s for the body, and a second more per 10 bytes received.
    status, text, when = await request(app, "/signin", [(5.0, b"t")] * 100)
    assert status == 408 and "request body too slow" in text
    assert 20.0 <= when <= 21.0
    # A body that keeps coming at the rate is given its time.
    status, _text, when = await request(app, "/signin", [(0.5, b"token=xxxxx")] * 10)
    assert status == 408 and when > 30.0  # then it stops, and waits out its deadline
    store.close()


async def test_requests_with_a_body_from_nobody_signed_in_are_capped(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    store, app = open_cup(tmp_path)
    answers: dict[str, tuple[int, str, float]] = {}

    async def one(name: str, client: str) -> None:
        answers[name] = await request(app, "/register", [(30.0, b"name=x")], client)

    async with trio.open_nursery() as nursery:
        for name in ("a1", "a2"):
            nursery.start_soon(one, name, "192.0.2.1")
        await trio.sleep(1)
        # A third from the same address is refused at once, before its body is read.
        status, text, when = await request(app, "/register", [(0.0, b"name=x")], "192.0.2.1")
        assert status == 503 and "nobody signed in" in json.loads(text)["error"] and when == 0
        nursery.start_soon(one, "b1", "192.0.2.2")  # another address: the third of all
        await trio.sleep(1)
        status, _text, _when = await request(app, "/register", [(0.0, b"name=x")], "192.0.2.3")
        assert status == 503  # three from all addresses at most
    # The three held ones met their deadline; the cap is free again.
    assert {name: answer[0] for name, answer in answers.items()} == {
        "a1": 408,
        "a2": 408,
        "b1": 408,
    }
    status, _text, _when = await request(
        app, "/register", [(0.0, b"name=y")], "192.0.2.1", complete=True
    )
    assert status == 403  # past the cap: refused for its missing CSRF token, as any form
    # A participant signed in by its API token is not counted with strangers.
    _alice, token = store.add_participant("alice")
    bearer = [(b"authorization", f"Bearer {token}".encode()), *FORM]
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(request, app, "/api/versions", [(30.0, b"x")], "192.0.2.1", bearer)
        await trio.sleep(1)
        status, _text, _when = await request(app, "/api/versions", [(0.0, b"x")], "192.0.2.1")
        assert status == 401  # a stranger is still refused, for its missing token
    store.close()


def test_the_guard_keeps_a_reserve_and_a_share_per_address() -> None:
    in_use = [40]  # descriptors the rest of the process holds
    now = [0.0]
    guard = ConnectionGuard(3, 256, count=lambda: in_use[0] + guard.total, clock=lambda: now[0])
    assert guard.reserve == reserve_for(256) == 128
    assert [guard.admit("a") for _ in range(4)][-1] == "too many connections from a (at most 3)"
    admitted = 3
    while guard.admit(f"b{admitted}") is None:
        admitted += 1
    assert 40 + admitted == 256 - 128  # every connection up to the reserve, and no more
    assert guard.admit("c") == "the server is at its connection limit"
    guard.release("a")
    assert guard.admit("a") is None  # a closed connection is given back at once
    in_use[0] = 20  # the server closed descriptors of its own: counted again shortly
    now[0] += 1.0
    assert guard.admit("d") is None
    assert reserve_for(100) == 50 and reserve_for(65536) == 8192


async def test_an_answer_the_client_never_reads_ends_its_connection(
    autojump_clock: trio.testing.MockClock,
) -> None:
    left, right = trio.socket.socketpair()
    with left, right:
        guarded = GuardedStream(trio.SocketStream(left), send_timeout=60.0)
        started = trio.current_time()
        try:
            await guarded.send_all(b"x" * 50_000_000)  # never read: the buffers fill
        except trio.BrokenResourceError as error:
            assert "did not read its answer" in str(error)
        else:
            raise AssertionError("a write nobody read did not end")
        assert trio.current_time() - started == 60.0
