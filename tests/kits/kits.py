"""The starter kits of ``bots/kits/``: where each lives, the files a participant uploads,
and each built once (as its README says) when its toolchain is on this machine."""

from __future__ import annotations

import dataclasses
import io
import shutil
import subprocess
import zipfile
from pathlib import Path

KITS = Path(__file__).resolve().parents[2] / "bots" / "kits"


@dataclasses.dataclass(frozen=True)
class Kit:
    language: str
    directory: str  # under bots/kits/
    runtime: str  # the server's runtime for its upload
    tools: tuple[str, ...]  # the programs its build (or run) needs
    uploaded: tuple[str, ...]  # the files of its upload, relative to its directory

    @property
    def path(self) -> Path:
        return KITS / self.directory

    def missing(self) -> str | None:
        """Why this kit cannot be built here, or None."""
        absent = [tool for tool in self.tools if shutil.which(tool) is None]
        if not absent:
            return None
        return f"no {', '.join(absent)} on this machine (make test installs it with apt-get)"

    def archive(self) -> bytes:
        """The zip a participant uploads: the kit's sources, nothing built."""
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name in self.uploaded:
                archive.write(self.path / name, name)
        return buffer.getvalue()


KIT_LIST = (
    Kit("C++", "cpp", "cpp", ("c++",), ("main.cpp", "protocol.hpp")),
    Kit(
        "Rust",
        "rust",
        "rust",
        ("cargo", "rustc"),
        ("Cargo.toml", "Cargo.lock", "src/main.rs", "src/protocol.rs"),
    ),
    Kit("Go", "go", "go", ("go",), ("go.mod", "main.go", "protocol.go")),
    Kit("Java", "java", "java", ("javac", "java"), ("Main.java", "Protocol.java")),
    Kit("TypeScript", "typescript", "node", ("node",), ("main.js", "protocol.js")),
)
BY_LANGUAGE = {kit.language: kit for kit in KIT_LIST}


def build_kit(kit: Kit, into: Path) -> tuple[Path, tuple[str, ...]]:
    """Build ``kit`` in a copy under ``into`` as its README says, without optimising (fast).

    Returns (the directory the bot runs in, its command there).
    """
    work = into / kit.directory
    shutil.copytree(kit.path, work, ignore=shutil.ignore_patterns("target"))

    def run(*argv: str) -> None:
        subprocess.run(argv, cwd=work, check=True, capture_output=True, timeout=300)

    if kit.language == "C++":
        run("c++", "-std=gnu++17", "-o", "bot", "main.cpp")
        return work, ("./bot",)
    if kit.language == "Rust":
        run("cargo", "build", "--offline", "--quiet")
        return work, ("./target/debug/my-rust-bot",)
    if kit.language == "Go":
        run("go", "build", "-o", "bot", ".")
        return work, ("./bot",)
    if kit.language == "Java":
        run("javac", "-d", "classes", "Main.java", "Protocol.java")
        return work / "classes", ("java", "Main")
    return work, ("node", "main.js")  # TypeScript: the compiled .js is shipped
