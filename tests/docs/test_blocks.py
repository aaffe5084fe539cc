"""The docs test's own rules, on small pages made here: what runs, is marked, or is hidden."""

from __future__ import annotations

import os
from pathlib import Path

from tests.docs import blocks as md

PAGE = """# A page

```console
$ . .venv/bin/activate
$ newmarket match --bot random --bot lowest \\
    --bot tracker --hands 3
some output
```

```python file=bot.py
print("a file to save")
```

```sh
# not run by the docs test: it needs a cluster
dask scheduler
```

```text
error: an output line is fine
```
"""


def test_console_commands_continue_over_backslashes_and_output_is_not_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    found = md.blocks(page, PAGE)
    assert [block.line for block in found] == [3, 10, 14, 19]
    assert found[0].runs and found[0].commands() == [
        ". .venv/bin/activate",
        "newmarket match --bot random --bot lowest \\\n    --bot tracker --hands 3",
    ]
    assert not found[1].runs and found[1].file == "bot.py"
    assert found[2].marked and not found[2].runs
    assert not found[3].runs
    page.write_text(PAGE)
    assert md.problems(page) == []
    script = md.script(found, tmp_path)
    assert (tmp_path / "bot.py").read_text() == 'print("a file to save")\n'
    assert "dask" not in script and "some output" not in script


def test_a_command_hidden_in_a_text_block_or_an_unexplained_mark_is_a_problem(
    tmp_path: Path,
) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```\nnewmarket league x.toml\n```\n\n```sh\n# not run by the docs test:\nls\n```\n"
    )
    found = md.problems(page)
    assert len(found) == 2
    assert "'newmarket league x.toml' is a command in a 'plain' block" in found[0]
    assert "say why the block is not run" in found[1]


def test_the_page_starts_without_the_virtualenv_on_its_path() -> None:
    path = md.environment()["PATH"].split(os.pathsep)
    assert str(md.VENV / "bin") not in path
    assert "VIRTUAL_ENV" not in md.environment()
