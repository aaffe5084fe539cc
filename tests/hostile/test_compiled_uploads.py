"""C++, Rust and Go uploads attacked at build time: code the compiler runs is a bot.

A compiled upload runs code of its author's on the server before it is even
admitted: a C++ ``#include`` names any file, ``include_str!`` too, a Rust
``build.rs`` (or a vendored proc-macro crate) is a program cargo runs, and a
Go module's ``replace`` names any directory.  Each attack below is laid out as
on a server (``data/`` with the database beside ``versions/``, another
participant's upload next door) and built as admission builds it
(``referee.server.build.build`` under ``--sandbox auto``): the operator's files
and the other upload are out of the compiler's view, the network is
unreachable, and a build that runs for ever, fills its disk, eats memory or
floods its output is one rejection, its transcript bounded.
"""

from __future__ import annotations

import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.sandbox import Limits, detect, resolve
from referee.server.build import BuildError, build
from referee.server.languages import rust_toolchain
from referee.server.quotas import tree_bytes

SUPPORT = detect()
pytestmark = pytest.mark.skipif(
    SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
)
DB_SECRET = "DB-SECRET-7f3a"
OTHER_SECRET = "OTHER-UPLOAD-SECRET-91c2"
CARGO = '[package]\nname = "b"\nversion = "0.1.0"\nedition = "2021"\nbuild = "build.rs"\n'
TOOLS = {"cpp": "c++", "rust": "cargo", "go": "go"}


def needs(runtime: str) -> None:
    if shutil.which(TOOLS[runtime]) is None or (runtime == "rust" and rust_toolchain() is None):
        pytest.skip(f"no {TOOLS[runtime]} on this machine: runtime {runtime} cannot build here")


@dataclass
class Server:
    """A server's data directory: its database, another participant's upload, and ours."""

    data: Path
    database: Path
    other: Path  # another participant's files, with OTHER_SECRET
    mine: Path  # the upload under attack's files (empty)


@pytest.fixture
def server(tmp_path: Path) -> Server:
    data = tmp_path / "data"
    for directory in (data, data / "versions"):
        directory.mkdir(mode=0o755)
    database = data / "competition.db"
    database.write_text(f"{DB_SECRET}\n")
    other = data / "versions" / "000002" / "files"
    mine = data / "versions" / "000001" / "files"
    for files in (other, mine):
        files.parent.mkdir(mode=0o755)
        files.mkdir(mode=0o755)
    (other / "secret.txt").write_text(f"{OTHER_SECRET}\n")
    (other / "go.mod").write_text("module other\n\ngo 1.20\n")
    (other / "secret.go").write_text(f'package other\n\nconst S = "{OTHER_SECRET}"\n')
    # Readable by any uid, as a careless operator's would be: the sandbox alone must hide them.
    for path in (database, other / "secret.txt", other / "secret.go"):
        path.chmod(0o644)
    return Server(data, database, other, mine)


def write(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(files)


def thefts(server: Server) -> dict[str, tuple[str, dict[str, str]]]:
    """Each attack: its runtime and its files, reading the database and the other upload."""
    other = server.other / "secret.txt"
    reads = "".join(
        f'eprintln!("READ {path}: {{:?}}", std::fs::read_to_string("{path}"));\n'
        for path in (server.database, other)
    )
    listing = "".join(
        f'eprintln!("LIST {name}: {{:?}}", std::fs::read_dir("{path}").map(|d| d'
        ".filter_map(|e| e.ok()).map(|e| e.file_name()).collect::<Vec<_>>()));\n"
        for name, path in (("data", server.data), ("versions", server.data / "versions"))
    )
    return {
        "c++ includes the other upload": (
            "cpp",
            {"bot.cpp": f'#include "{other}"\nint main() {{}}\n'},
        ),
        "c++ includes it by a relative path": (
            "cpp",
            {"bot.cpp": '#include "../../000002/files/secret.txt"\nint main() {}\n'},
        ),
        "c++ includes the database": (
            "cpp",
            {"bot.cpp": f'#include "{server.database}"\nint main() {{}}\n'},
        ),
        "rust include_str! of the database": (
            "rust",
            {"main.rs": f'const S: &str = include_str!("{server.database}");\nfn main() {{}}\n'},
        ),
        "a build.rs reads, lists and connects": (
            "rust",
            {
                "Cargo.toml": CARGO,
                "src/main.rs": "fn main() {}\n",
                "build.rs": "fn main() {\n"
                + reads
                + listing
                + 'let port: u16 = include_str!("port.txt").trim().parse().unwrap();\n'
                'eprintln!("CONNECT: {:?}", std::net::TcpStream::connect(("127.0.0.1", port)));\n'
                'eprintln!("OUTSIDE: {:?}", std::net::TcpStream::connect("192.0.2.1:80"));\n'
                'panic!("DONE");\n}\n',
            },
        ),
        "a go module replaced by the other upload": (
            "go",
            {
                "go.mod": f"module m\n\ngo 1.20\n\nrequire other v0.0.0\n\n"
                f"replace other => {server.other}\n",
                "main.go": 'package main\n\nimport "other"\n\nfunc main() { println(other.S) }\n',
            },
        ),
    }


@pytest.mark.parametrize(
    "attack",
    [
        "c++ includes the other upload",
        "c++ includes it by a relative path",
        "c++ includes the database",
        "rust include_str! of the database",
        "a build.rs reads, lists and connects",
        "a go module replaced by the other upload",
    ],
)
async def test_a_build_sees_neither_the_operators_files_nor_another_upload_nor_the_network(
    server: Server, attack: str
) -> None:
    runtime, files = thefts(server)[attack]
    needs(runtime)
    with socket.socket() as listener:  # a service of the server's own machine
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        (server.mine / "port.txt").write_text(f"{listener.getsockname()[1]}\n")
        names = [*write(server.mine, files), "port.txt"]
        with pytest.raises(BuildError) as caught:
            await build(runtime, server.mine, names, "thief", resolve("auto"), 120)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody came
    said = f"{caught.value}\n{caught.value.transcript}"
    assert DB_SECRET not in said and OTHER_SECRET not in said
    assert not (server.mine / "build").exists()
    if runtime == "rust" and "build.rs" in files:
        # It ran, and met nothing: no file, no directory, no route, not even to localhost.
        assert said.count("No such file or directory") == 2, said
        # Its own directory's path is bound where it is on the host; nothing beside it is.
        assert 'LIST data: Ok(["versions"])' in said and 'LIST versions: Ok(["000001"])' in said
        assert "CONNECT: Err(" in said and "OUTSIDE: Err(" in said
        assert "Network is unreachable" in said


async def test_a_build_script_that_runs_for_ever_is_stopped_at_the_compile_limit(
    server: Server,
) -> None:
    needs("rust")
    files = {
        "Cargo.toml": CARGO,
        "src/main.rs": "fn main() {}\n",
        "build.rs": "fn main() { loop {} }\n",
    }
    with pytest.raises(BuildError, match=r"^the compiler ran longer than 2 s$"):
        await build("rust", server.mine, write(server.mine, files), "spin", resolve("auto"), 2)
    assert not (server.mine / "build").exists()


async def test_a_build_script_filling_its_disk_fills_only_its_scratch(server: Server) -> None:
    needs("rust")
    fill = (
        "use std::io::Write;\nfn main() {\n"
        'let mut f = std::fs::File::create(format!("{}/big", std::env::var("OUT_DIR").unwrap()))'
        ".unwrap();\nlet block = vec![7u8; 1 << 20];\n"
        "for i in 0..256 {\n"
        'if let Err(e) = f.write_all(&block) { panic!("FULL at {i} MiB: {e}"); }\n}\n'
        "}\n"
    )
    files = {"Cargo.toml": CARGO, "src/main.rs": "fn main() {}\n", "build.rs": fill}
    names = write(server.mine, files)
    before = tree_bytes(server.data)
    sandbox = resolve("auto", Limits(scratch_bytes=16 << 20))
    with pytest.raises(BuildError) as caught:
        await build("rust", server.mine, names, "filler", sandbox, 120)
    assert str(caught.value).startswith("compilation failed")
    assert "No space left on device" in caught.value.transcript
    assert sorted(p.name for p in server.mine.iterdir()) == ["Cargo.toml", "build.rs", "src"]
    assert tree_bytes(server.data) == before


async def test_an_include_of_an_endless_device_is_a_rejection_within_the_memory_limit(
    server: Server,
) -> None:
    needs("cpp")
    files = {"bot.cpp": '#include "/dev/zero"\nint main() {}\n'}
    sandbox = resolve("auto", Limits(memory_bytes=256 << 20))
    with pytest.raises(BuildError) as caught:
        await build("cpp", server.mine, write(server.mine, files), "zero", sandbox, 60)
    assert str(caught.value).startswith("compilation failed")


async def test_a_build_that_floods_its_output_leaves_a_bounded_transcript(server: Server) -> None:
    needs("rust")
    flood = (
        'fn main() { let s = "x".repeat(1 << 16); for _ in 0..512 { eprintln!("{s}"); } '
        'panic!("FLOODED"); }\n'
    )
    files = {"Cargo.toml": CARGO, "src/main.rs": "fn main() {}\n", "build.rs": flood}
    with pytest.raises(BuildError) as caught:
        await build("rust", server.mine, write(server.mine, files), "loud", resolve("auto"), 120)
    # 32 MiB written; the transcript keeps its head and its tail (where the panic is).
    transcript = caught.value.transcript
    assert len(transcript) < 2 << 20 and "FLOODED" in transcript
