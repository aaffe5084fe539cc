"""The compiled runtimes added for every language: ``cpp``, ``rust`` and ``go``.

Each is a ``Recipe``: the compiler's argv (its output named under ``build/``), the
environment it needs, and, for cargo, the file it leaves in its own target directory
that becomes ``build/bot``.  ``build.compile_in_sandbox`` runs it like javac and cc:
under the competition's sandbox, no network, the compile limit.

Nothing is downloaded: a Rust upload with a ``Cargo.toml`` is built ``--offline``
(its crates vendored in the upload: ``cargo vendor`` and the ``.cargo/config.toml``
it prints), a Go module with ``GOPROXY=off`` and, when it holds ``vendor/``,
``-mod=vendor``.  Caches (cargo's home and target, Go's build cache) go to a work
directory (``WORK`` below ``/tmp`` in the isolated sandbox's scratch, else one under
``build/`` removed after the build), never the participant's files.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

OUTPUT = "build"
WORK = ".work"  # under the output directory (not isolated) or the scratch (isolated)
CPP_SUFFIXES = (".cpp", ".cc", ".cxx")
COMPILED = ("cpp", "rust", "go")
CARGO_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")  # cargo's own rule, and a file name


class LanguageError(ValueError):
    """An upload these rules cannot build (no entry, an unreadable Cargo.toml)."""


@dataclasses.dataclass(frozen=True)
class Recipe:
    """How one version is compiled; ``env`` and ``artifact`` are functions of the work dir."""

    argv: list[str]
    env: Callable[[str], dict[str, str]] = lambda _work: {}
    artifact: Callable[[str], str] | None = None  # the file copied to build/bot, if not there
    # Built from a copy in the work directory: cargo writes Cargo.lock beside Cargo.toml,
    # and the upload's directory is read-only (and the participant's, never changed).
    copy_source: bool = False


def entry_of(runtime: str, files: list[str]) -> str:
    """What starts the build: ``bot`` (cpp), ``Cargo.toml`` or the ``.rs`` file, ``go.mod``
    or ``bot`` (go); raises ``LanguageError`` naming what the upload lacks."""
    top = [name for name in files if "/" not in name]
    if runtime == "cpp":
        if not any(name.endswith(CPP_SUFFIXES) for name in top):
            raise LanguageError("runtime cpp: the upload holds no .cpp, .cc or .cxx file")
        return "bot"
    if runtime == "rust":
        if "Cargo.toml" in top:
            return "Cargo.toml"
        rust = [name for name in top if name.endswith(".rs")]
        if len(rust) == 1:
            return rust[0]
        if "main.rs" in top:
            return "main.rs"
        raise LanguageError("runtime rust: an archive needs Cargo.toml or main.rs at its top level")
    if runtime == "go":
        if "go.mod" in top:
            return "go.mod"
        if not any(_go_source(name) for name in top):
            raise LanguageError("runtime go: the upload holds no .go file at its top level")
        return "bot"
    raise LanguageError(f"unknown runtime {runtime!r}")


def _go_source(name: str) -> bool:
    return name.endswith(".go") and not name.endswith("_test.go")


def recipe(runtime: str, root: Path, files: list[str]) -> Recipe:
    """The compile of ``files`` (in ``root``) for ``runtime``; ``LanguageError`` if it has none."""
    entry = entry_of(runtime, files)
    top = sorted(name for name in files if "/" not in name)
    if runtime == "cpp":
        sources = [name for name in top if name.endswith(CPP_SUFFIXES)]
        return Recipe(["c++", "-O2", "-std=gnu++17", "-o", f"{OUTPUT}/bot", *sources])
    if runtime == "rust":
        return _rust(root, entry)
    sources = [] if entry == "go.mod" else [name for name in top if _go_source(name)]
    vendored = entry == "go.mod" and "vendor/modules.txt" in files
    return Recipe(
        ["go", "build", "-o", f"{OUTPUT}/bot", *(sources or ["."])],
        env=functools.partial(_go_env, vendored=vendored),
    )


def _go_env(work: str, *, vendored: bool) -> dict[str, str]:
    # CGO off: a static binary that needs no C toolchain; GOTOOLCHAIN=local: a go.mod's
    # "toolchain" line never makes a newer go fetch itself.
    env = {
        "HOME": work,
        "GOCACHE": f"{work}/go-cache",
        "GOPATH": f"{work}/go-path",
        "GOPROXY": "off",
        "GOSUMDB": "off",
        "GOTOOLCHAIN": "local",
        "GOTELEMETRY": "off",
        "CGO_ENABLED": "0",
    }
    if vendored:
        env["GOFLAGS"] = "-mod=vendor"
    return env


@functools.cache
def rust_toolchain() -> tuple[str, str] | None:
    """(rustc, cargo) as real programs, not rustup's proxies, or None without Rust.

    rustup's ``~/.cargo/bin/rustc`` picks a toolchain from ``~/.rustup``, which
    no sandbox shows; the toolchain's own programs, in its sysroot (which the
    sandbox shows, ``referee.sandbox.isolation``), run anywhere.  Debian's
    ``/usr/bin/rustc`` is its own sysroot's.
    """
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    try:
        done = subprocess.run(
            [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sysroot = Path(done.stdout.strip())
    if done.returncode != 0 or not sysroot.is_absolute():
        return None
    real_rustc = sysroot / "bin" / "rustc"
    cargo = sysroot / "bin" / "cargo"
    if not cargo.exists():
        cargo = Path(shutil.which("cargo") or "cargo")
    return (str(real_rustc if real_rustc.exists() else rustc), str(cargo))


def _rust(root: Path, entry: str) -> Recipe:
    toolchain = rust_toolchain()
    rustc, cargo = toolchain if toolchain is not None else ("rustc", "cargo")
    if entry != "Cargo.toml":
        argv = [rustc, "--edition", "2021", "-O", "-o", f"{OUTPUT}/bot", entry]
        return Recipe(argv, env=lambda work: {"HOME": work})
    program = _cargo_program(root / "Cargo.toml")

    def env(work: str) -> dict[str, str]:
        return {
            "HOME": work,
            "CARGO_HOME": f"{work}/cargo-home",
            "CARGO_TARGET_DIR": f"{work}/target",
            "NEWMARKET_SOURCE": f"{work}/source",
            "CARGO_NET_OFFLINE": "true",
            "RUSTC": rustc,
        }

    locked = ["--locked"] if (root / "Cargo.lock").is_file() else []
    return Recipe(
        [cargo, "build", "--release", "--offline", *locked],
        env=env,
        artifact=lambda work: f"{work}/target/release/{program}",
        copy_source=True,
    )


def _cargo_program(manifest: Path) -> str:
    """The program cargo builds: the one ``[[bin]]``'s name, else the package's."""
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise LanguageError(f"runtime rust: Cargo.toml cannot be read: {error}") from None
    bins = data.get("bin")
    if isinstance(bins, list) and len(bins) == 1 and isinstance(bins[0], dict):
        name = bins[0].get("name")
    else:
        package = data.get("package")
        name = package.get("name") if isinstance(package, dict) else None
    if not isinstance(name, str) or not CARGO_NAME.fullmatch(name):
        raise LanguageError(
            "runtime rust: Cargo.toml names no [package] name (or one [[bin]]) of letters, "
            "digits, '-' and '_'"
        )
    return name


ELF_MACHINES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
HOST_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
PT_INTERP = 3  # a program header naming the dynamic loader: the binary is not static


def binary_note(path: Path, host_machine: str) -> str:
    """A line for the owner's transcript when an uploaded binary may not run here, else ''.

    A dynamically linked program needs the server's C library (and every other
    library) in the versions it was linked against, and a program for another
    processor does not run at all: both start fine on the participant's machine
    and fail on the server's with a loader's error the participant never sees.
    """
    try:
        with path.open("rb") as program:
            head = program.read(64)
            if head[:4] != b"\x7fELF" or len(head) < 52:
                return ""  # a script (#!) or not a program: the check will say
            wide = head[4] == 2
            order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
            machine = int.from_bytes(head[18:20], order)
            if wide:
                table = int.from_bytes(head[32:40], order)
                size, count = int.from_bytes(head[54:56], order), int.from_bytes(head[56:58], order)
            else:
                table = int.from_bytes(head[28:32], order)
                size, count = int.from_bytes(head[42:44], order), int.from_bytes(head[44:46], order)
            program.seek(table)
            headers = program.read(min(size * count, 1 << 16))
    except OSError:
        return ""
    here = HOST_MACHINES.get(host_machine.lower(), host_machine)
    built_for = ELF_MACHINES.get(machine, f"machine {machine}")
    if built_for != here:
        return f"note: this binary is for {built_for}; the server is {here}: it will not run"
    for offset in range(0, len(headers) - 3, max(size, 4)):
        if int.from_bytes(headers[offset : offset + 4], order) == PT_INTERP:
            return (
                "note: this binary is dynamically linked: it needs the server's C library "
                "and other libraries in the versions it was linked against; build it static "
                "(docs/server.md, Binaries)"
            )
    return ""
