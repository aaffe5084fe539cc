"""The watch: a version whose real matches fault far more often than its admission check's
is flagged for the organiser (a row and a line in the server's log), once, and only it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

from referee.bots import BotSpec
from referee.match.key import MatchKey
from referee.match.result import FaultRecord, MatchResult
from referee.server import play
from referee.server.failures import binomial_tail, watch_faults
from tests.server.inprocess import finished, open_competition


def test_the_flag_line_is_a_one_sided_binomial_test() -> None:
    # With a three-match check and no fault there, the null rate is 1/5: 8 faulty matches
    # of 12 are below 0.1 %, 7 are not.
    assert binomial_tail(8, 12, 0.2) < 0.001 < binomial_tail(7, 12, 0.2)
    assert binomial_tail(0, 12, 0.2) == pytest.approx(1.0)


async def test_a_version_faulting_in_play_far_above_its_check_is_flagged_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, capsys: pytest.CaptureFixture[str]
) -> None:
    competition = open_competition(tmp_path)
    store = competition.store
    versions = {}
    for name in ("honest", "flaky", "twofaced", "legacy"):
        participant, _token = store.add_participant(name)
        version = store.add_version(participant.id, "python3", "main.py", "", 1)
        store.decide(version.id, "admitted", "ok", "", BotSpec(name, ("x",)).to_json())
        versions[name] = version.id
    clean = [{"match": f"g{90 + r}r{r}", "faults": 0, "first": ""} for r in range(3)]
    for name in ("honest", "twofaced"):
        store.record_check_play(versions[name], clean)
    # flaky faulted once at its check too; legacy was admitted before checks played tables.
    store.record_check_play(versions["flaky"], [*clean[:2], {**clean[2], "faults": 1}])
    faulty_in: dict[int, Callable[[int], bool]] = {
        versions["twofaced"]: lambda n: n % 4 != 0,  # 3 matches of 4
        versions["flaky"]: lambda n: n % 4 == 0,  # 1 of 4, as at its check
        versions["legacy"]: lambda n: True,  # every one: but nothing to compare with
    }
    played = 0

    class Table:
        async def play(self, key: MatchKey, *_args: object) -> MatchResult:
            nonlocal played
            played += 1
            result = finished(key.match_id, key.seed, len(key.bots))
            for seat in result.seats:
                faulty = faulty_in.get(key.bots[seat.seat])
                if faulty is not None and faulty(played):
                    seat.faults = [FaultRecord("illegal", 1, "not a legal card")]
            return result

        async def aclose(self) -> None:
            pass

    for group_number in range(8):
        seating = (
            (versions["honest"], versions["twofaced"], versions["flaky"])
            if group_number % 2
            else (versions["twofaced"], versions["legacy"], versions["honest"])
        )
        group = store.plan_group(group_number, seating, "test")
        await play.play_group(competition, Table(), 1, group, set())

    flags = store.flags()
    assert [flag["version"] for flag in flags] == [versions["twofaced"]]
    (flag,) = flags
    window = competition.config.admission.watch_matches
    faulty = sum(1 for entry in flag["evidence"] if entry["faults"])
    assert flag["detail"] == (
        f"twofaced v1 faulted in {faulty} of its last {window} matches, but in 0 of the 3 "
        "its admission check played as a table"
    )
    assert faulty >= 8 and len(flag["evidence"]) == window
    log = capsys.readouterr().err
    assert log.count("flagged version") == 1
    assert f"newmarket serve: flagged version {versions['twofaced']} for the organiser" in log
    # Flagged once; nothing else happens to it.
    assert watch_faults(competition, [versions["twofaced"]]) == []
    twofaced = store.version(versions["twofaced"])
    assert twofaced is not None and twofaced.status == "admitted"
    store.close()
