"""``newmarket league --competition cup.toml``: a local league played as the server plays.

The match logs' headers are what the referee really applied: the rules, the
time control and the sandbox limits must be the competition file's (as the
server reads it), not the league file's, and a table's seat rotations share
one deal, as a server's duplicate group does.
"""

from __future__ import annotations

from pathlib import Path

from referee.server.competition_file import load_config as load_competition
from tests.clirun import newmarket
from tests.match_logs import kept_logs, log_records

COMPETITION = """
[competition]
name = "Cup"
[tables]
players = 3
hand_limit = 2
[rules]
preset = "boodle"
options = { stake_total = 4 }
[time_control]
move_time = 2.5
[sandbox]
memory_mb = 512
processes = 32
"""

LEAGUE = """
[league]
name = "mine"
seed = 7
hand_limit = 30
[rules]
preset = "newmarket"
[time_control]
move_time = 0.5
[sandbox]
level = "none"
[[bots]]
command = "random"
[[bots]]
command = "lowest"
[[bots]]
command = "longest"
"""


def test_a_league_with_a_competition_file_plays_by_the_servers_rules_and_sandbox(
    tmp_path: Path,
) -> None:
    (tmp_path / "cup.toml").write_text(COMPETITION)
    (tmp_path / "mine.toml").write_text(LEAGUE)
    code, out, err = newmarket(
        "league",
        str(tmp_path / "mine.toml"),
        "--competition",
        str(tmp_path / "cup.toml"),
        "-j",
        "1",
    )
    assert code == 0, err
    assert "as the server of" in err and "3 seats a table, hand limit 2" in err
    assert "lowest" in out and "longest" in out
    server = load_competition(tmp_path / "cup.toml")
    headers = [log_records(log)[0] for log in kept_logs(tmp_path / "mine-logs")]
    assert len(headers) == 3  # one table of three, each seat rotation once
    for header in headers:
        assert header["players"] == 3
        assert header["rules"] == server.rules.to_dict()
        assert header["rules"]["stake_total"] == 4 and header["rules"]["hand_limit"] == 2
        assert header["time_control"] == server.time_control.to_json()
        assert header["sandbox"]["limits"] == server.sandbox_limits.to_json()
        assert header["sandbox"]["level"] == server.sandbox_level  # not the league's "none"
    assert len({header["seed"] for header in headers}) == 1  # one deal, every rotation


def test_what_the_server_could_not_play_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "cup.toml").write_text(COMPETITION.replace("players = 3", "players = 4"))
    (tmp_path / "mine.toml").write_text(LEAGUE)
    code, _out, err = newmarket(
        "league", str(tmp_path / "mine.toml"), "--competition", str(tmp_path / "cup.toml")
    )
    assert code == 2
    assert err.strip().endswith("cup.toml seats 4 bots a table; the league has 3"), err
    code, _out, err = newmarket(
        "league",
        str(tmp_path / "mine.toml"),
        "--competition",
        str(tmp_path / "cup.toml"),
        "--sandbox",
        "none",
    )
    assert code == 2 and "--sandbox and --competition" in err
    (tmp_path / "bad.toml").write_text("[competition]\nname = 1\n")
    code, _out, err = newmarket(
        "league", str(tmp_path / "mine.toml"), "--competition", str(tmp_path / "bad.toml")
    )
    assert code == 2 and "bad.toml: competition.name" in err and len(err.splitlines()) == 1
