"""protocol/ depends on msgspec and the standard library only, never on the rest of the repo."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import protocol

PACKAGE = Path(protocol.__file__).parent


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_protocol_modules_import_only_msgspec_and_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"msgspec", "protocol"}
    paths = sorted(PACKAGE.glob("*.py"))
    assert {"messages.py", "framing.py"} <= {path.name for path in paths}  # the package's own
    for path in paths:
        assert _imported_roots(path) <= allowed, path.name


def test_importing_protocol_loads_no_engine_or_referee() -> None:
    code = (
        "import sys, protocol, protocol.schema\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'referee', 'bots'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
