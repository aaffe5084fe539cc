"""The ratings over the course of the league, as an inline SVG (a template; no script, no library).

One line per bot: its rating (``mu - 3 sigma``, the standings' sort key)
after each match of the league, in schedule order, starting from the prior.
Each line ends in a labelled dot; hovering a line shows the bot's name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from markupsafe import Markup

from referee.report.templating import render
from referee.scoring.ratings import MU, SIGMA, Rating, Z

# Colours that stay apart for the first few bots; later bots reuse them.
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)

WIDTH, HEIGHT = 760, 320
LEFT, RIGHT, TOP, BOTTOM = 48, 150, 16, 36


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclasses.dataclass(frozen=True)
class _Scale:
    """Where a chart draws: step 0 to ``steps`` across the plot, ``low`` to ``high`` up it."""

    plot_w: float
    plot_h: float
    steps: int
    low: float
    high: float

    def x(self, step: int) -> float:
        return LEFT + self.plot_w * step / self.steps

    def y(self, value: float) -> float:
        return TOP + self.plot_h * (self.high - value) / (self.high - self.low)


def rating_chart(names: Sequence[str], history: Sequence[dict[str, Rating]]) -> Markup:
    """The SVG; ``history[i]`` is every bot's rating after match i."""
    prior = MU - Z * SIGMA
    series = {name: [prior] + [step[name].conservative for step in history] for name in names}
    values = [value for line in series.values() for value in line]
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    scale = _Scale(plot_w, plot_h, max(1, len(history)), low, high)
    ticks = []
    for tick in range(5):
        value = low + (high - low) * tick / 4
        ticks.append(
            {
                "y": f"{scale.y(value):.1f}",
                "label_y": f"{scale.y(value) + 4:.1f}",
                "label": f"{value:.1f}",
                "cls": "grid",
            }
        )
    lines = [_rating_line(scale, index, name, series[name]) for index, name in enumerate(names)]
    ends = [(scale.y(series[name][-1]), index, name) for index, name in enumerate(names)]
    return render(
        "rating_chart.svg",
        **_frame(plot_w, HEIGHT, ticks, f"matches played (0 to {len(history)})"),
        lines=lines,
        ends=_end_labels(scale, ends),
    )


def _rating_line(scale: _Scale, index: int, name: str, line: list[float]) -> dict[str, str]:
    """One bot's ratings as a polyline, in its colour, titled with its last rating."""
    return {
        "name": name,
        "points": " ".join(
            f"{scale.x(step):.1f},{scale.y(value):.1f}" for step, value in enumerate(line)
        ),
        "colour": colour(index),
        "title": f"{name}: {line[-1]:.2f}",
    }


def _end_labels(scale: _Scale, ends: list[tuple[float, int, str]]) -> list[dict[str, str]]:
    """Each line's end dot and name, at the right, pushed apart so close ratings stay readable.

    ``ends`` are ``(y of the line's end, bot index, name)``.
    """
    labels = []
    last = -1e9
    for end_y, index, name in sorted(ends):
        label_y = max(end_y, last + 13)
        last = label_y
        labels.append(
            {
                "x": f"{scale.x(scale.steps):.1f}",
                "y": f"{end_y:.1f}",
                "colour": colour(index),
                "label_x": f"{scale.x(scale.steps) + 8:.1f}",
                "label_y": f"{label_y + 4:.1f}",
                "label": name if len(name) <= 20 else name[:19] + "…",
            }
        )
    return labels


def _frame(
    plot_w: float, height: int, ticks: list[dict[str, str]], axis_label: str
) -> dict[str, object]:
    """What every chart draws alike (``chart_frame.svg``): its size, the grid, the x axis's label.

    ``ticks`` are the grid lines: ``y`` and ``label_y`` (SVG units), ``label`` and ``cls``.
    """
    return {
        "width": WIDTH,
        "height": height,
        "left": LEFT,
        "right": LEFT + plot_w,
        "ticks": ticks,
        "axis_x": LEFT + plot_w / 2,
        "axis_y": height - 6,
        "axis_label": axis_label,
    }


def _nice_step(span: int) -> int:
    """A step of 1, 2 or 5 times a power of ten that cuts ``span`` into about four parts."""
    rough = max(1.0, span / 4)
    power = 10 ** math.floor(math.log10(rough))
    return int(next(m * power for m in (1, 2, 5, 10) if m * power >= rough))


PLACE_COLOURS = {1: "#2ca02c", 2: "#1f77b4"}  # first and second stand out; the rest are grey
RESULTS_HEIGHT = 220


def results_chart(results: Sequence[tuple[str, int, int, int]]) -> Markup:
    """One bot's results over the league: its running net chips, a dot per match.

    ``results`` is ``(match id, place, players at the table, net chips)`` in
    schedule order.  The line is the bot's total net chips after each match;
    each dot is coloured by the place it took (hover: the match, the place and
    the chips), so a reader sees at a glance whether it won steadily or by luck.
    """
    totals = [0]
    for _, _, _, net in results:
        totals.append(totals[-1] + net)
    step = _nice_step(max(totals) - min(totals))
    low = math.floor(min(totals) / step) * step
    high = math.ceil(max(totals) / step) * step
    if high == low:
        high = low + step
    height = RESULTS_HEIGHT
    right = 24
    plot_w, plot_h = WIDTH - LEFT - right, height - TOP - BOTTOM
    scale = _Scale(plot_w, plot_h, max(1, len(results)), low, high)
    ticks = [
        {
            "y": f"{scale.y(value):.1f}",
            "label_y": f"{scale.y(value) + 4:.1f}",
            "label": f"{value:+d}" if value else "0",
            "cls": "grid zero" if value == 0 else "grid",
        }
        for value in range(low, high + 1, step)
    ]
    return render(
        "results_chart.svg",
        **_frame(
            plot_w,
            height,
            ticks,
            f"its matches in league order (0 to {len(results)}); net chips so far",
        ),
        points=" ".join(
            f"{scale.x(number):.1f},{scale.y(value):.1f}" for number, value in enumerate(totals)
        ),
        dots=_result_dots(scale, results, totals),
    )


def _result_dots(
    scale: _Scale, results: Sequence[tuple[str, int, int, int]], totals: list[int]
) -> list[dict[str, object]]:
    """A dot per match on the running total, coloured by the place the bot took."""
    return [
        {
            "x": f"{scale.x(number):.1f}",
            "y": f"{scale.y(totals[number]):.1f}",
            "colour": PLACE_COLOURS.get(place, "#999"),
            "place": place,
            "title": f"{match_id}: place {place} of {players}, {net:+d} chips",
        }
        for number, (match_id, place, players, net) in enumerate(results, start=1)
    ]
