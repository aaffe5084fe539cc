"""The cpp, rust and go runtimes: each builds a starter kit uploaded through the API and plays
it at a table under the competition's sandbox; and the build is offline.

One test per runtime: the kit's zip goes to ``POST /api/versions`` as a
participant's script sends it, then admission builds it (the server's own
command, under the ``auto`` sandbox: isolated where bubblewrap works), runs
``newmarket check`` and plays the duplicate group a table plays.  A runtime
whose compiler is missing here is skipped with the reason.
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import httpx
import pytest
import trio

from referee.sandbox import Limits, resolve
from referee.server.admission import admit
from referee.server.app import build_app
from referee.server.build import BuildError, build, entry_of
from referee.server.competition import Competition
from referee.server.competition_db import CompetitionStore
from referee.server.competition_file import UploadLimits, load_config
from referee.server.languages import LanguageError, recipe
from referee.server.unpack import unpack_upload
from tests.kits.kits import BY_LANGUAGE, Kit
from tests.server.test_pages import csrf, open_cup

RUNTIMES = {"cpp": BY_LANGUAGE["C++"], "rust": BY_LANGUAGE["Rust"], "go": BY_LANGUAGE["Go"]}


def test_each_compiled_runtime_has_one_entry_rule() -> None:
    assert entry_of("cpp", ["main.cpp", "protocol.hpp"]) == "bot"
    assert entry_of("cpp", ["bot.cc"]) == "bot"
    assert entry_of("rust", ["Cargo.toml", "src/main.rs"]) == "Cargo.toml"
    assert entry_of("rust", ["bot.rs"]) == "bot.rs"
    assert entry_of("rust", ["main.rs", "cards.rs"]) == "main.rs"
    assert entry_of("go", ["go.mod", "main.go"]) == "go.mod"
    assert entry_of("go", ["main.go", "cards.go"]) == "bot"
    with pytest.raises(BuildError, match=r"runtime cpp: .*no \.cpp"):
        entry_of("cpp", ["main.c", "bot.h"])
    with pytest.raises(BuildError, match=r"needs Cargo\.toml or main\.rs"):
        entry_of("rust", ["lib.rs", "cards.rs"])
    with pytest.raises(BuildError, match=r"must end in \.go"):
        entry_of("go", ["main.py"])


VENDORED = {
    "Cargo.toml": '[package]\nname = "vbot"\nversion = "0.1.0"\nedition = "2021"\n\n'
    '[dependencies]\ncards = "0.1"\n',
    "src/main.rs": 'fn main() { println!("{}", cards::lowest()); }\n',
    # what `cargo vendor` writes, and the configuration it prints
    ".cargo/config.toml": '[source.crates-io]\nreplace-with = "vendored-sources"\n\n'
    '[source.vendored-sources]\ndirectory = "vendor"\n',
    "vendor/cards/Cargo.toml": '[package]\nname = "cards"\nversion = "0.1.0"\nedition = "2021"\n',
    "vendor/cards/src/lib.rs": 'pub fn lowest() -> &\'static str { "2C" }\n',
    "vendor/cards/.cargo-checksum.json": '{"files":{},"package":null}',
}


async def test_a_rust_upload_with_a_vendored_crate_builds_offline(tmp_path: Path) -> None:
    why = RUNTIMES["rust"].missing()
    if why is not None:
        pytest.skip(f"runtime rust cannot build here: {why}")
    archive = tmp_path / "bot.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for name, text in VENDORED.items():
            out.writestr(name, text)
    root = tmp_path / "files"
    files = unpack_upload(archive, "bot.zip", root, UploadLimits())  # the dot names pass
    tmp_path.chmod(0o755)  # (pytest makes it 0700: an isolated compiler's own uid needs in)
    sandbox = resolve("auto", Limits(memory_bytes=1024 << 20, processes=64))
    built = await build("rust", root, files, "vbot", sandbox, 300)
    assert built.spec.command == (str(root / "build" / "bot"),)
    ran = subprocess.run(built.spec.command, capture_output=True, text=True, timeout=60)
    assert ran.stdout == "2C\n"
    assert sorted(path.name for path in (root / "build").iterdir()) == ["bot"]  # no caches
    assert not (root / "Cargo.lock").exists()  # cargo wrote its lock in its own copy


def test_a_cargo_program_name_that_is_a_path_is_refused(tmp_path: Path) -> None:
    for name in ("../../etc/passwd", "..", "a b"):
        (tmp_path / "Cargo.toml").write_text(f'[package]\nname = "{name}"\nversion = "1.0.0"\n')
        with pytest.raises(LanguageError, match="names no \\[package\\] name"):
            recipe("rust", tmp_path, ["Cargo.toml", "src/main.rs"])
    (tmp_path / "Cargo.toml").write_text("[package\n")
    with pytest.raises(LanguageError, match=r"Cargo\.toml cannot be read"):
        recipe("rust", tmp_path, ["Cargo.toml", "src/main.rs"])


async def test_a_go_module_that_needs_the_network_is_refused_offline(tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("no go on this machine (make test installs golang-go)")
    (tmp_path / "go.mod").write_text("module bot\n\ngo 1.19\n\nrequire example.com/cards v1.0.0\n")
    # go.sum lists it (as `go mod tidy` would on the participant's machine): go wants it.
    digest = "h1:" + "A" * 43 + "="
    (tmp_path / "go.sum").write_text(
        f"example.com/cards v1.0.0 {digest}\nexample.com/cards v1.0.0/go.mod {digest}\n"
    )
    (tmp_path / "main.go").write_text(
        'package main\n\nimport "example.com/cards"\n\nfunc main() { cards.Deal() }\n'
    )
    tmp_path.chmod(0o755)  # (pytest makes it 0700: an isolated compiler's own uid needs in)
    sandbox = resolve("auto", Limits(memory_bytes=1024 << 20, processes=64))
    with pytest.raises(BuildError) as caught:
        await build("go", tmp_path, ["go.mod", "go.sum", "main.go"], "offline", sandbox, 120)
    assert "compilation failed" in str(caught.value)
    # The module proxy was never asked: GOPROXY=off, and the compiler says so.
    assert "GOPROXY=off" in caught.value.transcript or "module lookup disabled" in (
        caught.value.transcript
    )


async def test_a_static_binary_of_a_few_mib_fits_the_default_upload_cap(tmp_path: Path) -> None:
    # A static Go build of the Go kit is 2.3 MB, a static C++ one 2.2 MB: 1 MiB refused both.
    (tmp_path / "cup.toml").write_text('[competition]\nname = "x"\nhouse_bots = []\n')
    config = load_config(tmp_path / "cup.toml")
    competition = Competition(config, CompetitionStore.open(config.database))
    try:
        _participant, token = competition.store.add_participant("ada")
        transport = httpx.ASGITransport(app=build_app(competition))
        async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
            answer = await client.post(
                "/api/versions",
                headers={"Authorization": f"Bearer {token}"},
                data={"runtime": "binary"},
                files={"bot": ("bot", b"\x7fELF" + bytes(3 << 20))},
            )
        assert answer.status_code == 201, answer.text
        assert answer.json()["size"] == 4 + (3 << 20)
    finally:
        competition.store.close()


async def test_the_upload_page_offers_the_new_runtimes_and_points_to_the_kits(
    tmp_path: Path,
) -> None:
    store, app = open_cup(tmp_path)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://cup"
    ) as browser:
        form = await browser.get("/register")
        await browser.post("/register", data={"name": "zoe", "csrf": csrf(form)})
        page = (await browser.get("/upload")).text
    store.close()
    offered = re.findall(r'<option value="(\w+)">', page)
    assert {"cpp", "rust", "go", "binary"} <= set(offered)
    assert "bots/kits/" in page and "build it static" in page


def _elf(machine: int, kinds: tuple[int, ...]) -> bytes:
    """A 64-bit little-endian ELF header and one program header of each kind (3: the loader)."""
    head = b"\x7fELF\x02\x01\x01" + bytes(9)
    head += (2).to_bytes(2, "little") + machine.to_bytes(2, "little") + bytes(4) + bytes(8)
    head += (64).to_bytes(8, "little") + bytes(8) + bytes(4) + (64).to_bytes(2, "little")
    head += (56).to_bytes(2, "little") + len(kinds).to_bytes(2, "little") + bytes(6)
    assert len(head) == 64
    return head + b"".join(kind.to_bytes(4, "little") + bytes(52) for kind in kinds)


@pytest.mark.parametrize(
    ("program", "said"),
    [
        (_elf(62, (1, 3, 1)), "dynamically linked"),  # x86-64 with a loader: dynamic
        (_elf(183, (1,)), "this binary is for aarch64"),
        (_elf(62, (1, 1)), ""),  # static: nothing to say
        (b"#!/bin/sh\nexit 0\n", ""),
    ],
)
async def test_a_binary_that_will_not_run_on_the_server_is_said_so_in_its_transcript(
    tmp_path: Path, program: bytes, said: str
) -> None:
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the binaries here are described as x86-64's neighbours")
    (tmp_path / "bot").write_bytes(program)
    built = await build("binary", tmp_path, ["bot"], "bin", resolve("basic"), 10)
    if said:
        assert said in built.transcript
        assert ("build it static" if "dynamic" in said else "will not run") in built.transcript
    else:
        assert built.transcript == ""


def _competition(tmp_path: Path) -> Competition:
    path = tmp_path / "cup.toml"
    path.write_text(
        '[competition]\nname = "Cup"\nhouse_bots = ["random", "lowest"]\n'
        "[tables]\nplayers = 3\nhand_limit = 3\n"
        "[time_control]\nmove_time = 10.0\nstartup_time = 30.0\n"
        "[sandbox]\ncompile_seconds = 300\n"
    )
    config = load_config(path)
    competition = Competition(config, CompetitionStore.open(config.database))
    competition.ensure_house_bots(config.house_bots)
    return competition


async def _upload(competition: Competition, token: str, kit: Kit, runtime: str) -> int:
    transport = httpx.ASGITransport(app=build_app(competition))
    async with httpx.AsyncClient(transport=transport, base_url="http://cup") as client:
        answer = await client.post(
            "/api/versions",
            headers={"Authorization": f"Bearer {token}"},
            data={"runtime": runtime},
            files={"bot": (f"{kit.directory}.zip", kit.archive())},
        )
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


@pytest.mark.parametrize("runtime", sorted(RUNTIMES))
async def test_each_runtime_builds_its_kit_and_plays_it_at_a_table(
    runtime: str, tmp_path: Path
) -> None:
    kit = RUNTIMES[runtime]
    why = kit.missing()
    if why is not None:
        pytest.skip(f"runtime {runtime} cannot build here: {why}")
    competition = _competition(tmp_path)
    store = competition.store
    try:
        _participant, token = store.add_participant("ada")
        version_id = await _upload(competition, token, kit, runtime)
        version = store.version(version_id)
        assert version is not None and version.runtime == runtime
        with trio.fail_after(600):
            admitted = await admit(competition.config, store, version)
        decided = store.version(version_id)
        assert decided is not None
        assert admitted, (decided.detail, decided.transcript[-3000:])
        assert decided.status == "admitted"
        # The kit's tutorial bot passed newmarket check, built by the server's own command.
        assert "PASS:" in decided.transcript and f"my-{runtime}-bot" in decided.transcript
        played = store.check_play(version_id)
        assert played is not None and len(played) == 3  # the table's seats once each
        assert all(not match["faults"] for match in played), played
    finally:
        store.close()
