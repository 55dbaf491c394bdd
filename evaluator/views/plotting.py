"""matplotlib, set up once so that the same figure gives the same SVG bytes on every run.

- matplotlib is imported lazily (only export, audit --public and compare draw), through the
  object-oriented `Figure` API: no pyplot, no global figure state, no GUI backend.
- Every rc setting that reaches the SVG is fixed here, not read from the user's matplotlibrc:
  `svg.hashsalt` (the ids of clip paths and markers are hashes of this salt and their content, a
  random UUID otherwise), `svg.fonttype = "none"` (text stays text: no glyph outlines, which depend
  on the installed fonts), DejaVu Sans (shipped inside matplotlib, so the layout metrics are the
  same everywhere), and no metadata at all (no date, no creator line).
- Element ids are prefixed with the figure's name, so several figures can be inlined into one
  HTML page without two elements sharing an id.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

RC = {
    "svg.hashsalt": "graph-retrieval-lab",
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "legend.fontsize": 8.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "path.simplify": False,
}
NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}
CONFIRMATORY = "#c0392b"
EXPLORATORY = "#2c3e50"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def figure(build: Callable, width: float, height: float, *, left: float = 0.6, bottom: float = 0.55,
           top: float = 0.45, right: float = 0.25, wspace: float = 0.25, hspace: float = 0.5):
    """A matplotlib Figure of the given size drawn by `build(fig)` under the fixed settings.

    Margins are given in inches (`left` wide enough for the longest tick label: see `label_width`)
    rather than found by a layout engine: constrained layout draws every figure twice more to
    measure it, and the margins of these figures are known from their labels.
    """
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(width, height))
        fig.subplots_adjust(left=left / width, right=1.0 - right / width, bottom=bottom / height,
                            top=1.0 - top / height, wspace=wspace, hspace=hspace)
        build(fig)
    return fig


def label_width(labels, size: float = 8.0) -> float:
    """Inches a column of tick labels needs (DejaVu Sans averages about 0.6 em per character)."""
    return 0.15 + max((len(str(t)) for t in labels), default=0) * size * 0.6 / 72.0


def plain_log_axis(axis) -> None:
    """Log scale with tick labels written as plain numbers (1, 10, 100), not as powers."""
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    axis.set_major_locator(LogLocator(base=10.0, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(StrMethodFormatter("{x:g}"))
    axis.set_minor_formatter(NullFormatter())


def svg(fig, name: str) -> str:
    """The figure as an SVG document (no XML declaration or doctype: ready to inline or to save)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({**RC, "svg.hashsalt": f"graph-retrieval-lab-{name}"}):
        fig.savefig(buffer, format="svg", metadata=NO_METADATA)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    return _prefix_ids(text, f"{name}-")


_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(xlink:href="#|href="#|url\(#)([^")]+)')


def _prefix_ids(text: str, prefix: str) -> str:
    text = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', text)
    return _REF.sub(lambda m: f"{m.group(1)}{prefix}{m.group(2)}", text)


def standalone(svg_text: str) -> str:
    """An SVG file's bytes: the XML declaration, then the same SVG the HTML inlines."""
    return '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + svg_text


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# Edition 1 (evaluator/views/edition.py): up to 24 methods each with its own colour and marker
# pair, so a legend entry names one series even past the twelve colours
DISTINCT = PALETTE + ("#393b79", "#8c6d31")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
HATCHES = ("", "////", "....", "xxxx")


def series_style(i: int) -> tuple[str, str, str]:
    """(colour, marker, hatch) of the i-th series: the colour cycles every 12, the marker shifts by
    one each cycle, so the first 144 pairs differ; the hatch tells bars of one colour apart."""
    cycle = i // len(DISTINCT)
    return DISTINCT[i % len(DISTINCT)], MARKERS[(i + cycle) % len(MARKERS)], HATCHES[cycle % len(HATCHES)]


def free_spots(ax, points, labels, size: float, marker_points: float = 6.0) -> list[tuple[float, float] | None]:
    """An offset in points for each label beside its point that overlaps no other label and no
    other point (the first free one of a fixed list of candidates, tried in order), or None when
    none is free: then the label is left out and the legend alone names the point. Sizes are
    estimated from the font (DejaVu Sans: about 0.6 em a character), in points."""
    to_points = 72.0 / ax.figure.dpi
    at = [tuple(v * to_points for v in ax.transData.transform(p)) for p in points]
    half = marker_points / 2
    taken = [(x - half, y - half, x + half, y + half) for x, y in at]
    out = []
    for i, ((x, y), text) in enumerate(zip(at, labels)):
        width, height = len(text) * size * 0.6, size
        found = None
        for dx, dy in ((4, 3), (4, -3 - height), (-4 - width, 3), (-4 - width, -3 - height), (4, 8), (-width / 2, 6),
                       (-width / 2, -6 - height), (10, -height / 2), (-10 - width, -height / 2), (4, 14)):
            box = (x + dx, y + dy, x + dx + width, y + dy + height)
            if not any(_overlap(box, other) for j, other in enumerate(taken) if j != i):
                found = (dx, dy)
                taken.append(box)
                break
        out.append(found)
    return out


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def empty(fig, message: str) -> None:
    """A figure that says why it has nothing to show (a report without contrasts, say)."""
    ax = fig.subplots()
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center")
