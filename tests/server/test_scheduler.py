"""The scheduling rule and the score behind it, without a server."""

from __future__ import annotations

import random
from collections import Counter

from referee.server.scheduler import Candidate, choose_table
from referee.server.scoring import Score


def score(version: int, value: float | None, width: float | None, groups: int = 10) -> Score:
    low = None if value is None or width is None else value - width / 2
    high = None if value is None or width is None else value + width / 2
    return Score(version, groups, groups * 3, value, low, high, 1, None, None)


def test_a_new_version_is_the_focus_of_the_next_tables() -> None:
    candidates = [Candidate(v, v) for v in range(1, 6)]
    scores = {v: score(v, float(v), 2.0) for v in range(1, 5)}  # 5 is new
    rng = random.Random(1)
    for _ in range(5):
        choice = choose_table(candidates, scores, [], 3, 1.0, rng)
        assert choice is not None and choice.versions[0] == 5 and "new version" in choice.why


def test_the_widest_interval_is_the_focus_and_close_neighbours_meet_most() -> None:
    candidates = [Candidate(v, v) for v in range(1, 9)]
    scores = {v: score(v, float(v * 10), 4.0) for v in range(1, 9)}
    scores[4] = score(4, 40.0, 12.0)  # the most uncertain
    rng = random.Random(2)
    met: Counter[int] = Counter()
    for _ in range(200):
        choice = choose_table(candidates, scores, [], 3, 1.0, rng)
        assert choice is not None and choice.versions[0] == 4
        met.update(choice.versions[1:])
    assert met[3] + met[5] > met[1] + met[8]  # neighbours on the board, not far ends
    assert met[3] > 50 and met[5] > 50


def test_a_participant_over_its_share_waits_while_others_can_play() -> None:
    candidates = [Candidate(v, v) for v in range(1, 5)] + [Candidate(99, 0, house=True)]
    scores = {v: score(v, 0.0, 1.0) for v in range(1, 5)}
    scores[1] = score(1, 0.0, 9.0)  # would be the focus
    recent = [1] * 10 + [2, 3, 4, 0] * 2  # participant 1 held more than half the seats
    choice = choose_table(candidates, scores, recent, 3, 0.4, random.Random(3))
    assert choice is not None and 1 not in choice.versions


def test_too_few_versions_play_no_table() -> None:
    assert choose_table([Candidate(1, 1), Candidate(2, 2)], {}, [], 3, 1.0, random.Random()) is None


def test_the_remote_table_focuses_on_a_connected_remote_version() -> None:
    candidates = [Candidate(v, v) for v in range(1, 7)]
    scores = {v: score(v, float(v), 2.0) for v in range(1, 7)}
    scores[1] = score(1, 1.0, 20.0)  # the widest, but not remote
    rng = random.Random(4)
    for _ in range(20):
        choice = choose_table(candidates, scores, [], 3, 1.0, rng, focus_from={5, 6})
        assert choice is not None and choice.versions[0] in (5, 6)
        assert len(set(choice.versions)) == 3
    assert choose_table(candidates, scores, [], 3, 1.0, rng, focus_from=set()) is None
