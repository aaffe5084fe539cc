"""A real ``newmarket serve`` in a child process, as an organiser starts it, for the tests.

The server is told ``--port 0`` and its address is read from the line it
prints when it is ready.  Matches are short (a low hand limit) and the time
limits generous, so no test depends on timing luck; waits poll with a
generous deadline.
"""

from __future__ import annotations

import dataclasses
import os
import re
import resource
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from referee.server.config import load_config
from referee.server.store import CompetitionStore, hash_token

REPO = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).parent / "bots"
NEWMARKET = [sys.executable, "-m", "referee.cli"]


def competition_file(
    tmp_path: Path,
    house: tuple[str, ...] = ("random",),
    extra: str = "",
    secure: bool = False,
    **sections: str,
) -> Path:
    path = tmp_path / "cup.toml"
    bots = ", ".join(f'"{name}"' for name in house)
    path.write_text(
        f'[competition]\nname = "Test cup"\nhouse_bots = [{bots}]\n'
        + extra
        + f"\n[server]\nsecure_cookies = {str(secure).lower()}\njobs = 2\n"
        + "\n[tables]\nplayers = 3\nhand_limit = 6\n"
        + "\n[time_control]\nmove_time = 10.0\nstartup_time = 30.0\n"
        + "".join(f"\n[{name}]\n{body}\n" for name, body in sections.items())
    )
    return path


def newmarket(*args: str) -> str:
    done = subprocess.run(
        [*NEWMARKET, *args], capture_output=True, text=True, cwd=REPO, check=True, timeout=60
    )
    return done.stdout.strip()


def add_participant(config: Path, name: str) -> str:
    """A participant's token, written straight to the store (the command costs a Python
    start-up each; tests/server/test_command.py and the browser test use the command)."""
    store = CompetitionStore.open(load_config(config).database)
    try:
        return store.add_participant(name)[1]
    finally:
        store.close()


def add_old_participant(config: Path, name: str) -> str:
    """A participant whose name an older server took before names had rules (``<b>``, say):
    written to the database by hand, as that server left it.  Its token."""
    token = secrets.token_urlsafe(24)
    with sqlite3.connect(load_config(config).database) as raw:
        raw.execute(
            "INSERT INTO participants (name, token_hash, created_at) VALUES (?, ?, 0)",
            (name, hash_token(token)),
        )
    return token


@dataclasses.dataclass
class Server:
    process: subprocess.Popen[str]
    url: str
    config: Path
    log: list[str] = dataclasses.field(default_factory=list)  # from the ready line on
    before_ready: list[str] = dataclasses.field(default_factory=list)  # what it said first

    def read_log(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def get(self, path: str, token: str | None = None) -> Any:
        with self.client(token) as client:
            response = client.get(path)
            response.raise_for_status()
            return response.json()

    def kill(self, signum: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signum)
        self.process.wait(timeout=60)


def start(config: Path, *options: str, descriptors: int | None = None) -> Server:
    """``descriptors``: the server's descriptor limit, soft and hard (it cannot raise it)."""

    def limited() -> None:
        if descriptors is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    process = subprocess.Popen(
        [*NEWMARKET, "serve", str(config), "--port", "0", *options],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=None if descriptors is None else limited,
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    said: list[str] = []
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            raise AssertionError(f"the server exited ({process.wait()}) before it was ready")
        found = re.search(r" at (http://\S+) ", line)
        if found:
            server = Server(process, found.group(1), config, [line], said)
            # Keep reading stderr so the server never blocks on a full pipe (and keep it).
            threading.Thread(target=server.read_log, daemon=True).start()
            return server
        said.append(line)
    process.kill()
    raise AssertionError("the server did not say it was ready within 60 s")


@contextmanager
def running(config: Path, *options: str, descriptors: int | None = None) -> Iterator[Server]:
    server = start(config, *options, descriptors=descriptors)
    try:
        yield server
    finally:
        if server.process.poll() is not None:  # it ended by itself: say how, for the failure
            print(f"the server ended by itself ({server.process.returncode}); its stderr:")
            print("".join(server.log[-60:]))
        server.kill(signal.SIGTERM)


def wait_until(what: str, predicate: Callable[[], Any], timeout: float = 240.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"waited {timeout:g} s for {what}")


def version_status(server: Server, version: int) -> str | None:
    status = server.get(f"/api/versions/{version}")["status"]
    return None if status == "pending" else str(status)


def upload(server: Server, token: str | None, path: Path, runtime: str) -> httpx.Response:
    """``path`` sent to ``/api/versions`` as a participant's script sends it, under its own name."""
    with server.client(token) as client:
        return client.post(
            "/api/versions",
            data={"runtime": runtime},
            files={"bot": (path.name, path.read_bytes())},
        )


def uploaded(server: Server, token: str, path: Path, runtime: str = "python3") -> int:
    """An upload the server must take (201 Created): the new version's id."""
    sent = upload(server, token, path, runtime)
    assert sent.status_code == 201, sent.text
    return int(sent.json()["id"])
