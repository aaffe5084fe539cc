"""The README's server quick start, run as pasted, with its server left in the background.

The block is marked not to be run by the page's test (its server keeps running
after the block), so this test runs it instead: it reads the block from
README.md (the two cannot drift), runs it in a scratch clone in one bash with
the virtualenv activated, on a free port, then checks what the README
promises: the upload is taken and matches are played within a minute of the
start.  The server, the bash's background job, is stopped by its process
group, which this test started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.docs import blocks as md
from tests.docs.test_docs_run import DOC_PORT, free_port

PROMISED_SECONDS = 60.0


def quick_start() -> md.Block:
    """The README's block that starts ``newmarket serve`` (exactly one)."""
    found = [
        block
        for block in md.blocks(md.ROOT / "README.md")
        if "newmarket serve cup.toml &" in block.body
    ]
    assert len(found) == 1, "the README's server quick start starts `newmarket serve cup.toml &`"
    return found[0]


def test_the_block_says_this_test_runs_it() -> None:
    first = quick_start().body.lstrip("\n").splitlines()[0]
    assert first.startswith(md.MARK) and "tests/docs/test_quick_start.py" in first


def test_the_readme_quick_start_plays_matches_within_a_minute(tmp_path: Path) -> None:
    port = free_port()
    body = quick_start().body.replace(DOC_PORT, str(port))
    directory = md.scratch_clone(tmp_path / "clone")
    script = "set -euo pipefail\n. .venv/bin/activate\n" + body
    out = (tmp_path / "stdout").open("w+")
    err = (tmp_path / "stderr").open("w+")
    started = time.monotonic()
    shell = subprocess.Popen(
        ["bash", "-c", script],
        cwd=directory,
        env=md.environment(),
        stdout=out,
        stderr=err,
        start_new_session=True,  # the shell and its background server: one group to stop
    )
    try:
        code = shell.wait(timeout=120)
        out.seek(0)
        err.seek(0)
        said = out.read()
        assert code == 0, f"the quick start failed ({code}):\n{said}\n{err.read()[-3000:]}"
        uploaded = json.loads(said.strip().splitlines()[-1])
        assert uploaded["participant"] == "alice" and uploaded["status"] == "pending"
        url = f"http://127.0.0.1:{port}/api/leaderboard"
        played = 0
        while time.monotonic() - started < PROMISED_SECONDS:
            played = httpx.get(url, timeout=10).json()["matches"]
            if played:
                break
            time.sleep(0.5)
        assert played, f"no match played within {PROMISED_SECONDS:g} s of the quick start"
    finally:
        os.killpg(shell.pid, signal.SIGTERM)  # the group this test started: bash and serve
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.killpg(shell.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        out.close()
        err.close()
