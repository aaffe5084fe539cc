"""Hostile uploads against a real server: each is refused or contained, and the server goes on.

zip-slip, a symlink, a decompression bomb, a 1 GB upload (declared, and
streamed without a length), a bot that passes the check and then attacks
its table from inside a match, and three uploads that used to end the
server (a file named ``build`` in a C upload, a path 1500 directories deep)
or its hourly limit (40 uploads at once).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import signal
import socket
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import httpx
import pytest

from referee.match.log import LogError
from tests.match_logs import kept_logs, log_text
from tests.server.serving import (
    BOTS,
    Server,
    add_participant,
    competition_file,
    running,
    version_status,
    wait_until,
)

GIB = 1 << 30


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("hostile")
    # Uploads up to 4 MiB: above 1 MiB Starlette spools a file to disk and reads it in a
    # thread, which is what let uploads sent at once past the hourly limit.
    config = competition_file(tmp, house=("lowest", "random"), uploads="max_kb = 4096")
    tokens = {name: add_participant(config, name) for name in ("alice", "mallory", "flood")}
    with running(config) as server:
        yield server, tokens


def post(server: Server, token: str, name: str, payload: bytes) -> httpx.Response:
    with server.client(token) as client:
        return client.post(
            "/api/versions", data={"runtime": "python3"}, files={"bot": (name, payload)}
        )


def zipped(name: str, data: bytes, mode: int = stat.S_IFREG | 0o644) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo(name)
        info.external_attr = mode << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, data)
    return buffer.getvalue()


def test_zip_slip_is_refused_with_400_and_writes_nothing_outside(
    cup: tuple[Server, dict[str, str]], tmp_path: Path
) -> None:
    server, tokens = cup
    response = post(server, tokens["mallory"], "slip.zip", zipped("../../../../evil.py", b"x"))
    assert response.status_code == 400
    assert "leaves the directory" in response.json()["error"]
    data = server.config.parent / "cup-data"
    assert not any(p.name == "evil.py" for p in data.parent.rglob("evil.py"))
    rejected = server.get("/api/participants/mallory", tokens["mallory"])["versions"][0]
    assert rejected["status"] == "rejected" and rejected["detail"].startswith("upload:")


def test_a_symlink_is_refused(cup: tuple[Server, dict[str, str]]) -> None:
    server, tokens = cup
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("main.py")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/shadow"
        archive.addfile(info)
    response = post(server, tokens["mallory"], "link.tar.gz", buffer.getvalue())
    assert response.status_code == 400 and "a link" in response.json()["error"]


def test_a_decompression_bomb_is_refused(cup: tuple[Server, dict[str, str]]) -> None:
    server, tokens = cup
    bomb = zipped("main.py", b"\0" * (256 << 20))  # 256 MiB of zeros in ~250 KiB
    response = post(server, tokens["mallory"], "bomb.zip", bomb)
    assert response.status_code == 400 and "decompression bomb" in response.json()["error"]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def test_a_1_gb_upload_is_cut_off_not_held(cup: tuple[Server, dict[str, str]]) -> None:
    server, tokens = cup
    before = rss_kib(server.process.pid)
    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        yield b'--xyz\r\nContent-Disposition: form-data; name="bot"; filename="big.py"\r\n\r\n'
        chunk = b"#" * (1 << 20)
        while sent < GIB:
            sent += len(chunk)
            yield chunk

    headers = {
        "Authorization": f"Bearer {tokens['mallory']}",
        "Content-Type": "multipart/form-data; boundary=xyz",
    }
    # Declared: refused from the Content-Length alone; not one byte of the body is sent.
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(
            f"POST /api/versions HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {tokens['mallory']}\r\n"
            "Content-Type: multipart/form-data; boundary=xyz\r\n"
            f"Content-Length: {GIB}\r\n\r\n".encode()
        )
        received = b""
        while chunk := connection.recv(65536):  # the server answers, then closes
            received += chunk
        answer = received.decode()
    assert answer.startswith("HTTP/1.1 413") and "too large" in answer
    # Streamed without a length: read up to the cap, then the server answers and stops reading.
    with contextlib.suppress(httpx.TransportError):
        streamed = httpx.post(server.url + "/api/versions", headers=headers, content=body())
        assert streamed.status_code == 413
    assert sent < 128 << 20  # the client was stopped far short of the gigabyte
    assert rss_kib(server.process.pid) - before < 64 << 10  # and the server holds none of it
    assert server.get("/api/leaderboard")["competition"] == "Test cup"


def test_a_bot_attacking_its_table_is_contained_and_play_goes_on(
    cup: tuple[Server, dict[str, str]],
) -> None:
    server, tokens = cup
    good = post(server, tokens["alice"], "main.py", (BOTS / "plain.py").read_bytes())
    bad = post(server, tokens["mallory"], "main.py", (BOTS / "attack.py").read_bytes())
    assert good.status_code == bad.status_code == 201
    for version in (good.json()["id"], bad.json()["id"]):
        assert wait_until("admission", partial(version_status, server, version)) == "admitted"
    files = server.config.parent / "cup-data" / "versions" / f"{bad.json()['id']:06d}" / "files"
    # Admission cannot be told from play, so the attack is armed now that it is over (as a
    # time bomb would go off), with a mark of this run that names the attacker's children.
    mark = f"attack-sleeper-{secrets.token_hex(6)}"
    (files / "armed").write_text(mark)
    logs = server.config.parent / "cup-data" / "logs"
    try:
        # The attack comes at the attacker's first request of a match once armed; its stderr,
        # kept in the match log, says it ran.
        said = wait_until("the attack's stderr in a match log", partial(attack_stderr, logs))
        assert f"ATTACK started 20 children as {mark}" in said, said
        # One attack makes the point: disarmed, the attacker plays on as a bot, and the
        # matches after it are not each an attack's few seconds of burnt CPU.
        (files / "armed").unlink()
        after_attack = server.get("/api/leaderboard")["matches"]
        wait_until(
            "play to go on after the attack",
            lambda: server.get("/api/leaderboard")["matches"] >= after_attack + 6,
        )
        with server.client() as client:
            assert client.get("/").status_code == 200
        # Nothing the attacker started outlives its match (pid namespace and cgroup): its
        # children would sleep an hour, and the wait is far shorter...
        wait_until("the attacker's children to be gone", lambda: not _sleepers(mark), 120)
        # ...its own directory stayed read-only to it...
        assert "ATTACK write into its own directory refused" in said, said
        assert not (files / "attack.pids").exists()
        # ...and its SIGKILL reached only its namespace's init (which ignores it), so it lived
        # on to say so: without a pid namespace it kills the sandbox above it, and dies with it.
        assert "ATTACK SIGKILL sent to its parent" in said, said
        assert server.process.poll() is None
    finally:
        for pid in _sleepers(mark):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def attack_stderr(logs: Path) -> str:
    """The attacker's lines among the bots' stderr the match logs kept (``stderr`` records)."""
    texts = []
    for log in kept_logs(logs, recursive=True):
        with contextlib.suppress(OSError, LogError):
            for line in log_text(log).splitlines():
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if record.get("type") == "stderr" and "ATTACK " in record["text"]:
                        texts.append(record["text"])
    return "\n".join(texts)


def _sleepers(mark: str) -> list[int]:
    """The attack's children: the processes on the machine named with this run's mark."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "cmdline").read_bytes().split(b"\0")[0] == mark.encode():
                    found.append(int(entry.name))
    return found


def zipped_files(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_file_where_the_compiler_writes_is_a_rejection_not_a_dead_server(
    cup: tuple[Server, dict[str, str]],
) -> None:
    """A C upload holding a file named ``build`` (where the compiler's output goes) used to
    raise FileExistsError out of the admission loop: the server died, and died again at
    every restart on the same pending version."""
    server, tokens = cup
    payload = zipped_files({"main.c": b"int main(void) { return 0; }\n", "build": b"x"})
    with server.client(tokens["mallory"]) as client:
        sent = client.post(
            "/api/versions", data={"runtime": "c"}, files={"bot": ("bot.zip", payload)}
        )
    assert sent.status_code == 201, sent.text
    version = sent.json()["id"]
    assert wait_until("the build's verdict", partial(version_status, server, version)) == (
        "rejected"
    )
    detail = server.get(f"/api/versions/{version}")["detail"]
    assert detail.startswith("build:") and "'build'" in detail, detail
    assert server.process.poll() is None
    assert server.get("/api/leaderboard")["competition"] == "Test cup"


def test_a_path_a_thousand_directories_deep_is_a_refusal_not_a_dead_server(
    cup: tuple[Server, dict[str, str]],
) -> None:
    """pathlib makes parent directories recursively: 1500 levels raised RecursionError,
    which no handler expected.  The upload failed with a 500 and its version stayed
    pending; the admission loop unpacked it again, and the server died (and again at
    every restart)."""
    server, tokens = cup
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo("a/" * 1500 + "main.py")
        info.size = 4
        archive.addfile(info, io.BytesIO(b"pass"))
    response = post(server, tokens["mallory"], "deep.tar.gz", buffer.getvalue())
    assert response.status_code == 400, response.text
    assert "deeper than" in response.json()["error"]
    assert server.process.poll() is None
    assert server.get("/api/leaderboard")["competition"] == "Test cup"


def test_uploads_sent_at_once_cannot_pass_the_hourly_limit(
    cup: tuple[Server, dict[str, str]],
) -> None:
    """40 uploads of 2 MiB at once, against a limit of 30 an hour: the limit was checked
    before each body was read and the version written after, so all of them passed (50 of
    50 with a limit of 3), each a version for the admission queue."""
    server, tokens = cup
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("pad.bin", b"#" * (2 << 20))  # refused at unpacking: no admission
        archive.writestr("../evil.py", b"x")
    payload = buffer.getvalue()
    with ThreadPoolExecutor(40) as pool:
        codes = list(
            pool.map(
                lambda _: post(server, tokens["flood"], "b.zip", payload).status_code, range(40)
            )
        )
    assert sorted(set(codes)) == [400, 429], codes
    assert codes.count(400) == 30  # refused at unpacking, and counted
    versions = server.get("/api/participants/flood")["versions"]
    assert len(versions) == 30
