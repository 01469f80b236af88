"""Line plots as inline SVG geometry: the template draws what :func:`line_plot` computes.

Only numbers come out of here; labels stay strings for the template to escape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 14, 34


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``low`` … ``high``."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step) * step
    values = []
    value = first
    while value <= high + step * 1e-9:
        values.append(round(value, 10))
        value += step
    if values[-1] < high:
        values.append(round(value, 10))
    return values


def line_plot(series: Sequence[tuple[str, Sequence[tuple[float, float]]]]) -> dict[str, Any] | None:
    """Geometry for one plot with a line per ``(label, points)``; None when there is nothing to draw."""
    drawn = [(label, list(points)) for label, points in series if points]
    if not drawn:
        return None
    xs = [x for _, points in drawn for x, _ in points]
    ys = [y for _, points in drawn for _, y in points]
    x_ticks = ticks(0, max(xs))
    y_ticks = ticks(min(ys), max(ys))
    x0, x1 = x_ticks[0], x_ticks[-1]
    y0, y1 = y_ticks[0], y_ticks[-1]
    inner_w = WIDTH - LEFT - RIGHT
    inner_h = HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return round(LEFT + (x - x0) / (x1 - x0) * inner_w, 1)

    def sy(y: float) -> float:
        return round(TOP + (y1 - y) / (y1 - y0) * inner_h, 1)

    lines = []
    for index, (label, points) in enumerate(drawn):
        last_x, last_y = points[-1]
        lines.append(
            {
                "label": label,
                "color": index % 8,
                "points": " ".join(f"{sx(x)},{sy(y)}" for x, y in points),
                "end": {"x": sx(last_x), "y": sy(last_y), "value": last_y, "games": last_x},
            }
        )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "x_ticks": [{"at": sx(v), "label": f"{v:g}"} for v in x_ticks],
        "y_ticks": [{"at": sy(v), "label": f"{v:g}"} for v in y_ticks],
        "lines": lines,
    }
