"""Every link of the documentation leads somewhere in a clone, and nothing cites outside one.

A reader of a fresh clone has only the repository: a link to a page, a file
or a heading that is not there, or a path to a directory beside the clone
(where the engine's source texts once were), is a dead end for them.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from tests.docs import blocks as md

LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*$", re.MULTILINE)
# Paths that exist only on the machine the project was written on, never in a clone.
OUTSIDE = ("../" + "shared", "/" + "work/")
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
SKIPPED_DIRS |= {".pytest_cache", ".hypothesis", "build", "dist"}


def markdown_pages() -> list[Path]:
    """The README, SPEC.md, docs/ and the measurement studies."""
    results = sorted((md.ROOT / "benchmarks" / "results").glob("*.md"))
    return [*md.pages(), md.ROOT / "SPEC.md", *results]


def without_blocks(text: str) -> str:
    """The page with its fenced blocks blanked, lines kept."""
    return md.FENCE.sub(lambda found: "\n" * found.group(0).count("\n"), text)


def without_code(text: str) -> str:
    """The page with its fenced blocks and inline code blanked, lines kept."""
    return re.sub(r"`[^`\n]*`", "``", without_blocks(text))


def slug(heading: str) -> str:
    """The anchor a markdown renderer (GitHub's) gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for heading in HEADING.findall(without_blocks(page.read_text())):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if seen[base] else base)
        seen[base] += 1
    return found


def broken_links(page: Path, root: Path = md.ROOT) -> list[str]:
    """Each relative link of the page whose file or heading is missing from the clone."""
    problems = []
    text = without_code(page.read_text())
    for found in LINK.finditer(text):
        target = found.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        where = f"{page.relative_to(root)}:{text.count(chr(10), 0, found.start()) + 1}"
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.is_relative_to(root.resolve()):
            problems.append(f"{where}: {target} leads outside the repository")
        elif not linked.exists():
            problems.append(f"{where}: {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{where}: {target}: no heading with that anchor")
    return problems


def repository_files() -> list[Path]:
    found = []
    for path in md.ROOT.rglob("*"):
        parts = path.relative_to(md.ROOT).parts
        if path.is_file() and not SKIPPED_DIRS.intersection(parts) and parts[0] != "runs":
            found.append(path)
    return found


def test_every_link_of_the_docs_leads_to_a_file_and_heading_of_the_clone() -> None:
    pages = markdown_pages()
    assert md.ROOT / "docs" / "speed.md" in pages
    found = [problem for page in pages for problem in broken_links(page)]
    assert not found, "\n".join(found)


def test_a_dead_link_an_unknown_heading_and_a_way_out_are_each_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rules.md").write_text("# Rules\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# A page\n\n## Its `code` heading\n\n[ok](#its-code-heading) [ok](rules.md) "
        "[gone](no-such-page.md) [where](rules.md#no-such-heading) "
        "[out](../../outside.md) [web](https://example.org/x.md)\n"
        "```text\n[in a block](not-a-link.md)\n```\n"
    )
    found = broken_links(page, tmp_path)
    assert len(found) == 3, found
    assert "no-such-page.md: no such file" in found[0]
    assert "rules.md#no-such-heading: no heading" in found[1]
    assert "../../outside.md leads outside the repository" in found[2]


def test_headings_give_the_anchors_a_renderer_gives() -> None:
    assert slug("For cutechess, fastchess and ACPC dealer users") == (
        "for-cutechess-fastchess-and-acpc-dealer-users"
    )
    assert slug("Leagues: `--jobs 2` against `--jobs 1`") == "leagues---jobs-2-against---jobs-1"


def test_no_file_of_the_repository_names_a_path_outside_it() -> None:
    files = repository_files()
    assert md.ROOT / "engine" / "presets.py" in files
    found = []
    for path in files:
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for outside in OUTSIDE:
                if outside in line:
                    found.append(f"{path.relative_to(md.ROOT)}:{number}: names {outside!r}")
    assert not found, "\n".join(found)
