"""Server-rendered charts: the geometry of a horizontal bar chart, drawn by a template as SVG.

Only numbers are computed here; labels are passed through as text and the template escapes
them, so a chart can show ticket or document words safely.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Pixel sizes of a chart; the SVG scales with its viewBox.
WIDTH = 560
LABEL_WIDTH = 190
VALUE_WIDTH = 60
BAR_HEIGHT = 20
GAP = 6


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float
    display: str
    y: int
    width: float
    key: str


@dataclass(frozen=True, slots=True)
class BarChart:
    title: str
    bars: tuple[Bar, ...]
    width: int
    height: int
    label_width: int
    plot_width: int

    @property
    def empty(self) -> bool:
        return not self.bars


def _display(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def bar_chart(
    title: str,
    items: Sequence[tuple[str, float]],
    *,
    keys: Sequence[str] | None = None,
    limit: int = 15,
) -> BarChart:
    """Bars proportional to the largest value; negative values are drawn as zero-width."""
    shown = list(items)[:limit]
    plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    top = max((v for _, v in shown), default=0.0)
    bars = tuple(
        Bar(
            label=label,
            value=value,
            display=_display(value),
            y=i * (BAR_HEIGHT + GAP),
            width=round(plot * max(value, 0.0) / top, 1) if top > 0 else 0.0,
            key=keys[i] if keys is not None and i < len(keys) else "",
        )
        for i, (label, value) in enumerate(shown)
    )
    height = max(len(bars) * (BAR_HEIGHT + GAP) - GAP, BAR_HEIGHT)
    return BarChart(title, bars, WIDTH, height, LABEL_WIDTH, plot)
