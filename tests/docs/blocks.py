"""The fenced blocks of a markdown page, and a bash script that runs them as a reader would.

The convention every page of the README and ``docs/`` follows (and
``test_docs_run.py`` enforces):

* a ```` ```console ```` block is commands: each ``$ `` line is run (a line
  ending in ``\\`` continues on the next), the other lines are their output;
* a ```` ```sh ````, ```` ```bash ```` or ```` ```shell ```` block is run whole;
* a ```` ```python ```` block is run as a file with the ``python3`` on the path;
* a block whose info string has ``file=NAME`` is a file the page asks the
  reader to save: it is written as NAME before anything runs;
* any block above whose first line is ``# not run by the docs test: WHY`` is
  illustrative only (a cluster, an hour-long benchmark, ``make test`` itself);
  the reason is shown to the reader too;
* every other block (``text``, ``toml``, ``json`` ...) is output or data, and
  may not hide a command: no line of it starts with ``$ ``, ``newmarket `` or
  ``.venv/bin/``.

Each page runs top to bottom in one bash (``set -euo pipefail``), as one
terminal would, in a scratch copy of a fresh clone after ``make demo``: the
clone's directories are linked in, ``examples/`` is copied, and ``.venv`` is
the real virtualenv.  Nothing of the virtualenv is on the ``PATH`` until the
page's own ``. .venv/bin/activate`` line puts it there.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
SHELL = frozenset({"console", "sh", "bash", "shell"})
RUNNABLE = SHELL | {"python"}
MARK = "# not run by the docs test:"
COMMAND_LIKE = (
    "$ ",
    "newmarket ",
    ".venv/bin/",
    "python3 ",
    "python benchmarks/",
    "make ",
    "dask ",
)
# What a clone holds (besides examples/, copied): linked into the scratch clone, read only.
CLONE = (
    "engine",
    "protocol",
    "referee",
    "bots",
    "tests",
    "benchmarks",
    "docs",
    ".ci",
    "SPEC.md",
    "README.md",
    "Makefile",
    "pyproject.toml",
)


def pages() -> list[Path]:
    """The README and every page of docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclasses.dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    info: str
    body: str

    @property
    def lang(self) -> str:
        return self.info.split()[0] if self.info.split() else ""

    @property
    def file(self) -> str | None:
        found = re.search(r"\bfile=(\S+)", self.info)
        return found.group(1) if found else None

    @property
    def where(self) -> str:
        shown = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{shown}:{self.line}"

    @property
    def marked(self) -> bool:
        first = self.body.lstrip("\n").split("\n", 1)[0]
        return first.startswith(MARK)

    @property
    def runs(self) -> bool:
        return self.lang in RUNNABLE and self.file is None and not self.marked

    def commands(self) -> list[str]:
        """What bash runs for this block."""
        if self.lang in ("sh", "bash", "shell"):
            return [self.body]
        out: list[str] = []
        going_on = False
        for line in self.body.splitlines():
            if going_on:
                out[-1] += "\n" + line
            elif line.startswith("$ "):
                out.append(line[2:])
            else:
                continue
            going_on = line.endswith("\\")
        return out


def blocks(page: Path, text: str | None = None) -> list[Block]:
    text = page.read_text() if text is None else text
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(page, line, match.group(1).strip(), match.group(2)))
    return found


def problems(page: Path) -> list[str]:
    """Where a page breaks the convention: a hidden command, a mark without a reason."""
    found = []
    for block in blocks(page):
        if block.marked:
            reason = block.body.lstrip("\n").split("\n", 1)[0][len(MARK) :].strip()
            if not reason:
                found.append(f"{block.where}: say why the block is not run, after {MARK!r}")
            if block.lang not in RUNNABLE:
                found.append(f"{block.where}: only command blocks are marked, not {block.lang!r}")
        elif block.lang not in RUNNABLE and block.file is None:
            for line in block.body.splitlines():
                if line.startswith(COMMAND_LIKE):
                    found.append(
                        f"{block.where}: {line!r} is a command in a {block.lang or 'plain'!r} "
                        f"block: put it in a console block, or mark the block {MARK!r}"
                    )
                    break
    return found


def scratch_clone(directory: Path) -> Path:
    """A fresh clone after ``make demo``, cheaply: the sources linked, ``examples/`` copied."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in CLONE:
        if (ROOT / name).exists():
            (directory / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "examples", directory / "examples")
    (directory / ".venv").symlink_to(VENV)
    return directory


def script(page_blocks: list[Block], directory: Path) -> str:
    """The page as one bash script; the files it shows are written into ``directory`` first."""
    lines = ["set -euo pipefail"]
    for block in page_blocks:
        if block.file is not None and not block.marked:
            (directory / block.file).write_text(block.body)
    for number, block in enumerate(page_blocks):
        if not block.runs:
            continue
        lines.append(f"echo {shlex.quote('>>> ' + block.where)} >&2")
        if block.lang == "python":
            name = f".docs-block-{number}.py"
            (directory / name).write_text(block.body)
            lines.append(f"python3 {name}")
        else:
            lines += block.commands()
    return "\n".join(lines) + "\n"


def environment() -> dict[str, str]:
    """The test's environment without the virtualenv: the page must activate it."""
    env = dict(os.environ)
    bin_dir = str(VENV / "bin")
    env["PATH"] = os.pathsep.join(
        part for part in env.get("PATH", "").split(os.pathsep) if part and part != bin_dir
    )
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "NEWMARKET_CONNECT", "NEWMARKET_TOKEN"):
        env.pop(name, None)
    return env
