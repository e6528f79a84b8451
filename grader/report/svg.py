"""Inline SVG plots for the class report, written by hand: pure functions from numbers to markup.

Why by hand rather than a plotting library: the report's plots are bars and dots on linear axes;
written directly they come to a few kilobytes each, are the same bytes on every run, keep their
text as text (searchable, selectable, sharp in print, read by screen readers), and cost no
dependency and no import time. Each plot is accessible the same way: ``role="img"`` with a
``<title>`` and a ``<desc>`` that says what it shows in words, labelled axes, the value of every
bar written beside it (colour is never the only carrier of a number), and the same numbers in a
table next to it. Colours are the Okabe-Ito palette, distinguishable with the common colour
vision deficiencies, and dark enough to print.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from grader.records import record

WIDTH = 720
FONT = 12
CHAR = 6.6            # average advance of a 12 px sans-serif character, for fitting labels
INK, GRID, BAR = "#222", "#ccc", "#0072B2"


@record
class Segment:
    key: str
    value: float
    colour: str


def figure(plot_id: str, title: str, description: str, body: str, height: float, caption: str = "") -> str:
    """An ``<svg>`` of ``WIDTH`` by ``height`` around ``body``, inside a ``<figure>``."""
    t, d = f"{plot_id}-title", f"{plot_id}-desc"
    return (f'<figure class="plot" id="{plot_id}">'
            f'<svg role="img" aria-labelledby="{t} {d}" viewBox="0 0 {WIDTH} {_n(height)}" '
            f'width="{WIDTH}" height="{_n(height)}" font-family="sans-serif" font-size="{FONT}">'
            f'<title id="{t}">{escape(title)}</title><desc id="{d}">{escape(description)}</desc>'
            f"{body}</svg>"
            + (f"<figcaption>{escape(caption)}</figcaption>" if caption else "")
            + "</figure>")


def histogram(plot_id: str, title: str, description: str, bins: Sequence[tuple[str, int]],
              x_label: str, y_label: str = "submissions", caption: str = "") -> str:
    """Vertical bars, one per ``(label, count)``, the count above each."""
    left, right, top, bottom = 56, 16, 16, 48
    height = 260
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    peak = max((count for _, count in bins), default=0) or 1
    step = _nice_step(peak)
    ceiling = step * -(-peak // step)
    slot = plot_w / max(len(bins), 1)
    out = [_y_axis(left, top, plot_w, plot_h, ceiling, step, y_label)]
    for i, (label, count) in enumerate(bins):
        h = plot_h * count / ceiling
        x = left + i * slot
        out.append(f'<rect x="{_n(x + 2)}" y="{_n(top + plot_h - h)}" width="{_n(slot - 4)}" height="{_n(h)}" '
                   f'fill="{BAR}"><title>{escape(label)}: {count}</title></rect>')
        out.append(f'<text x="{_n(x + slot / 2)}" y="{_n(top + plot_h - h - 4)}" text-anchor="middle">{count}</text>')
        out.append(f'<text x="{_n(x + slot / 2)}" y="{_n(top + plot_h + 16)}" text-anchor="middle" '
                   f'font-size="{FONT - 2}">{escape(label)}</text>')
    out.append(f'<text x="{_n(left + plot_w / 2)}" y="{height - 8}" text-anchor="middle" fill="{INK}">'
               f"{escape(x_label)}</text>")
    return figure(plot_id, title, description, "".join(out), height, caption)


def horizontal_bars(plot_id: str, title: str, description: str, bars: Sequence[tuple[str, float, str]],
                    x_label: str, maximum: float | None = None, caption: str = "", label_above: bool = False) -> str:
    """One bar per ``(label, value, text written after the bar)``. ``label_above``: each label above
    its bar, whole, on as many lines as it needs (long labels), else in a column to the left (short
    ones, cut to fit with the whole in a tooltip). The texts after the bars get at most a third of
    the width, so the bars always keep most of it."""
    label_w = 0 if label_above else min(260, max((len(label) for label, _, _ in bars), default=0) * CHAR + 8)
    right = min(16 + max((len(text) for _, _, text in bars), default=0) * CHAR, WIDTH / 3)
    left, top, line = 8 + label_w, 8, FONT + 3
    plot_w = WIDTH - left - right
    labels = [_wrapped(label, WIDTH - 16) if label_above else [_fit(label, label_w - 8)] for label, _, _ in bars]
    heights = [line * len(lines) + 20 if label_above else 20 for lines in labels]
    height = top + sum(heights) + 40
    peak = maximum if maximum else max((value for _, value, _ in bars), default=0) or 1
    out = []
    y = top
    for (label, value, text), lines, row in zip(bars, labels, heights):
        bar_y = y + (line * len(lines) + 4 if label_above else 2)
        w = plot_w * max(value, 0) / peak
        tip = f"<title>{escape(label)}</title>" if lines != [label] and not label_above else ""
        if label_above:
            spans = "".join(f'<tspan x="{left}" dy="{0 if k == 0 else line}">{escape(part)}</tspan>'
                            for k, part in enumerate(lines))
            out.append(f'<text x="{left}" y="{_n(y + 12)}">{spans}</text>')
        else:
            out.append(f'<text x="{_n(left - 6)}" y="{_n(bar_y + 11)}" text-anchor="end">'
                       f"{escape(lines[0])}{tip}</text>")
        out.append(f'<rect x="{left}" y="{_n(bar_y)}" width="{_n(w)}" height="14" fill="{BAR}" '
                   f'data-label="{escape(label)}" data-value="{_n(value)}">'
                   f"<title>{escape(label)}: {escape(text)}</title></rect>")
        out.append(f'<text x="{_n(left + w + 4)}" y="{_n(bar_y + 11)}">{escape(_fit(text, right - 8))}</text>')
        y += row
    axis_y = top + sum(heights) + 4
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="{INK}"/>')
    out.append(f'<text x="{left}" y="{axis_y + 14}" font-size="{FONT - 2}">0</text>')
    out.append(f'<text x="{left + plot_w}" y="{axis_y + 14}" text-anchor="end" font-size="{FONT - 2}">'
               f"{escape(_short(peak))}</text>")
    out.append(f'<text x="{_n(left + plot_w / 2)}" y="{axis_y + 30}" text-anchor="middle">{escape(x_label)}</text>')
    return figure(plot_id, title, description, "".join(out), height, caption)


def stacked_bars(plot_id: str, title: str, description: str, bars: Sequence[tuple[str, Sequence[Segment], str]],
                 legend: Sequence[tuple[str, str]], x_label: str, caption: str = "") -> str:
    """One bar per ``(label, segments, text after the bar)``, segments side by side, scaled to the
    bar's total (100%); ``legend``: ``(key, colour)`` in order."""
    label_w = min(300, max((len(label) for label, _, _ in bars), default=0) * CHAR + 8)
    left, right, top, row = 8 + label_w, 56, 28, 18
    plot_w = WIDTH - left - right
    height = top + row * len(bars) + 40
    out = []
    x = left
    for key, colour in legend:
        out.append(f'<rect x="{_n(x)}" y="4" width="12" height="12" fill="{colour}" stroke="{INK}" stroke-width="0.5"/>'
                   f'<text x="{_n(x + 16)}" y="14">{escape(key)}</text>')
        x += 28 + len(key) * CHAR
    for i, (label, segments, text) in enumerate(bars):
        y = top + i * row
        total = sum(segment.value for segment in segments) or 1
        shown = _fit(label, label_w - 8)
        tip = f"<title>{escape(label)}</title>" if shown != label else ""
        out.append(f'<text x="{_n(left - 6)}" y="{_n(y + 11)}" text-anchor="end">{escape(shown)}{tip}</text>')
        x = left
        for segment in segments:
            if segment.value <= 0:
                continue
            w = plot_w * segment.value / total
            out.append(f'<rect x="{_n(x)}" y="{y}" width="{_n(w)}" height="14" fill="{segment.colour}">'
                       f"<title>{escape(label)}: {escape(segment.key)} {_short(segment.value)}</title></rect>")
            x += w
        out.append(f'<text x="{_n(left + plot_w + 4)}" y="{_n(y + 11)}">{escape(text)}</text>')
    axis_y = top + row * len(bars) + 4
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        gx = left + plot_w * fraction
        out.append(f'<line x1="{_n(gx)}" y1="{top - 2}" x2="{_n(gx)}" y2="{axis_y}" stroke="{GRID}" '
                   f'stroke-dasharray="2 3"/>'
                   f'<text x="{_n(gx)}" y="{axis_y + 14}" text-anchor="middle" font-size="{FONT - 2}">'
                   f"{int(fraction * 100)}%</text>")
    out.append(f'<text x="{_n(left + plot_w / 2)}" y="{axis_y + 30}" text-anchor="middle">{escape(x_label)}</text>')
    return figure(plot_id, title, description, "".join(out), height, caption)


def scatter(plot_id: str, title: str, description: str, points: Sequence[tuple[float, float, str, bool]],
            x_label: str, y_label: str, x_range: tuple[float, float], y_range: tuple[float, float],
            guides: Sequence[tuple[str, float, str]] = (), caption: str = "") -> str:
    """Dots at ``(x, y, label, flagged)``; flagged ones are hollow, labelled with their name.
    ``guides``: dashed lines ``("x" or "y", value, label)``."""
    left, right, top, bottom, height = 56, 24, 12, 44, 320
    plot_w, plot_h = WIDTH - left - right, height - top - bottom

    def px(value: float) -> float:
        return left + plot_w * (value - x_range[0]) / (x_range[1] - x_range[0])

    def py(value: float) -> float:
        return top + plot_h * (1 - (value - y_range[0]) / (y_range[1] - y_range[0]))

    out = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="{INK}"/>']
    for axis, value, label in guides:
        if axis == "x":
            out.append(f'<line x1="{_n(px(value))}" y1="{top}" x2="{_n(px(value))}" y2="{top + plot_h}" '
                       f'stroke="{GRID}" stroke-dasharray="4 3"/><text x="{_n(px(value) - 3)}" y="{top + 12}" '
                       f'text-anchor="end" font-size="{FONT - 2}">{escape(label)}</text>')
        else:
            out.append(f'<line x1="{left}" y1="{_n(py(value))}" x2="{left + plot_w}" y2="{_n(py(value))}" '
                       f'stroke="{GRID}" stroke-dasharray="4 3"/><text x="{left + 4}" y="{_n(py(value) - 3)}" '
                       f'font-size="{FONT - 2}">{escape(label)}</text>')
    for fraction in (0, 0.5, 1):
        xv = x_range[0] + (x_range[1] - x_range[0]) * fraction
        yv = y_range[0] + (y_range[1] - y_range[0]) * fraction
        out.append(f'<text x="{_n(px(xv))}" y="{top + plot_h + 14}" text-anchor="middle" font-size="{FONT - 2}">'
                   f'{_short(xv)}</text><text x="{left - 4}" y="{_n(py(yv) + 4)}" text-anchor="end" '
                   f'font-size="{FONT - 2}">{_short(yv)}</text>')
    for x, y, label, flagged in points:
        cx, cy = px(x), py(y)
        fill = "none" if flagged else BAR
        out.append(f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="4" fill="{fill}" stroke="{BAR}" stroke-width="1.5">'
                   f"<title>{escape(label)}: {_short(x)}, {_short(y)}</title></circle>")
    out.append(f'<text x="{_n(left + plot_w / 2)}" y="{height - 8}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(14 {_n(top + plot_h / 2)}) rotate(-90)" text-anchor="middle">'
               f"{escape(y_label)}</text>")
    return figure(plot_id, title, description, "".join(out), height, caption)


def _y_axis(left: float, top: float, plot_w: float, plot_h: float, ceiling: int, step: int, label: str) -> str:
    out = []
    for value in range(0, ceiling + 1, step):
        y = top + plot_h * (1 - value / ceiling)
        out.append(f'<line x1="{left}" y1="{_n(y)}" x2="{left + plot_w}" y2="{_n(y)}" stroke="{GRID}"/>'
                   f'<text x="{left - 6}" y="{_n(y + 4)}" text-anchor="end" font-size="{FONT - 2}">{value}</text>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{_n(top + plot_h)}" stroke="{INK}"/>'
               f'<line x1="{left}" y1="{_n(top + plot_h)}" x2="{left + plot_w}" y2="{_n(top + plot_h)}" '
               f'stroke="{INK}"/>')
    out.append(f'<text transform="translate(14 {_n(top + plot_h / 2)}) rotate(-90)" text-anchor="middle">'
               f"{escape(label)}</text>")
    return "".join(out)


def _nice_step(peak: int) -> int:
    """A step of 1, 2 or 5 times a power of ten giving at most about five grid lines."""
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            if peak / (factor * magnitude) <= 5:
                return factor * magnitude
        magnitude *= 10


def _wrapped(text: str, width: float) -> list[str]:
    """``text`` in lines of at most ``width`` pixels (by the average character width), broken at
    spaces (a word longer than a line is a line of its own); every word kept, each line but the
    last ending in its space, so the lines joined are the text."""
    room = max(int(width / CHAR), 8)
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + len(word) <= room:
            lines[-1] += word + " "
        else:
            lines.append(word + " ")
    lines[-1] = lines[-1][:-1]
    return lines


def _fit(text: str, width: float) -> str:
    """``text`` cut with an ellipsis to fit ``width`` pixels (by the average character width)."""
    room = max(int(width / CHAR), 4)
    return text if len(text) <= room else text[:room - 1].rstrip() + "…"


def _n(value: float) -> str:
    """Coordinates with one decimal: small, and the same bytes on every run."""
    return f"{value:.1f}".removesuffix(".0")


def _short(value: float) -> str:
    return f"{value:.3g}"
