"""A bot's results plot: a dot per match where its running net chips are, on round ticks."""

from __future__ import annotations

import re

from referee.report.chart import results_chart


def test_the_results_plot_has_a_dot_per_match_and_round_ticks() -> None:
    results = [("m1", 1, 4, 30), ("m2", 3, 4, -50), ("m3", 2, 4, -96), ("m4", 1, 4, 12)]
    svg = str(results_chart(results))
    titles = re.findall(r"<title>(.*?)</title>", svg)
    assert titles == [
        "m1: place 1 of 4, +30 chips",
        "m2: place 3 of 4, -50 chips",
        "m3: place 2 of 4, -96 chips",
        "m4: place 1 of 4, +12 chips",
    ]
    assert svg.count('class="result place-1"') == 2  # first places stand out
    ticks = re.findall(r'class="tick" text-anchor="end">([^<]*)<', svg)
    assert ticks == ["-150", "-100", "-50", "0", "+50"]  # the totals run from -116 to +30
