"""Code that runs while a version is compiled: it cannot write the server's disk.

A compiler runs the upload's code: javac runs every annotation processor it
finds on its class path, and with no ``-cp`` the class path is the upload's
own directory.  So a Java upload carrying a compiled processor (and the
``META-INF/services`` line that names it) runs whatever it likes at compile
time, as the compiler does.  That is sandboxed like a bot; what the compiler
had beyond a bot was a directory of the server's disk it could write (its
output), which such code filled without any cap.  Now the compiler writes its
output in its own capped scratch, and the server unpacks what comes out by
the upload's rules.  These tests compile the processor here (javac), then
build uploads carrying it through ``referee.server.build`` under the
isolating sandbox the server uses.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from referee.sandbox import Limits, detect, resolve
from referee.server.build import BuildError, build

SUPPORT = detect()
pytestmark = pytest.mark.skipif(
    SUPPORT.isolation is None, reason=f"no isolation on this machine: {SUPPORT.isolation_why}"
)
PROCESSOR = Path(__file__).resolve().parent / "build_attacks" / "Processor.java"
MAIN_JAVA = "public class Main { public static void main(String[] args) {} }\n"


@pytest.fixture(scope="module")
def processor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled processor class (javac once for the module)."""
    if shutil.which("javac") is None:
        pytest.skip("no javac on this machine: the attack needs a Java compiler")
    out = tmp_path_factory.mktemp("processor")
    subprocess.run(["javac", "-d", str(out), str(PROCESSOR)], check=True, timeout=300)
    return out / "Processor.class"


def java_upload(root: Path, processor: Path, attack: str) -> list[str]:
    """A version's files: Main.java, the processor and its services line, attack.txt."""
    services = root / "META-INF" / "services"
    services.mkdir(parents=True)
    (services / "javax.annotation.processing.Processor").write_text("Processor\n")
    shutil.copy(processor, root / "Processor.class")
    (root / "Main.java").write_text(MAIN_JAVA)
    (root / "attack.txt").write_text(attack + "\n")
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def version(tmp_path: Path) -> Path:
    """A version's directory as the server makes it: readable by the bot's own uid (pytest's
    own temporary directories are not)."""
    root = tmp_path / "files"
    root.mkdir(mode=0o755)
    return root


def on_disk(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


async def test_a_processor_run_by_javac_cannot_fill_the_servers_disk(
    processor: Path, version: Path
) -> None:
    files = java_upload(version, processor, "fill")
    before = on_disk(version)
    built = await build("java", version, files, "filler", resolve("auto"), 120)
    assert "WROTE" not in built.transcript, built.transcript  # nothing it wrote was kept...
    # ...and on the server's disk there is the upload and the compiler's one class file.
    assert on_disk(version) - before == {"build", "build/classes", "build/classes/Main.class"}
    assert built.spec.command[-1] == "Main"


async def test_a_link_in_the_compilers_output_is_a_rejection(
    processor: Path, version: Path
) -> None:
    files = java_upload(version, processor, "link")
    with pytest.raises(BuildError) as caught:
        await build("java", version, files, "linker", resolve("auto"), 120)
    assert "LINKED" in caught.value.transcript  # the attack ran, and was refused:
    assert str(caught.value).startswith("the compiler's output: ")
    assert "Stolen.class" in str(caught.value) and "a link" in str(caught.value)
    assert not (version / "build").exists()


async def test_output_past_the_scratch_cap_is_a_rejection(version: Path) -> None:
    """A C program whose binary (a zero-filled array, not even written by code) is larger
    than the compiler's scratch space: refused, nothing written to the server's disk."""
    (version / "big.c").write_text(
        "char big[8 << 20] = {1};\nint main(int argc, char **argv) { return big[argc << 12]; }\n"
    )
    sandbox = resolve("auto", Limits(scratch_bytes=4 << 20))
    with pytest.raises(BuildError) as caught:
        await build("c", version, ["big.c"], "big", sandbox, 120)
    assert "compilation failed" in str(caught.value)
    assert "No space left on device" in caught.value.transcript
    assert not (version / "build").exists()


async def test_a_c_bot_built_in_the_sandbox_is_an_executable(version: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on this machine")
    (version / "bot.c").write_text('#include <stdio.h>\nint main(void) { puts("hi"); }\n')
    built = await build("c", version, ["bot.c"], "hello", resolve("auto"), 120)
    program = Path(built.spec.command[0])
    assert program == version / "build" / "bot" and program.stat().st_mode & 0o100
    assert subprocess.run([program], capture_output=True, check=True).stdout == b"hi\n"
