"""``--cluster`` over Dask's TLS: a worker must hold a certificate the organiser signed.

The certificates are made here with ``openssl`` (as docs/cluster.md shows): the
organiser's certificate authority and a node certificate it signed, and a
stranger's authority with a certificate of its own.  A TLS scheduler runs in
this process (Dask's own ``Scheduler``, as ``dask scheduler --tls-...`` starts
it); a worker with the organiser's certificate joins it, one with the
stranger's or none is refused; the server's side (``ClusterTables``, with the
competition file's ``[cluster]``) connects and plays a match on it, and a league
with the same section plays there.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from distributed import Scheduler, Worker
from distributed.security import Security

from referee.bots import resolve_bot
from referee.league.league_db import LeagueStore
from referee.league.league_file import load_config as load_league
from referee.league.runner import SilentReporter, run_league
from referee.league.standings import standings_of
from referee.match.key import MatchKey
from referee.server.cluster import ClusterTable, ClusterTables
from referee.server.competition_file import load_config
from referee.settings.sections import ConfigError
from referee.tables.dask_pool import ClusterError
from tests.clirun import newmarket
from tests.league.files import write_league_file
from tests.server.serving import competition_file

WORKER_WAIT = 60.0  # seconds a worker may take to join (a loaded machine)
REFUSED_WAIT = 3.0  # seconds a worker that is refused keeps trying before it gives up
DASK: Any = Security  # untyped in distributed


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_authority(directory: Path, name: str) -> None:
    """``name``.pem and ``name``-key.pem: a certificate authority (EC keys: fast to make)."""
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}-key.pem", "-out", f"{name}.pem", "-days", "2",
        "-subj", f"/CN={name}", cwd=directory,
    )  # fmt: skip


def make_certificate(directory: Path, name: str, authority: str) -> None:
    """``name``.pem and ``name``-key.pem, signed by ``authority``."""
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", "-subj", f"/CN={name}",
        cwd=directory,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{authority}.pem",
        "-CAkey", f"{authority}-key.pem", "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
        cwd=directory,
    )  # fmt: skip
    os.chmod(directory / f"{name}-key.pem", 0o600)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: the test makes its certificates with it")
    directory = tmp_path_factory.mktemp("certs")
    make_authority(directory, "organiser")
    make_certificate(directory, "node", "organiser")
    make_authority(directory, "stranger")
    make_certificate(directory, "intruder", "stranger")
    return directory


def security(certs: Path, authority: str, name: str) -> Any:
    ca, cert, key = (str(certs / f) for f in (f"{authority}.pem", f"{name}.pem", f"{name}-key.pem"))
    return DASK(
        tls_ca_file=ca,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
        tls_client_cert=cert,
        tls_client_key=key,
        require_encryption=True,
    )


def cluster_section(certs: Path) -> str:
    return (
        f'ca_file = "{certs / "organiser.pem"}"\n'
        f'cert_file = "{certs / "node.pem"}"\nkey_file = "{certs / "node-key.pem"}"'
    )


def cup(tmp_path: Path, certs: Path) -> Path:
    return competition_file(tmp_path, cluster=cluster_section(certs))


async def joins(address: str, secure: Any, wait: float = REFUSED_WAIT) -> bool:
    """Whether a worker with ``secure`` (None: no certificate) joins the scheduler."""
    try:
        async with Worker(
            address, security=secure, nthreads=1, death_timeout=wait, dashboard=False
        ) as worker:
            return bool(worker.status.name == "running")
    except Exception:  # refused at the handshake: the worker gives up after death_timeout
        return False


@pytest.fixture(scope="module")
def scheduler(certs: Path) -> Iterator[tuple[str, list[bool]]]:
    """A TLS scheduler with one worker of the organiser's; what the other two workers got."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    ready: asyncio.Queue[tuple[str, list[bool]]]
    stop: asyncio.Event
    loop: asyncio.AbstractEventLoop

    async def serve() -> None:
        nonlocal ready, stop, loop
        loop = asyncio.get_running_loop()
        organiser = security(certs, "organiser", "node")
        async with Scheduler(
            protocol="tls://", host="127.0.0.1", port=0, security=organiser, dashboard=False
        ) as running:
            refused = [
                await joins(running.address, organiser, WORKER_WAIT),  # the helper can say yes
                await joins(running.address, security(certs, "stranger", "intruder")),
                await joins(running.address, None),
            ]
            async with Worker(
                running.address, security=organiser, nthreads=1, dashboard=False
            ) as worker:
                assert worker.status.name == "running"
                ready.put_nowait((running.address, refused))
                await stop.wait()

    ready = asyncio.Queue()
    stop = asyncio.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as error:  # shown by the test that waits for it
            failure.append(error)
            ready.put_nowait(("", []))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = 120.0
    while ready.empty() and thread.is_alive() and deadline > 0:
        thread.join(0.1)
        deadline -= 0.1
    if failure:
        raise failure[0]
    yield ready.get_nowait()
    loop.call_soon_threadsafe(stop.set)
    thread.join(30)


def test_a_worker_with_the_organisers_certificate_joins_and_one_without_is_refused(
    scheduler: tuple[str, list[bool]],
) -> None:
    _address, (holder, stranger, bare) = scheduler
    assert holder is True  # a worker with the organiser's certificate joins
    assert stranger is False  # a certificate signed by another authority
    assert bare is False  # no certificate at all


def test_the_server_plays_a_match_on_a_tls_cluster_with_the_files_certificates(
    tmp_path: Path, certs: Path, scheduler: tuple[str, list[bool]]
) -> None:
    address, _refused = scheduler
    assert address.startswith("tls://")
    config = load_config(cup(tmp_path, certs))
    assert config.cluster is not None

    async def play() -> tuple[int, list[int]]:
        tables = ClusterTables(address, config)
        await tables.start()
        try:
            specs = {number: resolve_bot("random") for number in (1, 2, 3)}
            rules = config.rules
            chips = (rules.starting_chips,) * 3
            key = MatchKey("tls-1", 1, 1, 1, 0, 7, (1, 2, 3), chips, deal_seed=7)
            result = await ClusterTable(tables).play(key, rules, specs, specs)
            return tables.threads(), [seat.place for seat in result.seats]
        finally:
            await tables.aclose()

    threads, places = trio.run(play)
    assert threads == 1  # the organiser's worker, and only it
    assert sorted(places)[0] == 1


def test_tls_and_an_address_that_does_not_match_are_one_line(
    tmp_path: Path, certs: Path, scheduler: tuple[str, list[bool]]
) -> None:
    address, _refused = scheduler
    with_certs = load_config(cup(tmp_path, certs))
    plain = address.replace("tls://", "tcp://")
    with pytest.raises(ClusterError, match=r"need the scheduler's TLS address \(tls://HOST:PORT\)"):
        trio.run(ClusterTables(plain, with_certs).start)
    bare = tmp_path / "bare"
    bare.mkdir()
    code, _out, err = newmarket(
        "serve", str(competition_file(bare)), "--port", "0", "--cluster", address
    )
    assert code == 2
    assert "a TLS scheduler needs the certificates named in the file's [cluster]" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("key", "change", "problem"),
    [
        ("ca_file", "missing.pem", "cluster.ca_file: cannot read"),
        ("cert_file", "cup.toml", "cluster.cert_file: .* is not a PEM file"),
        ("key_file", "loose", "cluster.key_file: .* can be read by others than its owner"),
    ],
)
def test_a_bad_cluster_section_names_its_key(
    tmp_path: Path, certs: Path, key: str, change: str, problem: str
) -> None:
    path = cup(tmp_path, certs)
    text = path.read_text()
    if change == "loose":
        loose = tmp_path / "loose-key.pem"
        shutil.copy(certs / "node-key.pem", loose)
        loose.chmod(0o644)
        target = str(loose)
    else:
        target = str(tmp_path / change)
    old = {"ca_file": "organiser.pem", "cert_file": "node.pem", "key_file": "node-key.pem"}[key]
    path.write_text(text.replace(str(certs / old), target))
    with pytest.raises(ConfigError, match=problem):
        load_config(path)


def test_a_league_with_the_certificates_plays_on_the_tls_cluster(
    tmp_path: Path, certs: Path, scheduler: tuple[str, list[bool]]
) -> None:
    """(That a cluster's standings are a local run's: tests/league/test_cluster.py.)"""
    address, _refused = scheduler
    bots = ("random", "lowest", "tracker")
    section = f"\n[cluster]\n{cluster_section(certs)}\n"
    path = write_league_file(tmp_path, bots, name="tls", hand_limit=2, sections=section)
    config = load_league(path)
    assert config.cluster is not None
    with LeagueStore.for_league(tmp_path / "tls.db", config) as store:
        run = trio.run(
            lambda: run_league(config, store, reporter=SilentReporter(), jobs=1, cluster=address)
        )
        assert run.done == run.total == store.count() > 0
        assert {row.matches for row in standings_of(store).rows} == {run.total}
    code, _out, err = newmarket("league", str(path), "--cluster", address.replace("tls", "tcp"))
    assert code == 2
    assert "need the scheduler's TLS address" in err


def test_the_schedulers_handshake_cuts_a_strangers_certificate_and_keeps_the_organisers(
    certs: Path, scheduler: tuple[str, list[bool]]
) -> None:
    """Not a timeout: the TLS handshake itself ends a connection without the organiser's
    signature (TLS 1.3: the server's verdict on our certificate comes at the first read),
    where one with it reads the scheduler's first bytes."""
    address, _refused = scheduler
    host, port = address.removeprefix("tls://").rsplit(":", 1)

    def first_read(name: str) -> bytes:
        context = ssl.create_default_context(cafile=str(certs / "organiser.pem"))
        context.check_hostname = False
        context.load_cert_chain(certs / f"{name}.pem", certs / f"{name}-key.pem")
        with (
            socket.create_connection((host, int(port)), timeout=30) as raw,
            context.wrap_socket(raw) as tls,
        ):
            return tls.recv(1)

    with pytest.raises(ssl.SSLError):  # cut by the scheduler (an alert, or the end of stream)
        first_read("intruder")
    assert first_read("node")  # accepted: Dask's own handshake message comes first
