"""One real small league, played once per test session, for every report test.

``newmarket league`` runs a tiny round robin of bundled bots and
``mischief_bot.py`` (an untrusted name, HTML on stderr, one illegal lead per
match), with match logs; the tests build the site from its database.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
# Markup in a bot's name: the league file refuses '/' in names (they become file names),
# so the mischief is a tag that would run script on load if it were not escaped.
MISCHIEF = "<img src=x onerror=alert('name')>"
BOTS = ["random", "lowest", MISCHIEF, "tracker"]

LEAGUE = """
[league]
name = "report <i>test</i> league"
seed = 11
public_deals = true  # the same cards every session: the pages' words are checked exactly
table_size = 3
hand_limit = 5
logs = "logs"

[schedule]
duplicate = false

[rules]
preset = "boodle"

[time_control]
move_time = 5.0
startup_time = 30.0
margin = 0.5

[[bots]]
name = "random"
command = "random"

[[bots]]
name = "lowest"
command = "lowest"

[[bots]]
name = "{mischief}"
command = ["{python}", "{bot}"]

[[bots]]
name = "tracker"
command = "tracker"
"""


@pytest.fixture(scope="session")
def league_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report-league")
    config = root / "league.toml"
    config.write_text(
        LEAGUE.format(
            mischief=MISCHIEF.replace("\\", "\\\\").replace('"', '\\"'),
            python=sys.executable,
            bot=HERE / "mischief_bot.py",
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "referee.cli", "league", str(config), "--jobs", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root / "league.db"
