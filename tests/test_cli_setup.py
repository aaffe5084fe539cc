"""``make test`` and ``make demo`` set the machine up: the Debian packages the suite uses.

The Makefile's ``system`` target is run for real here, with fake ``id``,
``sudo`` and ``apt-get`` first on PATH and ``DRY_RUN=1`` (apt-get commands
printed, not run), and with the packages to look for named by the test, so
no test installs anything.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MISSING = "no-such-command-a:pkg-a sh:dash no-such-command-b:pkg-b"


def fake_bin(tmp_path: Path, **scripts: str) -> Path:
    """A directory of tiny shell scripts, one per command, to put first on PATH."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name, body in scripts.items():
        path = directory / name.replace("_", "-")
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    return directory


def make_system(
    bin_dir: Path, *args: str, target: str = "system"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(
        ["make", "-s", "--no-print-directory", target, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_as_root_the_missing_packages_are_installed_with_apt(tmp_path: Path) -> None:
    done = make_system(fake_bin(tmp_path, id="echo 0"), f"TEST_NEEDS={MISSING}", "DRY_RUN=1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "make: installing pkg-a pkg-b with apt-get",
        "apt-get update -qq",
        "env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-a pkg-b",
    ]


def test_with_sudo_that_needs_no_password_it_uses_sudo(tmp_path: Path) -> None:
    bin_dir = fake_bin(tmp_path, id="echo 1000", sudo='[ "$1" = -n ] && [ "$2" = true ]')
    done = make_system(bin_dir, f"TEST_NEEDS={MISSING}", "DRY_RUN=1")
    assert done.returncode == 0, done.stderr
    assert "sudo -n apt-get update -qq" in done.stdout.splitlines()


def test_without_root_one_line_says_what_is_missing_and_make_goes_on(tmp_path: Path) -> None:
    bin_dir = fake_bin(tmp_path, id="echo 1000", sudo="exit 1", apt_get="exit 99")
    done = make_system(bin_dir, f"TEST_NEEDS={MISSING}")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "make: not installed: pkg-a pkg-b (needs root or sudo; the tests that use them skip)\n"
    )


def test_an_apt_get_that_fails_is_one_line_and_make_goes_on(tmp_path: Path) -> None:
    bin_dir = fake_bin(tmp_path, id="echo 0", apt_get="exit 100")
    done = make_system(bin_dir, "TEST_NEEDS=no-such-command-a:pkg-a")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "make: apt-get could not install pkg-a (the tests that use them skip)"
    )


def test_system_0_runs_no_apt_get_and_names_what_is_missing(tmp_path: Path) -> None:
    # As root, with an apt-get that would leave a mark: SYSTEM=0 must not call it.
    mark = tmp_path / "apt-get-ran"
    bin_dir = fake_bin(tmp_path, id="echo 0", apt_get=f"touch {mark}")
    for target in ("system", "system-sandbox"):
        done = make_system(
            bin_dir,
            f"TEST_NEEDS={MISSING}",
            "SANDBOX_NEEDS=no-bwrap:pkg-c",
            "SYSTEM=0",
            target=target,
        )
        assert done.returncode == 0, done.stderr
        missing = "pkg-a pkg-b" if target == "system" else "pkg-c"
        assert done.stdout == (
            f"make: not installed: {missing} (SYSTEM=0; the tests that use them skip)\n"
        )
    assert not mark.exists()


def test_nothing_missing_prints_nothing(tmp_path: Path) -> None:
    done = make_system(fake_bin(tmp_path, id="echo 0"), "TEST_NEEDS=sh:dash", "DRY_RUN=1")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("target", "packages"),
    [
        (
            "system",
            "chromium chromium-driver bubblewrap default-jdk-headless"
            " g++ cargo rustc golang-go node-typescript",
        ),
        ("system-sandbox", "bubblewrap"),
    ],
)
def test_the_suite_and_the_demo_ask_for_their_packages(
    tmp_path: Path, target: str, packages: str
) -> None:
    # PATH holds only a fake `id`: none of the commands looked for is found.
    bin_dir = fake_bin(tmp_path, id="echo 0")
    done = subprocess.run(
        [shutil.which("make") or "make", "-s", "--no-print-directory", target, "DRY_RUN=1"],
        cwd=REPO,
        env={**os.environ, "PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        f"env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq {packages}"
    )


def test_make_test_and_make_demo_set_up_first_and_ci_runs_only_make_test() -> None:
    makefile = (REPO / "Makefile").read_text().splitlines()
    assert "test: system lint typecheck unit" in makefile
    assert any(line.startswith("demo: system-sandbox ") for line in makefile)
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    commands = [line for line in ci if line.strip() and not line.lstrip().startswith("#")]
    assert commands == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', "make test"]


def test_the_suite_runs_in_three_workers_unless_jobs_is_0() -> None:
    # Three on two cores: about half the suite's time waits on real processes.
    def unit(*args: str) -> str:
        done = subprocess.run(
            ["make", "-n", "--no-print-directory", "unit", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return done.stdout.splitlines()[-1]

    assert unit().endswith("pytest -q -n 3")
    assert unit("JOBS=0").endswith("pytest -q ")


def test_the_readme_names_everything_the_two_commands_install() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Two commands") : readme.index("## Writing a bot")]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["test"]
    for requirement in requirements:
        name = re.split(r"[<>=\[ ]", requirement, maxsplit=1)[0]
        assert name in section, f"README's two commands do not name {name}"
    makefile = (REPO / "Makefile").read_text()
    packages = re.findall(
        r"[a-z+]+:([a-z+-]+)", makefile.split("SANDBOX_NEEDS :=")[1].split("\n# ")[0]
    )
    kits = {"g++", "cargo", "rustc", "golang-go", "node-typescript"}
    assert (
        set(packages)
        == {"bubblewrap", "chromium", "chromium-driver", "default-jdk-headless"} | kits
    )
    for package in packages:
        assert f"`{package}`" in section
    assert "SYSTEM=0" in section and "DRY_RUN=1" in section
