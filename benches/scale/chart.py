"""Line charts as standalone SVG, for RESULTS.md's side-by-side plots of the
original's published figures and ours (the loadgen's own `--plot` draws each
run alone). No dependencies: the figures are a handful of points.

`line_chart(path, title, x_label, y_label, series, refs)`: `series` is a list
of `Series`; hollow markers are points not judgeable; `refs` are horizontal
reference lines `(y, label)` such as the 50 ms tick; the legend sits in the
upper left corner, or the lower left with `legend_at="bottom"`.
"""

import math
from dataclasses import dataclass, field
from html import escape

WIDTH, HEIGHT = 900, 520
LEFT, RIGHT, TOP, BOTTOM = 70, 30, 50, 60


@dataclass
class Series:
    """One line: label, colour (CSS), points (x, y, judgeable); dashed for the original's figures."""

    label: str
    color: str
    points: list = field(default_factory=list)
    dashed: bool = False


def nice_step(span, ticks=6):
    """A 1/2/5 x 10^k step giving about `ticks` intervals over `span`."""
    raw = span / ticks if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def fmt(v):
    return f"{v:,.0f}" if abs(v) >= 10 or v == 0 else f"{v:g}"


def line_chart(path, title, x_label, y_label, series, refs=(), legend_at="top"):
    pts = [p for s in series for p in s.points]
    if not pts:
        return False
    x_max = max(p[0] for p in pts)
    y_max = max([p[1] for p in pts] + [r[0] for r in refs]) * 1.1
    xs, ys = nice_step(x_max), nice_step(y_max)
    x_max, y_max = math.ceil(x_max / xs) * xs, math.ceil(y_max / ys) * ys
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def X(x):
        return LEFT + pw * x / x_max

    def Y(y):
        return TOP + ph * (1 - y / y_max)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="13">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="28" text-anchor="middle" font-size="18">{escape(title)}</text>']
    for i in range(int(round(x_max / xs)) + 1):
        x = i * xs
        out.append(f'<line x1="{X(x):.1f}" y1="{TOP}" x2="{X(x):.1f}" y2="{TOP + ph}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{X(x):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{fmt(x)}</text>')
    for i in range(int(round(y_max / ys)) + 1):
        y = i * ys
        out.append(f'<line x1="{LEFT}" y1="{Y(y):.1f}" x2="{LEFT + pw}" y2="{Y(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 8}" y="{Y(y) + 4:.1f}" text-anchor="end">{fmt(y)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{HEIGHT - 15}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(18 {TOP + ph / 2}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>')
    legend = []
    for y, label in refs:
        out.append(f'<line x1="{LEFT}" y1="{Y(y):.1f}" x2="{LEFT + pw}" y2="{Y(y):.1f}" stroke="#666" stroke-width="1.5" stroke-dasharray="2 3"/>')
        legend.append((label, "#666", "2 3", False))
    for s in series:
        if not s.points:
            continue
        dash = "6 4" if s.dashed else "none"
        path_d = " ".join(f"{'M' if i == 0 else 'L'}{X(x):.1f},{Y(y):.1f}" for i, (x, y, _) in enumerate(sorted(s.points)))
        out.append(f'<path d="{path_d}" fill="none" stroke="{s.color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        for x, y, ok in s.points:
            fill = s.color if ok else "white"
            out.append(f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="4.5" fill="{fill}" stroke="{s.color}" stroke-width="1.8"/>')
        legend.append((s.label, s.color, dash, True))
    legend.append(("hollow marker: not judgeable", "#666", "none", None))
    for i, (label, color, dash, marker) in enumerate(legend):
        ly = TOP + 18 + i * 19 if legend_at == "top" else TOP + ph - 14 - (len(legend) - 1 - i) * 19
        if marker is not None:
            out.append(f'<line x1="{LEFT + 12}" y1="{ly}" x2="{LEFT + 40}" y2="{ly}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/>')
        if marker:
            out.append(f'<circle cx="{LEFT + 26}" cy="{ly}" r="4" fill="{color}"/>')
        if marker is None:
            out.append(f'<circle cx="{LEFT + 26}" cy="{ly}" r="4" fill="white" stroke="{color}" stroke-width="1.8"/>')
        out.append(f'<text x="{LEFT + 48}" y="{ly + 4}">{escape(label)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True
