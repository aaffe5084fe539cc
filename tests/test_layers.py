"""The referee's packages form the layers docs/architecture.md draws: each imports only upward.

A new import that points down (the server reaching into the league, the match
loop into the tables) fails here with the file and the import that does it,
before it can grow into a cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REFEREE = Path(__file__).resolve().parents[1] / "referee"

# Top to bottom, as docs/architecture.md lists them; a package may import those before it.
LAYERS = [
    {"storage", "sandbox", "text", "bots"},
    {"transport"},
    {"settings"},
    {"match"},
    {"tools"},
    {"tables"},
    {"scoring"},
    {"league"},
    {"report"},
    {"server"},
    {"commands", "cli"},
]
LEVEL = {package: level for level, packages in enumerate(LAYERS) for package in packages}


def referee_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``referee.X`` a file imports (lazy and TYPE_CHECKING ones too), with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.startswith("referee.")]
    return found


def test_every_referee_package_is_in_a_layer() -> None:
    packages = {p.name for p in REFEREE.iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in REFEREE.glob("*.py") if p.stem != "__init__"}
    assert packages | modules == set(LEVEL), "add the new package to LAYERS and to the doc"


def test_no_package_imports_one_below_it() -> None:
    downward = []
    for path in sorted(REFEREE.rglob("*.py")):
        relative = path.relative_to(REFEREE)
        source = relative.parts[0].removesuffix(".py")
        if source == "__init__":
            continue
        for line, name in referee_imports(path):
            target = name.split(".")[1]
            if target != source and LEVEL[target] > LEVEL[source]:
                downward.append(f"referee/{relative}:{line}: imports {name}")
    assert downward == [], "\n".join(downward)


def test_the_server_and_the_league_share_nothing_but_what_sits_above_both() -> None:
    server = [
        f"{path.name}:{line}"
        for path in sorted((REFEREE / "server").rglob("*.py"))
        for line, name in referee_imports(path)
        if name.startswith("referee.league")
    ]
    assert server == []


def test_the_command_line_loads_no_test_library() -> None:
    """Every command imports the whole CLI to build its help; a test library imported at
    the top of a module it reaches (``trio.testing`` imports pytest) cost every command
    about 0.3 s of start-up.  What only ``check`` needs, ``check`` imports when it runs."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, referee.cli; "
            "print(*(m for m in ('pytest', 'trio.testing', 'hypothesis') if m in sys.modules))",
        ],
        cwd=REFEREE.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.split() == []
