"""Tiny inline-SVG charts without dependencies: bars, grouped bars, strip plots, lines.

Every function returns one standalone-valid ``<svg>`` element (with its XML
namespace), usable inline in HTML or saved as a ``.svg`` file. All text passes
through :func:`html.escape`, its bidi controls written out (``[U+202E]``). A value of ``None`` or NaN draws nothing and is
labelled "n/a".
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from lm_eval_contam.core.text import visible_bidi_controls

PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")
HIGHLIGHT = "#C44E52"
GRID = "#E3E3E3"
INK = "#333333"
MAX_POINT_TICKS = 11  # above this many x values a line is drawn without markers and per-point ticks
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 44, 12, 30, 40


@dataclass(frozen=True)
class Series:
    """One named row of values (one per category), with optional ± error half-widths."""

    name: str
    values: tuple[float | None, ...]
    errors: tuple[float | None, ...] | None = None


@dataclass(frozen=True)
class LineSeries:
    name: str
    points: tuple[tuple[float, float], ...]


def _text(value: object) -> str:
    return html.escape(visible_bidi_controls(str(value)), quote=True)


def _missing(value: float | None) -> bool:
    return value is None or math.isnan(value)


def _fmt(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{_text(title)}" font-family="system-ui, sans-serif" font-size="11" fill="{INK}">'
        f"<title>{_text(title)}</title>"
        f'<text x="{width / 2:.1f}" y="16" text-anchor="middle" font-size="12" font-weight="600">{_text(title)}</text>'
        + "".join(body)
        + "</svg>"
    )


def _text_width(text: str, font_size: float = 11) -> float:
    """Rough rendered width of ``text`` (sans-serif averages about 0.6 em per character)."""
    return 0.6 * font_size * len(text)


def _fits_title(width: float, title: str) -> int:
    return int(max(width, _text_width(title, 12) + 24))


def nice_max(values: Sequence[float | None]) -> float:
    """A round upper axis limit covering ``values`` (1 for an empty or all-zero chart)."""
    present = [v for v in values if not _missing(v)]
    top = max(present, default=0.0)
    if top <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(top))
    return next(step * magnitude for step in (1, 2, 2.5, 5, 10) if step * magnitude >= top)


def _y_axis(y_max: float, *, left: float, right: float, plot_top: float, plot_bottom: float,
            label: str | None = None) -> list[str]:
    parts = []
    for tick in range(5):
        value = y_max * tick / 4
        y = plot_bottom - (plot_bottom - plot_top) * tick / 4
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID}"/>')
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{_text(_fmt(value))}</text>')
    parts.append(f'<line x1="{left}" y1="{plot_bottom}" x2="{right}" y2="{plot_bottom}" stroke="{INK}"/>')
    if label:
        middle = (plot_top + plot_bottom) / 2
        parts.append(f'<text x="11" y="{middle:.1f}" text-anchor="middle" transform="rotate(-90 11 {middle:.1f})">'
                     f"{_text(label)}</text>")
    return parts


def _legend(names: Sequence[str], colors: Sequence[str], *, x: float, y: float) -> list[str]:
    parts, offset = [], 0.0
    for name, color in zip(names, colors):
        parts.append(f'<rect x="{x + offset:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + offset + 14:.1f}" y="{y:.1f}">{_text(name)}</text>')
        offset += 24 + 6.5 * len(name)
    return parts


def grouped_bar_chart(categories: Sequence[str], series: Sequence[Series], *, title: str,
                      y_max: float | None = None, y_label: str | None = None, width: int | None = None,
                      height: int = 220, colors: Sequence[Sequence[str]] | None = None) -> str:
    """Bars per category, one per series, each labelled with its value; ``colors[s][c]`` overrides a bar's colour."""
    if any(len(s.values) != len(categories) for s in series):
        raise ValueError("every series needs one value per category")
    values = [v for s in series for v in s.values]
    errors = [(v or 0.0) + (e or 0.0) for s in series for v, e in zip(s.values, s.errors or ()) if not _missing(v)]
    top = y_max if y_max is not None else nice_max(values + errors)
    bar = 26 if len(series) > 1 else 34
    # A category's slot holds its bars and its label.
    slot_width = max([bar * len(series) + 18, *(_text_width(c) + 12 for c in categories)])
    width = _fits_title(width or max(220, MARGIN_LEFT + MARGIN_RIGHT + slot_width * len(categories)), title)
    legend_space = 16 if len(series) > 1 else 0
    left, right = MARGIN_LEFT, width - MARGIN_RIGHT
    plot_top, plot_bottom = MARGIN_TOP + legend_space, height - MARGIN_BOTTOM
    scale = (plot_bottom - plot_top) / top
    parts = _y_axis(top, left=left, right=right, plot_top=plot_top, plot_bottom=plot_bottom, label=y_label)
    slot = (right - left) / max(len(categories), 1)
    for c, category in enumerate(categories):
        start = left + slot * c + (slot - bar * len(series)) / 2
        for s, one in enumerate(series):
            value = one.values[c]
            x = start + bar * s
            centre = x + bar / 2
            if _missing(value):
                parts.append(f'<text x="{centre:.1f}" y="{plot_bottom - 4}" text-anchor="middle">n/a</text>')
                continue
            shown = min(max(value, 0.0), top)
            y = plot_bottom - shown * scale
            color = colors[s][c] if colors else PALETTE[s % len(PALETTE)]
            parts.append(f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{bar - 4}" height="{plot_bottom - y:.1f}" '
                         f'fill="{color}"><title>{_text(f"{one.name} {category}: {_fmt(value)}")}</title></rect>')
            error = one.errors[c] if one.errors else None
            label_y = y - 4
            if not _missing(error) and error:
                low, high = (plot_bottom - min(max(v, 0.0), top) * scale for v in (value - error, value + error))
                parts.append(f'<line x1="{centre:.1f}" y1="{low:.1f}" x2="{centre:.1f}" y2="{high:.1f}" '
                             f'stroke="{INK}"/>')
                label_y = min(label_y, high - 3)
            parts.append(f'<text x="{centre:.1f}" y="{label_y:.1f}" text-anchor="middle" font-size="10">'
                         f"{_text(_fmt(value))}</text>")
        parts.append(f'<text x="{left + slot * (c + 0.5):.1f}" y="{plot_bottom + 15}" text-anchor="middle">'
                     f"{_text(category)}</text>")
    if len(series) > 1:
        parts += _legend([s.name for s in series], PALETTE, x=left, y=MARGIN_TOP + 8)
    return _svg(width, height, title, parts)


def bar_chart(labels: Sequence[str], values: Sequence[float | None], *, title: str, y_max: float | None = None,
              y_label: str | None = None, color: str = PALETTE[0], highlight: Sequence[bool] | None = None,
              height: int = 220) -> str:
    """Vertical bars with their labels and values; highlighted bars are drawn in red."""
    colors = [[HIGHLIGHT if highlight and highlight[i] else color for i in range(len(labels))]]
    return grouped_bar_chart(labels, [Series(title, tuple(values))], title=title, y_max=y_max, y_label=y_label,
                             height=height, colors=colors)


def strip_plot(groups: Sequence[tuple[str, Sequence[float]]], *, title: str, y_max: float = 1.0,
               y_label: str | None = None, height: int = 240) -> str:
    """Per-instance values as dots, one column per group, with the group's mean as a bar across it."""
    width = _fits_title(max(240, MARGIN_LEFT + MARGIN_RIGHT + 150 * len(groups)), title)
    left, right = MARGIN_LEFT, width - MARGIN_RIGHT
    plot_top, plot_bottom = MARGIN_TOP, height - MARGIN_BOTTOM
    scale = (plot_bottom - plot_top) / y_max
    parts = _y_axis(y_max, left=left, right=right, plot_top=plot_top, plot_bottom=plot_bottom, label=y_label)
    slot = (right - left) / max(len(groups), 1)
    for g, (name, values) in enumerate(groups):
        centre = left + slot * (g + 0.5)
        present = [v for v in values if not _missing(v)]
        color = PALETTE[g % len(PALETTE)]
        for i, value in enumerate(present):
            # Deterministic spread so equal values stay visible side by side.
            dx = ((i * 7) % 11 - 5) * 3.2
            y = plot_bottom - min(max(value, 0.0), y_max) * scale
            parts.append(f'<circle cx="{centre + dx:.1f}" cy="{y:.1f}" r="3.5" fill="{color}" fill-opacity="0.6">'
                         f"<title>{_text(f'{name}: {_fmt(value)}')}</title></circle>")
        label = f"{name} (n={len(present)})"
        if present:
            mean = sum(present) / len(present)
            y = plot_bottom - min(max(mean, 0.0), y_max) * scale
            parts.append(f'<line x1="{centre - 26:.1f}" y1="{y:.1f}" x2="{centre + 26:.1f}" y2="{y:.1f}" '
                         f'stroke="{INK}" stroke-width="2"/>')
            parts.append(f'<text x="{centre + 30:.1f}" y="{y + 4:.1f}" font-size="10">mean {_text(_fmt(mean))}</text>')
        parts.append(f'<text x="{centre:.1f}" y="{plot_bottom + 15}" text-anchor="middle">{_text(label)}</text>')
    return _svg(width, height, title, parts)


def line_chart(series: Sequence[LineSeries], *, title: str, x_label: str | None = None,
               y_label: str | None = None, y_max: float | None = None, width: int = 420, height: int = 260) -> str:
    """Lines through points (x, y), one per series, with a legend; x ticks at the distinct x values."""
    width = _fits_title(width, title)
    xs = sorted({x for s in series for x, _ in s.points})
    ys = [y for s in series for _, y in s.points]
    top = y_max if y_max is not None else nice_max(ys)
    legend_space = 16 if len(series) > 1 else 0
    left, right = MARGIN_LEFT + 8, width - MARGIN_RIGHT - 8
    plot_top, plot_bottom = MARGIN_TOP + legend_space, height - MARGIN_BOTTOM - (12 if x_label else 0)
    x_low, x_high = (xs[0], xs[-1]) if xs else (0.0, 1.0)
    span = (x_high - x_low) or 1.0

    def px(x: float) -> float:
        return left + (x - x_low) / span * (right - left) if len(xs) > 1 else (left + right) / 2

    def py(y: float) -> float:
        return plot_bottom - min(max(y, 0.0), top) / top * (plot_bottom - plot_top)

    parts = _y_axis(top, left=left, right=right, plot_top=plot_top, plot_bottom=plot_bottom, label=y_label)
    # Dense curves get ten evenly spaced ticks; sparse ones a tick per point.
    ticks = xs if len(xs) <= MAX_POINT_TICKS else [x_low + span * i / 10 for i in range(11)]
    for x in ticks:
        parts.append(f'<text x="{px(x):.1f}" y="{plot_bottom + 15}" text-anchor="middle">{_text(_fmt(x))}</text>')
    if x_label:
        parts.append(f'<text x="{(left + right) / 2:.1f}" y="{plot_bottom + 32}" text-anchor="middle">'
                     f"{_text(x_label)}</text>")
    for s, one in enumerate(series):
        color = PALETTE[s % len(PALETTE)]
        points = sorted((x, y) for x, y in one.points if not _missing(y))
        if len(points) > 1:
            path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in points if len(points) <= MAX_POINT_TICKS else ():
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{color}">'
                         f"<title>{_text(f'{one.name}: ({_fmt(x)}, {_fmt(y)})')}</title></circle>")
    if len(series) > 1:
        parts += _legend([s.name for s in series], PALETTE, x=left, y=MARGIN_TOP + 8)
    return _svg(width, height, title, parts)
