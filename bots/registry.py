"""The bots that ship with newmarket, by name: how to start each, and whether it can run here.

The referee resolves ``--bot NAME`` through ``BUNDLED`` (any other text is a
command line), and ``newmarket bots`` lists it.  The names are part of the
command line's interface: keep them stable.

Each entry knows its own start-up: a Python starter runs as
``python -m bots.starters.NAME`` under this interpreter; the JavaScript bot
needs ``node``; the bash bot needs ``bash``; the C bot is compiled with ``cc``
on first use into a cache directory.  The compiled binary is named after a
hash of the source, so an edited ``bot.c`` is always rebuilt, a stale binary
is never run, and two processes building at once cannot hand each other a
half-written file (each writes its own temporary file, then renames it).
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

BOTS_DIR: Final = Path(__file__).resolve().parent

__all__ = ["BUNDLED", "BotUnavailableError", "BundledBot", "c_cache_dir", "resolve"]


class BotUnavailableError(RuntimeError):
    """A bundled bot cannot run on this machine; the message says why."""


@dataclasses.dataclass(frozen=True)
class BundledBot(abc.ABC):
    """One bundled bot: ``command()`` is the argv that starts it; ``available()`` says if it can."""

    name: str
    language: str
    description: str

    @abc.abstractmethod
    def command(self) -> tuple[str, ...]:
        """The argv that starts the bot (stdio); raises ``BotUnavailableError`` if it cannot."""

    @abc.abstractmethod
    def available(self) -> tuple[bool, str]:
        """``(True, what it runs with)``, or ``(False, why not)``."""


@dataclasses.dataclass(frozen=True)
class PythonStarter(BundledBot):
    """A starter bot on the SDK, run by the interpreter running newmarket."""

    module: str

    def command(self) -> tuple[str, ...]:
        return (sys.executable, "-m", self.module)

    def available(self) -> tuple[bool, str]:
        return True, f"python {sys.version_info.major}.{sys.version_info.minor}"


@dataclasses.dataclass(frozen=True)
class ScriptBot(BundledBot):
    """A bot that is one script file run by an interpreter found on PATH (node, bash)."""

    interpreter: str
    script: Path

    def command(self) -> tuple[str, ...]:
        ok, why = self.available()
        if not ok:
            raise BotUnavailableError(f"bot {self.name!r}: {why}")
        return (self._interpreter_path() or self.interpreter, str(self.script))

    def available(self) -> tuple[bool, str]:
        if not self.script.is_file():
            return False, f"{self.script} is missing"
        found = self._interpreter_path()
        if found is None:
            return False, f"{self.interpreter} is not on PATH"
        return True, found

    def _interpreter_path(self) -> str | None:
        return shutil.which(self.interpreter)


@dataclasses.dataclass(frozen=True)
class CompiledCBot(BundledBot):
    """A one-file C99 bot, compiled with ``cc -O2`` on first use into ``c_cache_dir()``."""

    source: Path
    compiler: str = "cc"

    def command(self) -> tuple[str, ...]:
        return (str(self.build()),)

    def available(self) -> tuple[bool, str]:
        if not self.source.is_file():
            return False, f"{self.source} is missing"
        if self.binary().is_file():
            return True, f"built: {self.binary()}"
        found = shutil.which(self.compiler)
        if found is None:
            return False, f"{self.compiler} (a C compiler) is not on PATH"
        return True, f"built with {found} on first use"

    def binary(self) -> Path:
        """Where the binary for the current source lives (it may not be built yet)."""
        digest = hashlib.sha256(self.source.read_bytes()).hexdigest()[:16]
        return c_cache_dir() / f"{self.source.stem}-{digest}"

    def build(self) -> Path:
        """The binary for the current source, compiling it first if needed."""
        if not self.source.is_file():
            raise BotUnavailableError(f"bot {self.name!r}: {self.source} is missing")
        binary = self.binary()
        if binary.is_file():
            return binary
        compiler = shutil.which(self.compiler)
        if compiler is None:
            raise BotUnavailableError(
                f"bot {self.name!r}: {self.compiler} (a C compiler) is not on PATH"
            )
        binary.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=binary.name + ".", dir=binary.parent)
        os.close(handle)
        try:
            result = subprocess.run(
                [compiler, "-O2", "-o", temporary, str(self.source)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if result.returncode != 0:
                raise BotUnavailableError(
                    f"bot {self.name!r}: {self.compiler} failed ({result.returncode}):\n"
                    f"{result.stderr.strip()}"
                )
            os.chmod(temporary, 0o755)
            os.replace(temporary, binary)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
        return binary


def c_cache_dir() -> Path:
    """Where compiled bots are kept: ``$XDG_CACHE_HOME/newmarket``, else ``~/.cache/newmarket``.

    When that cannot be created or written (a read-only home), a directory
    under the system's temporary directory.  Creates the directory.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for directory in (Path(base) / "newmarket", Path(tempfile.gettempdir()) / "newmarket-cache"):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(directory, os.W_OK):
            return directory
    raise BotUnavailableError("no writable cache directory for compiled bots")


def _starter(name: str, description: str) -> PythonStarter:
    return PythonStarter(name, "python", description, f"bots.starters.{name}")


BUNDLED: Final[dict[str, BundledBot]] = {
    "random": _starter("random", "uniformly random legal choices (NEWMARKET_RANDOM_SEED)"),
    "lowest": _starter("lowest", "leads its lowest card, keeping high cards as stops"),
    "longest": _starter("longest", "leads from its longest suit; swaps a flat hand for free"),
    "boodle": _starter(
        "boodle", "strongest starter: runs, plus the boodle stacks they take, reach or feed"
    ),
    "tracker": _starter("tracker", "tracks played and dead cards; leads runs that come back to it"),
    "js": ScriptBot(
        "js",
        "javascript",
        "node, no packages: leads from its longest suit",
        "node",
        BOTS_DIR / "js" / "bot.js",
    ),
    "c": CompiledCBot(
        "c",
        "c",
        "one C99 file with a tiny JSON scanner: leads its lowest card",
        BOTS_DIR / "c" / "bot.c",
    ),
    "bash": ScriptBot(
        "bash",
        "bash",
        "bash alone, written from SPEC.md only: leads a card it can follow itself",
        "bash",
        BOTS_DIR / "shell" / "bot.sh",
    ),
    "search": PythonStarter(
        "search",
        "python",
        "determinized Monte Carlo search over the engine; uses most of its move time",
        "bots.search",
    ),
}
"""Every bundled bot by name, in the order ``newmarket bots`` lists them."""


def resolve(name: str) -> BundledBot | None:
    """The bundled bot called ``name``, or None if no bundled bot has that name."""
    return BUNDLED.get(name)
