"""The ratings over the course of the league, as an inline SVG drawn here (no script, no library).

One line per bot: its rating (``mu - 3 sigma``, the standings' sort key)
after each match of the league, in schedule order, starting from the prior.
Each line ends in a labelled dot; hovering a line shows the bot's name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from referee.league.ratings import MU, SIGMA, Rating, Z
from referee.report.html import Markup, el

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


def rating_chart(names: Sequence[str], history: Sequence[dict[str, Rating]]) -> Markup:
    """The SVG; ``history[i]`` is every bot's rating after match i."""
    prior = MU - Z * SIGMA
    series = {name: [prior] + [step[name].conservative for step in history] for name in names}
    values = [value for line in series.values() for value in line]
    low, high = min(values), max(values)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    steps = max(1, len(history))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(step: int) -> float:
        return LEFT + plot_w * step / steps

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    parts: list[Markup] = []
    for tick in range(5):
        value = low + (high - low) * tick / 4
        parts.append(
            el(
                "line",
                {
                    "x1": LEFT,
                    "x2": LEFT + plot_w,
                    "y1": f"{y(value):.1f}",
                    "y2": f"{y(value):.1f}",
                    "class": "grid",
                },
            )
        )
        parts.append(
            el(
                "text",
                {"x": LEFT - 6, "y": f"{y(value) + 4:.1f}", "class": "tick", "text-anchor": "end"},
                f"{value:.1f}",
            )
        )
    parts.append(
        el(
            "text",
            {"x": LEFT + plot_w / 2, "y": HEIGHT - 6, "class": "tick", "text-anchor": "middle"},
            f"matches played (0 to {len(history)})",
        )
    )
    ends: list[tuple[float, int, str]] = []
    for index, name in enumerate(names):
        line = series[name]
        points = " ".join(f"{x(step):.1f},{y(value):.1f}" for step, value in enumerate(line))
        parts.append(
            el(
                "polyline",
                {
                    "points": points,
                    "fill": "none",
                    "stroke": colour(index),
                    "stroke-width": 2,
                    "class": "series",
                    "data-bot": name,
                },
                el("title", None, f"{name}: {line[-1]:.2f}"),
            )
        )
        ends.append((y(line[-1]), index, name))
    # Labels at the right, pushed apart so that close ratings stay readable.
    last = -1e9
    for end_y, index, name in sorted(ends):
        label_y = max(end_y, last + 13)
        last = label_y
        parts.append(
            el(
                "circle",
                {"cx": f"{x(steps):.1f}", "cy": f"{end_y:.1f}", "r": 3, "fill": colour(index)},
            )
        )
        short = name if len(name) <= 20 else name[:19] + "…"
        parts.append(
            el(
                "text",
                {
                    "x": f"{x(steps) + 8:.1f}",
                    "y": f"{label_y + 4:.1f}",
                    "class": "label",
                    "fill": colour(index),
                },
                short,
            )
        )
    return el(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {WIDTH} {HEIGHT}",
            "class": "chart",
            "role": "img",
            "aria-label": "ratings over the league",
        },
        parts,
    )


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
    steps = max(1, len(results))
    height = RESULTS_HEIGHT
    right = 24
    plot_w, plot_h = WIDTH - LEFT - right, height - TOP - BOTTOM

    def x(step: int) -> float:
        return LEFT + plot_w * step / steps

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    parts: list[Markup] = []
    for value in range(low, high + 1, step):
        parts.append(
            el(
                "line",
                {
                    "x1": LEFT,
                    "x2": LEFT + plot_w,
                    "y1": f"{y(value):.1f}",
                    "y2": f"{y(value):.1f}",
                    "class": "grid zero" if value == 0 else "grid",
                },
            )
        )
        parts.append(
            el(
                "text",
                {"x": LEFT - 6, "y": f"{y(value) + 4:.1f}", "class": "tick", "text-anchor": "end"},
                f"{value:+d}" if value else "0",
            )
        )
    parts.append(
        el(
            "text",
            {"x": LEFT + plot_w / 2, "y": height - 6, "class": "tick", "text-anchor": "middle"},
            f"its matches in league order (0 to {len(results)}); net chips so far",
        )
    )
    points = " ".join(f"{x(step):.1f},{y(value):.1f}" for step, value in enumerate(totals))
    parts.append(
        el("polyline", {"points": points, "fill": "none", "stroke": "#555", "stroke-width": 2})
    )
    for step, (match_id, place, players, net) in enumerate(results, start=1):
        parts.append(
            el(
                "circle",
                {
                    "cx": f"{x(step):.1f}",
                    "cy": f"{y(totals[step]):.1f}",
                    "r": 4,
                    "fill": PLACE_COLOURS.get(place, "#999"),
                    "class": f"result place-{place}",
                },
                el("title", None, f"{match_id}: place {place} of {players}, {net:+d} chips"),
            )
        )
    return el(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {WIDTH} {height}",
            "class": "chart results",
            "role": "img",
            "aria-label": "net chips over the league, a dot per match coloured by place",
        },
        parts,
    )
