"""A version's files into a ``BotSpec``: which file runs, and compiling C and Java.

Each runtime has one rule, so a participant can predict it (docs/server.md):

=========  ===========================  ===================================================
runtime    entry (or the single file)   started as
=========  ===========================  ===================================================
python3    ``main.py``                  ``python3 ENTRY``
node       ``main.js``                  ``node ENTRY``
java       ``Main.java`` (its class)    ``javac -d classes *.java``; ``java -cp classes CLASS``
c          every ``*.c``                ``cc -O2 -o bot *.c -lm``; ``./bot``
cpp        every ``*.cpp``              ``c++ -O2 -std=gnu++17 -o bot *.cpp``; ``./bot``
rust       ``Cargo.toml`` or ``main.rs``  ``cargo build --release --offline``; ``rustc -O``
go         ``go.mod`` or every ``*.go``   ``go build -o bot`` (``GOPROXY=off``, vendored)
binary     ``bot``                      ``./bot`` (a Linux executable)
=========  ===========================  ===================================================

Compilers run like bots: through ``referee.transport.process.start_process`` under the
competition's sandbox (so its limits, and the isolation of the iso-sandbox
work once it lands there, apply to them too), with a clean environment, no
input, a wall-clock limit, and their stderr kept for the owner's transcript.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import platform
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO

import trio

from referee.bots import BotSpec
from referee.sandbox import Sandbox
from referee.sandbox.isolation import SCRATCH
from referee.sandbox.seccomp import lock_filter
from referee.server.competition_file import UploadLimits
from referee.server.languages import COMPILED, WORK, LanguageError, binary_note, recipe
from referee.server.languages import entry_of as compiled_entry_of
from referee.server.quotas import tree_bytes
from referee.server.unpack import BUILT_NAME, Room, UnpackError, unpack_upload
from referee.transport.process import BotProcess, clean_environment, start_process

OUTPUT = "build"  # the only directory of a version its compiler may write
ENTRIES = {"python3": "main.py", "node": "main.js", "java": "Main.java", "binary": "bot"}
SUFFIXES: dict[str, str | tuple[str, ...]] = {
    "python3": ".py",
    "node": ".js",
    "java": ".java",
    "c": ".c",
    "cpp": (".cpp", ".cc", ".cxx"),
    "rust": ".rs",
    "go": ".go",
}


class BuildError(ValueError):
    """A version that cannot be built; ``transcript`` is what the compiler said."""

    def __init__(self, message: str, transcript: str = "") -> None:
        super().__init__(message)
        self.transcript = transcript


@dataclasses.dataclass(frozen=True)
class Built:
    spec: BotSpec
    transcript: str  # the compiler's output, if any (warnings are worth showing)


def entry_of(runtime: str, files: list[str]) -> str:
    """The file a runtime starts (see the table above); raises ``BuildError``."""
    if len(files) == 1 and runtime != "c":
        only = files[0]
        suffix = SUFFIXES.get(runtime)
        if suffix is not None and not only.endswith(suffix):
            shown = suffix if isinstance(suffix, str) else " or ".join(suffix)
            raise BuildError(f"runtime {runtime}: a single file must end in {shown}, got {only!r}")
        if runtime not in COMPILED:
            return only
    if runtime in COMPILED:
        try:
            return compiled_entry_of(runtime, files)
        except LanguageError as error:
            raise BuildError(str(error)) from None
    wanted = ENTRIES.get(runtime)
    if runtime == "c":
        if not any(name.endswith(".c") for name in files):
            raise BuildError("runtime c: the upload holds no .c file")
        return "bot"
    assert wanted is not None
    if wanted not in files:
        raise BuildError(f"runtime {runtime}: an archive needs {wanted} at its top level")
    return wanted


async def build(
    runtime: str,
    root: Path,
    files: list[str],
    name: str,
    sandbox: Sandbox,
    seconds: float,
    room: Room | None = None,
) -> Built:
    """Compile if the runtime needs it and say how to start the bot in ``root``.

    ``room``: the most the compiler's output may take of the participant's share of
    the disk (``referee.server.quotas``); more is a ``BuildError`` with its refusal.
    """
    entry = entry_of(runtime, files)
    if runtime == "python3":
        return Built(BotSpec(name, ("python3", entry), cwd=root), "")
    if runtime == "node":
        return Built(BotSpec(name, ("node", entry), cwd=root), "")
    if runtime == "binary":
        path = root / entry
        path.chmod(0o755)
        note = binary_note(path, platform.machine())
        return Built(BotSpec(name, (str(path),), cwd=root), note and note + "\n")
    if runtime == "c":
        sources = sorted(name for name in files if name.endswith(".c"))
        argv = ["cc", "-O2", "-std=gnu11", "-o", f"{OUTPUT}/bot", *sources, "-lm"]
        transcript = await compile_in_sandbox(argv, root, sandbox, seconds, room)
        return Built(BotSpec(name, (str(root / OUTPUT / "bot"),), cwd=root), transcript)
    if runtime == "java":
        sources = sorted(name for name in files if name.endswith(".java"))
        argv = ["javac", "-encoding", "UTF-8", "-d", f"{OUTPUT}/classes", *sources]
        transcript = await compile_in_sandbox(argv, root, sandbox, seconds, room)
        main_class = PurePosixPath(entry).stem
        return Built(
            BotSpec(name, ("java", "-Xss8m", "-cp", f"{OUTPUT}/classes", main_class), cwd=root),
            transcript,
        )
    if runtime in COMPILED:
        try:
            how = recipe(runtime, root, files)
        except LanguageError as error:
            raise BuildError(str(error)) from None
        transcript = await compile_in_sandbox(
            how.argv, root, sandbox, seconds, room, env=how.env, artifact=how.artifact
        )
        return Built(BotSpec(name, (str(root / OUTPUT / "bot"),), cwd=root), transcript)
    raise BuildError(f"unknown runtime {runtime!r}")


def _no_env(_work: str) -> dict[str, str]:
    return {}


def _top_output(root: Path, directory: str, names: list[str]) -> list[str]:
    """``copytree``'s ignore: the output directory at the top (the copy is made in it)."""
    return [OUTPUT] if Path(directory) == root and OUTPUT in names else []


async def compile_in_sandbox(
    argv: list[str],
    cwd: Path,
    sandbox: Sandbox,
    seconds: float,
    room: Room | None = None,
    *,
    env: Callable[[str], dict[str, str]] = _no_env,
    artifact: Callable[[str], str] | None = None,
) -> str:
    """Run a compiler under the sandbox; its output, or ``BuildError`` with it.

    ``argv`` names its output under ``OUTPUT/``.  Isolated, the compiler never
    writes the server's disk: it writes ``OUTPUT`` in its own scratch tmpfs
    (capped), which comes out as a tar stream on its stdout, read up to the
    cap and unpacked by the upload's rules (regular files and directories,
    no path out, counted bytes).  A compiler runs the upload's code (javac
    runs any annotation processor it finds on its class path, and the class
    path is the upload): given a directory of the server's disk, that code
    filled it, 256 MiB per file and as many files as it liked.

    ``env(work)`` adds to the compiler's environment, given a writable work
    directory for its caches that is not part of the output (in the scratch
    when isolated); ``artifact(work)``, if given, is the file the compiler
    leaves there that becomes ``OUTPUT/bot`` (cargo's target directory).
    """
    shown = " ".join(argv)
    _fresh_output_dir(cwd / OUTPUT, isolated=sandbox.isolation is not None)
    if sandbox.isolation is not None:
        sandbox = compiler_sandbox(sandbox)
        work = f"{SCRATCH}/{WORK}"
        extra = {**env(work), "NEWMARKET_WORK": work}
        if artifact is not None:
            extra["NEWMARKET_ARTIFACT"] = artifact(work)
        return await _compile_isolated(argv, shown, cwd, sandbox, seconds, room, extra)
    work = str(cwd / OUTPUT / WORK)
    extra = env(work)
    try:
        source = extra.get("NEWMARKET_SOURCE")
        if source is not None:
            copy = partial(shutil.copytree, cwd, source, ignore=partial(_top_output, cwd))
            await trio.to_thread.run_sync(copy)
        return await _compile_here(
            argv, shown, cwd, sandbox, seconds, room, extra, artifact and artifact(work)
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compiler_sandbox(sandbox: Sandbox) -> Sandbox:
    """``sandbox`` with a compiler's filter: locks allowed, notification still refused
    (``referee.sandbox.seccomp.lock_filter``).  go locks go.mod and cargo its caches, and
    both stop when a lock fails."""
    isolation = sandbox.isolation
    if isolation is None or isolation.seccomp is None:
        return sandbox
    return dataclasses.replace(
        sandbox, isolation=dataclasses.replace(isolation, seccomp=_compiler_filter())
    )


@functools.cache
def _compiler_filter() -> bytes | None:
    return lock_filter(locks=False)


def _fresh_output_dir(output_dir: Path, *, isolated: bool) -> None:
    """``OUTPUT`` emptied of a build cut short, and made here unless the sandbox makes it."""
    if output_dir.is_symlink() or (output_dir.exists() and not output_dir.is_dir()):
        # Uncaught, mkdir's FileExistsError ended the admission loop and the server with it.
        raise BuildError(f"{OUTPUT!r} is where the compiler writes: the upload may not hold it")
    try:
        shutil.rmtree(output_dir, ignore_errors=True)  # a build cut short by a crash: anew
        if not isolated:
            output_dir.mkdir()
    except OSError as error:
        raise BuildError(f"cannot make the compiler's {OUTPUT!r} directory: {error}") from None


async def _compile_here(
    argv: list[str],
    shown: str,
    cwd: Path,
    sandbox: Sandbox,
    seconds: float,
    room: Room | None,
    extra: dict[str, str] | None = None,
    artifact: str | None = None,
) -> str:
    """Not isolated, the compiler could write anywhere its user can: it writes OUTPUT itself."""
    output_dir = cwd / OUTPUT
    try:
        process = await start_process(
            argv,
            cwd=Path((extra or {}).get("NEWMARKET_SOURCE", cwd)),
            env=clean_environment({"HOME": str(cwd), **(extra or {})}),
            stdio=False,
            sandbox=sandbox,
            writable=output_dir,
        )
    except OSError as error:
        _own_again(output_dir)
        raise BuildError(f"cannot start the compiler ({argv[0]}): {error}") from None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(process.watch)
        nursery.start_soon(process.drain_stderr)
        with trio.move_on_after(seconds):
            await process.exited.wait()
        timed_out = not process.exited.is_set()
        await process.end()
        nursery.cancel_scope.cancel()
    _own_again(output_dir)
    transcript = _verdict(process, _transcript(process, shown), cwd, seconds, timed_out)
    if artifact is not None:
        try:
            shutil.copyfile(artifact, output_dir / "bot")
            (output_dir / "bot").chmod(0o755)
        except OSError as error:
            raise BuildError(f"the compiler left no program: {error}", transcript) from None
    # Written straight to the disk here: measured after, and removed if it is too much.
    if room is not None and tree_bytes(output_dir) > room.bytes:
        shutil.rmtree(output_dir, ignore_errors=True)
        raise BuildError(f"the compiler's output: {room.refusal}", transcript)
    return transcript


# Inside the sandbox: make the output directory in the scratch tmpfs, compile (its stdout
# joins its stderr: stdout is the tar stream's alone), copy cargo's program out of its work
# directory (outside the output, as the caches are), then stream the directory out.  With
# NEWMARKET_SOURCE the compiler works on a copy of the upload there (cargo writes its lock).
_COMPILE_THEN_TAR = (
    'set -e; mkdir -p "$0" "$NEWMARKET_WORK"; '
    'if [ -n "$NEWMARKET_SOURCE" ]; then cp -R . "$NEWMARKET_SOURCE"; cd "$NEWMARKET_SOURCE"; fi; '
    '"$@" >&2; '
    'if [ -n "$NEWMARKET_ARTIFACT" ]; then cp "$NEWMARKET_ARTIFACT" "$0/bot"; fi; '
    'exec tar -C "$0" -czf - .'
)
BUILT_FILES = 5000  # javac writes a class file per class, inner and anonymous ones too


async def _compile_isolated(
    argv: list[str],
    shown: str,
    cwd: Path,
    sandbox: Sandbox,
    seconds: float,
    room: Room | None,
    extra: dict[str, str],
) -> str:
    scratch_output = f"{SCRATCH}/{OUTPUT}"
    inside = [
        scratch_output + argument[len(OUTPUT) :] if argument.startswith(f"{OUTPUT}/") else argument
        for argument in argv
    ]
    cap = sandbox.limits.scratch_bytes or 256 << 20
    try:
        process = await start_process(
            ["/bin/sh", "-c", _COMPILE_THEN_TAR, scratch_output, *inside],
            cwd=cwd,
            env=clean_environment({"HOME": SCRATCH, **extra}),
            stdio=True,
            sandbox=sandbox,
        )
    except OSError as error:
        raise BuildError(f"cannot start the compiler ({argv[0]}): {error}") from None
    assert process.process.stdin is not None
    await process.process.stdin.aclose()  # nothing to read, as with /dev/null before
    with tempfile.NamedTemporaryFile(prefix="newmarket-build-", suffix=".tar.gz") as spool:
        too_big, timed_out = await _tar_to_spool(process, spool, cap, seconds)
        transcript = _transcript(process, shown)
        if too_big:
            raise BuildError(f"the compiler's output is larger than {cap >> 20} MiB", transcript)
        _verdict(process, transcript, cwd, seconds, timed_out)
        spool.flush()
        # Unpacked within the participant's share of the disk too: refused past it.
        limits = UploadLimits(max_files=BUILT_FILES, max_unpacked_bytes=cap)
        try:
            # Named as a tar.gz: a stream that is not one (forged, or empty) is refused,
            # never taken for a single file called "build".
            unpack = partial(unpack_upload, names=BUILT_NAME, room=room)
            await trio.to_thread.run_sync(
                unpack, Path(spool.name), "out.tar.gz", cwd / OUTPUT, limits
            )
        except UnpackError as error:  # whatever the forged stream raised: unpack_upload's doc
            shutil.rmtree(cwd / OUTPUT, ignore_errors=True)
            raise BuildError(f"the compiler's output: {error}", transcript) from None
    return transcript


async def _tar_to_spool(
    process: BotProcess, spool: IO[bytes], cap: int, seconds: float
) -> tuple[bool, bool]:
    """The compiler's tar stream written to ``spool`` up to ``cap`` bytes, within ``seconds``.

    Returns whether the stream passed the cap, and whether the time ran out first.
    """
    assert process.process.stdout is not None
    stream = process.process.stdout
    too_big = False

    async def collect(done: trio.Event) -> None:
        nonlocal too_big
        size = 0
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await stream.receive_some(65536):
                size += len(data)
                if size > cap:
                    too_big = True
                    break
                spool.write(data)
        done.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(process.watch)
        nursery.start_soon(process.drain_stderr)
        collected = trio.Event()
        nursery.start_soon(collect, collected)
        with trio.move_on_after(seconds):
            await collected.wait()  # the stream's end (the compiler is done), or the cap
            if not too_big:
                await process.exited.wait()
        timed_out = not process.exited.is_set() and not too_big
        await process.end()
        nursery.cancel_scope.cancel()
    return too_big, timed_out


def _transcript(process: BotProcess, shown: str) -> str:
    """What a participant sees of a build: the command, then the compiler's stderr."""
    return f"$ {shown}\n{process.stderr.text()}"


def _verdict(process: BotProcess, output: str, cwd: Path, seconds: float, timed_out: bool) -> str:
    """``output`` (the transcript) if the compiler succeeded, else ``BuildError`` with it."""
    if timed_out:
        raise BuildError(f"the compiler ran longer than {seconds:g} s", output)
    if process.status != 0:
        raise BuildError(f"compilation failed ({process.exit_text()})", output)
    if not os.access(cwd, os.R_OK):
        raise BuildError("the compiler left the directory unreadable", output)
    return output


def _own_again(directory: Path) -> None:
    """Give the compiler's output back to the server's user (a root server lent it a uid)."""
    if os.geteuid() != 0:
        return
    for path in (directory, *directory.rglob("*")):
        with contextlib.suppress(OSError):
            os.chown(path, 0, 0, follow_symlinks=False)
