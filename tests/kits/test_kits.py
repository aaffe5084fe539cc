"""Each starter kit of ``bots/kits/`` builds as its README says and passes ``newmarket check``.

The Java and TypeScript kits here (built without optimisation); the C++, Rust
and Go kits in ``tests/server/test_languages.py``, where the server builds each
with its own command and admission runs ``newmarket check`` on it (one build
each, not two).  A kit whose toolchain is missing here is skipped with the
reason.  The TypeScript kit's
shipped ``.js`` must be what ``tsc`` makes of its ``.ts`` (checked where Debian's
``node-typescript`` is installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.clirun import newmarket
from tests.kits.kits import BY_LANGUAGE, KIT_LIST, KITS, Kit, build_kit

CHECKED_HERE = tuple(kit for kit in KIT_LIST if kit.runtime in ("java", "node"))


@pytest.mark.parametrize("kit", CHECKED_HERE, ids=lambda kit: kit.language)
def test_each_kit_passes_newmarket_check(kit: Kit, tmp_path: Path) -> None:
    why = kit.missing()
    if why is not None:
        pytest.skip(f"the {kit.language} kit cannot be built: {why}")
    directory, command = build_kit(kit, tmp_path)
    # Named after -- (Java) or with --bot (TypeScript): --dir applies to either.
    named = ("--bot", " ".join(command)) if kit.runtime == "node" else ("--", *command)
    code, out, err = newmarket("check", "--dir", str(directory), *named)
    assert code == 0, out[-3000:] + err
    assert "PASS:" in out and "0 faults" in out
    # The tutorial bot's own name, so the check played the kit and not something else.
    assert f"my-{kit.directory.replace('typescript', 'ts')}-bot" in out


def test_check_dir_names_a_directory_that_is_not_there_in_one_line(tmp_path: Path) -> None:
    code, _out, err = newmarket("check", "--dir", str(tmp_path / "gone"), "--", "./bot")
    assert code == 2
    assert err.strip() == f"error: --dir: {tmp_path / 'gone'} is not a directory"


def test_every_kit_has_a_readme_line_and_no_build_output_in_the_tree() -> None:
    readme = (KITS / "README.md").read_text()
    for kit in KIT_LIST:
        assert f"[{kit.directory}/]({kit.directory}/)" in readme, kit.language
        for name in kit.uploaded:
            assert (kit.path / name).is_file(), f"{kit.directory}/{name}"
    assert not (BY_LANGUAGE["Rust"].path / "target").exists()


def test_the_typescript_kits_javascript_is_what_tsc_makes_of_it(tmp_path: Path) -> None:
    if shutil.which("tsc") is None:
        pytest.skip("no tsc on this machine (Debian: apt-get install node-typescript)")
    kit = BY_LANGUAGE["TypeScript"]
    work = tmp_path / "ts"
    shutil.copytree(kit.path, work)
    for made in ("main.js", "protocol.js"):
        (work / made).unlink()
    subprocess.run(
        ["tsc", "-p", "."],
        cwd=work,
        check=True,
        capture_output=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )
    for made in ("main.js", "protocol.js"):
        assert (work / made).read_text() == (kit.path / made).read_text(), (
            f"bots/kits/typescript/{made} is not tsc's output of its .ts: run tsc -p . there"
        )
