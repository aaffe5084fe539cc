"""Slow and abusive web clients against a real server: refused or cut off, never its end.

A request head or body sent a byte at a time, many connections from one
address, more connections than the server has descriptors, a body from a
stranger: each costs the server a bounded time and a bounded share of its
descriptors, the tables go on playing and the leaderboard goes on counting.
The servers run in child processes, one with only 256 descriptors.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from referee.server.config import load_config
from tests.server.serving import Server, add_participant, competition_file, running, wait_until

HEAD = b"GET / HTTP/1.1\r\nHost: cup\r\nUser-Agent: " + b"s" * 2000 + b"\r\n\r\n"


def address(server: Server) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def stored_matches(server: Server) -> int:
    """The matches in the server's database, read beside it (WAL: never in its way)."""
    database = load_config(server.config).database
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as raw:
        return int(raw.execute("SELECT COUNT(*) FROM matches").fetchone()[0])


@dataclass
class Flood:
    """Up to ``size`` connections sending a request head a byte a second from ``source``,
    each replaced as the server closes it, until ``stop`` is set (a bounded loop)."""

    target: tuple[str, int]
    size: int
    source: str = "127.0.0.1"
    stop: threading.Event = field(default_factory=threading.Event)
    opened: int = 0
    refused: int = 0  # answered 503
    closed: int = 0  # closed by the server without an answer (its head timeout)
    most: int = 0  # connections open at once, at most

    def run(self, seconds: float) -> None:
        held: dict[socket.socket, int] = {}  # each connection, and the head's bytes it sent
        deadline = time.monotonic() + seconds
        try:
            while not self.stop.is_set() and time.monotonic() < deadline:
                for _ in range(self.size - len(held)):
                    try:
                        sock = socket.create_connection(
                            self.target, timeout=5, source_address=(self.source, 0)
                        )
                    except OSError:
                        break
                    sock.setblocking(False)
                    held[sock] = 0
                    self.opened += 1
                self.most = max(self.most, len(held))
                time.sleep(1.0)
                for sock, sent in list(held.items()):
                    try:
                        answer: bytes | None = sock.recv(4096)
                    except BlockingIOError:
                        answer = None
                    except OSError:
                        answer = b""
                    if answer is not None:
                        if answer.startswith(b"HTTP/1.1 503"):
                            self.refused += 1
                        else:
                            self.closed += 1
                        sock.close()
                        del held[sock]
                        continue
                    try:
                        sock.send(HEAD[sent : sent + 1])
                        held[sock] = sent + 1
                    except OSError:
                        pass
        finally:
            for sock in held:
                sock.close()


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    tmp = tmp_path_factory.mktemp("slow")
    config = competition_file(
        tmp,
        house=("random", "lowest", "longest"),
        extra="",
    )
    text = config.read_text().replace(
        "[server]\n",
        "[server]\nheader_timeout = 3\nbody_timeout = 3\nconnections_per_address = 8\n",
    )
    config.write_text(text)
    token = add_participant(config, "alice")
    with running(config) as server:
        yield server, token


def raw_request(server: Server, request: bytes, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(address(server), timeout=30, source_address=(source, 0))
    sock.sendall(request)
    return sock


def answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (30 s at most)."""
    sock.settimeout(30)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def test_a_request_head_sent_a_byte_a_second_is_closed_at_the_head_timeout(
    cup: tuple[Server, str],
) -> None:
    server, _token = cup
    sock = raw_request(server, b"G")
    started = time.monotonic()
    sock.settimeout(0.5)
    closed = False
    for byte in HEAD[1:60]:  # a minute's worth, if the server let it
        try:
            if sock.recv(100) == b"":
                closed = True
                break
        except TimeoutError:
            pass
        except ConnectionResetError:
            closed = True
            break
        try:
            sock.send(bytes([byte]))
        except OSError:
            closed = True
            break
    sock.close()
    assert closed and time.monotonic() - started < 3 + 10  # the 3 s head timeout, and slack


def test_one_address_gets_a_few_connections_and_others_are_still_served(
    cup: tuple[Server, str],
) -> None:
    server, _token = cup
    idle = [raw_request(server, b"") for _ in range(20)]  # connected, sending nothing
    try:
        refused = []
        for sock in idle:
            sock.settimeout(0.3)
            try:
                refused.append(sock.recv(200).startswith(b"HTTP/1.1 503"))
            except TimeoutError:
                refused.append(False)
        assert refused.count(True) == 20 - 8, refused  # the cap: 8 from one address
        # Another address is served meanwhile.
        elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(transport=elsewhere, base_url=server.url, timeout=30) as client:
            assert client.get("/").status_code == 200
    finally:
        for sock in idle:
            sock.close()
    # The closed connections are given back: this address is served again.
    wait_until("a free connection", lambda: httpx.get(server.url + "/").status_code == 200, 60)


def slow_body(server: Server, head: bytes, body: bytes, source: str = "127.0.0.1") -> bytes:
    """``head`` at once, then ``body`` a byte a second until the server answers or closes."""
    sock = raw_request(server, head, source)
    sock.settimeout(1.0)
    got = b""
    try:
        for byte in body:
            try:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got += chunk
                if b"\r\n\r\n" in got:
                    break
            except TimeoutError:
                pass
            sock.send(bytes([byte]))
        got += answer(sock)
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        sock.close()
    return got


def multipart_head(path: str, token: str | None, length: int) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST {path} HTTP/1.1\r\nHost: cup\r\n{auth}"
        "Content-Type: multipart/form-data; boundary=cut\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


BODY = (
    b'--cut\r\nContent-Disposition: form-data; name="runtime"\r\n\r\npython3\r\n'
    b'--cut\r\nContent-Disposition: form-data; name="bot"; filename="main.py"\r\n\r\n' + b"#" * 200
)


def test_an_upload_body_sent_a_byte_a_second_is_cut_off_with_408(
    cup: tuple[Server, str],
) -> None:
    server, token = cup
    started = time.monotonic()
    got = slow_body(server, multipart_head("/api/versions", token, 4000), BODY)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert b"request body too slow" in got
    assert time.monotonic() - started < 3 + 10  # the 3 s body timeout, and slack
    assert server.get("/api/me", token)["versions"] == []  # nothing was stored
    # The sign-in form, whose body must be read to know who is asking, is cut off too.
    form = b"POST /signin HTTP/1.1\r\nHost: cup\r\nContent-Type: application/x-www-form-urlencoded"
    got = slow_body(server, form + b"\r\nContent-Length: 500\r\n\r\n", b"token=" + b"x" * 100)
    assert got.startswith(b"HTTP/1.1 408"), got[:200]


def test_a_strangers_upload_is_refused_before_its_body_is_read(cup: tuple[Server, str]) -> None:
    server, _token = cup
    for path, token, status in (
        ("/api/versions", None, b"401"),
        ("/api/versions", "not-a-token", b"401"),
        ("/upload", None, b"403"),  # the web form: no session
    ):
        # A megabyte is announced and none of it is sent: the answer comes all the same.
        sock = raw_request(server, multipart_head(path, token, 1_000_000))
        got = answer(sock)
        sock.close()
        assert got.startswith(b"HTTP/1.1 " + status), (path, got[:200])


def test_more_connections_than_descriptors_leave_the_server_playing_and_counting(
    tmp_path: Path,
) -> None:
    config = competition_file(tmp_path, house=("random", "lowest", "longest"))
    text = config.read_text().replace(
        "[server]\n", "[server]\nheader_timeout = 3\nconnections_per_address = 100000\n"
    )
    config.write_text(
        text.replace("jobs = 2", "jobs = 1").replace("hand_limit = 6", "hand_limit = 2")
    )
    with running(config, descriptors=256) as server:
        wait_until("the first match", lambda: stored_matches(server) >= 1)
        before = stored_matches(server)
        flood = Flood(address(server), size=400)
        flooding = threading.Thread(target=flood.run, args=(150.0,))
        flooding.start()
        try:
            # The tables go on recording matches while every connection the server would
            # give is taken (it needs descriptors for its database and its table's pipes).
            wait_until(
                "matches during the flood", lambda: stored_matches(server) >= before + 3, 120
            )
            during = stored_matches(server)
            assert server.process.poll() is None
        finally:
            flood.stop.set()
            flooding.join(timeout=60)
        assert flood.refused > 0 and flood.most == 400, flood  # it was at its limit
        assert server.process.poll() is None, "the server ended"

        def counted() -> bool:
            rows = server.get("/api/leaderboard")["rows"]
            return sum(int(row["matches"]) for row in rows) >= 3 * during

        # Serving again, and its leaderboard counts what was played meanwhile.
        wait_until("the leaderboard to count the flood's matches", counted, 60)
        log = "".join(server.log)
        assert "Traceback" not in log and "Too many open files" not in log, log[-3000:]
