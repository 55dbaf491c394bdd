"""The per-category bar figure drawn beside the category heatmap: for each query category, one bar
per method with the mean of the first contrast metric (the heatmap's first panel as bars, so the
gaps between methods read as lengths). Numbers from `aggregates.categories` of the public report."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.views import plotting
from evaluator.views.edition import edition
from evaluator.views.tables import metric_label

CAPTION = ("Mean of the first contrast metric per query category (groups, with query counts) and method "
           "(bars), from the same numbers as the heatmap.")


def category_bars(public: Mapping):
    methods = public["plan"]["methods"]
    cells = public["aggregates"]["categories"]
    categories = sorted(cells)
    metric = public["evaluation"]["contrast_metrics"][0]
    drawn = edition(public)

    def build(fig):
        ax = fig.subplots(1, 1)
        height = 0.8 / max(len(methods), 1)
        for j, method in enumerate(methods):
            ys = [y - 0.4 + height * (j + 0.5) for y in range(len(categories))]
            values = [cells[c][method][metric] if method in cells[c] else 0.0 for c in categories]
            if drawn:  # edition 1: colour and hatch pairs stay distinct past twelve methods
                colour, _, hatch = plotting.series_style(j)
                ax.barh(ys, values, height=height, color=colour, hatch=hatch, edgecolor="white", linewidth=0,
                        label=method)
            else:
                ax.barh(ys, values, height=height, color=plotting.color(j), label=method)
        ax.set_yticks(range(len(categories)),
                      [f"{c} ({cells[c][methods[0]]['queries']})" if methods[0] in cells[c] else c for c in categories])
        ax.set_ylim(len(categories) - 0.5, -0.5)
        ax.set_xlim(0.0, 1.0)
        ax.set_xlabel(metric_label(metric))
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8.0)

    left = plotting.label_width([f"{c} (000)" for c in categories])
    right = plotting.label_width(methods) + 0.5
    return plotting.figure(build, left + 5.5 + right, 0.11 * len(methods) * len(categories) + 1.0, left=left,
                           right=right, top=0.2, bottom=0.5)
