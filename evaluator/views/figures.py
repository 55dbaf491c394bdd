"""The public report's figures, drawn from the public report alone (docs/reports.md, "Figures").

`public_figures(public)` returns `{name: svg}` in display order; the same SVG text is inlined into
`public.html` and written beside `public.md`. Every figure reads only numbers the public report
holds (the latency distributions read its per-job timings), so a figure can never show a number
the audit did not check.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.derived.depth import CAPTION as RECALL_CURVE_CAPTION
from evaluator.views import contrasts, leaderboard_views, plotting
from evaluator.views.category_bars import CAPTION as CATEGORY_BARS_CAPTION
from evaluator.views.category_bars import category_bars
from evaluator.views.edition import edition
from evaluator.views.tables import metric_label

CAPTIONS = {
    "forest": "Every contrast of the protocol: mean delta and 95% paired-bootstrap interval per metric "
              "(candidate − baseline; the confirmatory contrast filled and red, exploratory ones open).",
    "metric_bars": "Mean of every metric per method, with its 95% bootstrap interval (the protocol's seed "
                   "and resamples).",
    "category_heatmap": "Mean of each contrast metric per query category (rows) and method (columns).",
    "category_bars": CATEGORY_BARS_CAPTION,
    "recall_curve": RECALL_CURVE_CAPTION,
    "latency": "Latency distributions per method over every job (all repetitions): server retrieval time "
               "and client HTTP time, log scale; box = quartiles, whiskers = 5th and 95th percentiles.",
    "work_cuts": "Work and cuts per method: mean graph work counters per query, and the fraction of queries "
                 "with a stop reason, a budget cut or incomplete coverage.",
    leaderboard_views.FIGURE: leaderboard_views.FIGURE_CAPTION,
    "budget_curve": "Rescue protocols: evidence recall and chain coverage of the selected documents at each "
                    "token budget, per method, variant and selection.",
}
WORK_COUNTERS = ("adjacency_examined", "nodes_admitted", "relations_examined")
CUT_FRACTIONS = ("any_stop_fraction", "budget_cut_fraction", "incomplete_coverage_fraction")


def public_figures(public: Mapping) -> dict[str, str]:
    """Every figure of the public report as SVG text, in display order (the budget curve only for
    protocols with the rescue analyses)."""
    stats = public.get("statistics") or {}
    drawn = {
        "forest": contrasts.forest(stats.get("contrasts") or [], lambda c: f"{c['candidate']} − {c['baseline']}",
                                   "Contrasts (candidate − baseline)"),
        "metric_bars": metric_bars(public),
        "category_heatmap": category_heatmap(public),
        "category_bars": category_bars(public),
        "latency": latency(public),
        "work_cuts": work_cuts(public),
    }
    if "recall_curve" in public:  # deep protocols (evaluator/derived/depth.py)
        drawn["recall_curve"] = recall_figure(public)
    if "leaderboard" in public:  # reports of two methods or more (evaluator/numbers/leaderboard.py)
        drawn[leaderboard_views.FIGURE] = leaderboard_views.cost_figure(public["leaderboard"])
    if (public.get("rescue") or {}).get("budget_curve"):
        drawn["budget_curve"] = budget_curve(public["rescue"]["budget_curve"])
    return {name: plotting.svg(fig, name) for name, fig in drawn.items()}


def metric_bars(public: Mapping):
    methods = public["plan"]["methods"]
    means = (public.get("statistics") or {}).get("means") or {}
    metric_names = list(public["aggregates"]["methods"][methods[0]]) if methods else []
    metric_names = [m for m in metric_names if m != "queries"]
    columns = 4
    rows = max(1, -(-len(metric_names) // columns))

    def build(fig):
        axes = fig.subplots(rows, columns, squeeze=False).ravel()
        for index, (ax, metric) in enumerate(zip(axes, metric_names)):
            values = [public["aggregates"]["methods"][m][metric] for m in methods]
            ax.barh(range(len(methods)), values, color=[plotting.color(i) for i in range(len(methods))], height=0.7)
            for y, m in enumerate(methods):
                entry = (means.get(m) or {}).get(metric)
                if entry:
                    low, high = entry["interval"]
                    ax.plot([low, high], [y, y], color="black", linewidth=1.2)
            ax.set_xlim(0.0, 1.0)
            ax.set_title(metric_label(metric))
            ax.set_yticks(range(len(methods)), methods if index % columns == 0 else [])
            ax.set_ylim(len(methods) - 0.5, -0.5)
        for ax in axes[len(metric_names):]:
            ax.set_axis_off()

    left = plotting.label_width(methods)
    return plotting.figure(build, left + 2.3 * columns + 0.3, (0.24 * len(methods) + 0.9) * rows + 0.3, left=left,
                           top=0.35, bottom=0.4, wspace=0.15, hspace=0.45)


# edition 2 draws the heatmap with a row per method (figures.py `_heatmap_by_method`)
CAPTIONS_BY_METHOD = {**CAPTIONS, "category_heatmap": "Mean of each contrast metric per method (rows) and query "
                                                      "category (columns, with its number of queries)."}


def caption(name: str, public: Mapping) -> str:
    return (CAPTIONS_BY_METHOD if edition(public) >= 2 else CAPTIONS)[name]


def _shaded_cells(ax, grid, fontsize: float):
    """A 0-1 grid as shaded cells, each with its value written in it; the mesh, for a colour bar."""
    import numpy as np

    ax.grid(False)
    mesh = ax.pcolormesh(grid, cmap="viridis", vmin=0.0, vmax=1.0, edgecolors="white", linewidth=0.5)
    for (r, c), value in np.ndenumerate(grid):
        if not np.isnan(value):
            ax.text(c + 0.5, r + 0.5, f"{value:.2f}", ha="center", va="center", fontsize=fontsize,
                    color="white" if value < 0.6 else "black")
    return mesh


def category_heatmap(public: Mapping):
    methods = public["plan"]["methods"]
    categories = sorted(public["aggregates"]["categories"])
    metrics = public["evaluation"]["contrast_metrics"]
    if edition(public) >= 2:
        return _heatmap_by_method(public, methods, categories, metrics)

    def build(fig):
        import numpy as np

        axes = fig.subplots(1, len(metrics), squeeze=False)[0]
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            cells = public["aggregates"]["categories"]
            grid = np.array([[cells[c][m][metric] if m in cells[c] else np.nan for m in methods] for c in categories])
            mesh = _shaded_cells(ax, grid, 8.0)
            ax.set_xticks([x + 0.5 for x in range(len(methods))], methods, rotation=60, ha="right")
            ax.set_yticks([y + 0.5 for y in range(len(categories))],
                          [f"{c} ({cells[c][methods[0]]['queries']})" if methods[0] in cells[c] else c for c in categories]
                          if i == 0 else [])
            ax.invert_yaxis()
            ax.set_title(metric_label(metric))
        bar = fig.colorbar(mesh, ax=list(axes), fraction=0.02, pad=0.02)
        bar.solids.set_rasterized(False)  # matplotlib rasterizes long colour bars: keep the page vector-only

    left = plotting.label_width([f"{c} (000)" for c in categories])
    bottom = 0.87 * plotting.label_width(methods) + 0.1
    return plotting.figure(build, left + (0.42 * len(methods) + 0.3) * len(metrics) + 1.0,
                           0.32 * len(categories) + bottom + 0.45, left=left, bottom=bottom, top=0.35, right=0.55,
                           wspace=0.1)


def _heatmap_by_method(public: Mapping, methods: list, categories: list, metrics: list):
    """Edition 2: a row per method and a column per category, one panel per metric side by side, at a
    cell size that reads on screen whether there are 3 methods or 24."""
    cells = public["aggregates"]["categories"]

    def build(fig):
        import numpy as np

        axes = fig.subplots(1, len(metrics), squeeze=False)[0]
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            grid = np.array([[cells[c][m][metric] if m in cells[c] else np.nan for c in categories] for m in methods])
            mesh = _shaded_cells(ax, grid, 9.0)
            ax.set_xticks([x + 0.5 for x in range(len(categories))],
                          [f"{c} ({cells[c][methods[0]]['queries']})" if methods[0] in cells[c] else c
                           for c in categories], rotation=45, ha="right")
            ax.set_yticks([y + 0.5 for y in range(len(methods))], methods if i == 0 else [])
            ax.invert_yaxis()
            ax.set_title(metric_label(metric))
        bar = fig.colorbar(mesh, ax=list(axes), fraction=0.03, pad=0.02)
        bar.solids.set_rasterized(False)

    left = plotting.label_width(methods)
    bottom = 0.75 * plotting.label_width([f"{c} (000)" for c in categories]) + 0.1
    return plotting.figure(build, left + (0.62 * len(categories) + 0.4) * len(metrics) + 1.1,
                           0.3 * len(methods) + bottom + 0.45, left=left, bottom=bottom, top=0.35, right=0.6,
                           wspace=0.08)


def latency(public: Mapping):
    methods = public["plan"]["methods"]
    series: dict[str, dict[str, list[float]]] = {"retrieval (server, ms)": {m: [] for m in methods},
                                                 "HTTP (client, ms)": {m: [] for m in methods}}
    for job in sorted(public["jobs"], key=lambda j: j["order"]):
        series["retrieval (server, ms)"][job["method"]].append(job["retrieval_micros"] / 1000.0)
        series["HTTP (client, ms)"][job["method"]].append(job["http_ms"])

    def build(fig):
        axes = fig.subplots(1, 2, squeeze=False)[0]
        for i, (ax, (title, by_method)) in enumerate(zip(axes, series.items())):
            data = [by_method[m] or [float("nan")] for m in methods]
            ax.boxplot(data, orientation="horizontal", whis=(5, 95), showfliers=True, widths=0.6,
                       flierprops={"marker": ".", "markersize": 2, "alpha": 0.5})
            ax.set_xscale("log")
            plotting.plain_log_axis(ax.xaxis)
            ax.set_yticks(range(1, len(methods) + 1), methods if i == 0 else [])
            ax.set_ylim(len(methods) + 0.5, 0.5)
            ax.set_title(title)

    left = plotting.label_width(methods)
    return plotting.figure(build, left + 2 * 4.0 + 0.5, 0.3 * len(methods) + 1.0, left=left, top=0.35, wspace=0.08)


def work_cuts(public: Mapping):
    methods = public["plan"]["methods"]

    def grouped(ax, names, values_of, title):
        height = 0.8 / len(names)
        for j, name in enumerate(names):
            ys = [y - 0.4 + height * (j + 0.5) for y in range(len(methods))]
            ax.barh(ys, [values_of(m, name) for m in methods], height=height, color=plotting.color(j), label=name)
        ax.set_yticks(range(len(methods)), methods)
        ax.set_ylim(len(methods) - 0.5, -0.5)
        ax.set_title(title)
        ax.legend(loc="lower right")

    def build(fig):
        left, right = fig.subplots(1, 2, squeeze=False)[0]
        grouped(left, WORK_COUNTERS, lambda m, k: public["work"].get(m, {}).get(k, 0.0), "mean work per query")
        grouped(right, CUT_FRACTIONS, lambda m, k: public["cuts"].get(m, {}).get(k, 0.0), "fraction of queries")
        right.set_xlim(0.0, 1.0)
        right.set_yticks(range(len(methods)), [])

    left = plotting.label_width(methods)
    return plotting.figure(build, left + 2 * 4.0 + 0.5, 0.4 * len(methods) + 1.0, left=left, top=0.35, wspace=0.08)


def budget_curve(curve: Mapping):
    methods = [m for m in curve if m != "token_count"]
    variants = list(dict.fromkeys(v for m in methods for v in curve[m]))
    outcomes = ("evidence_recall", "chain_coverage")

    def build(fig):
        axes = fig.subplots(len(outcomes), max(len(variants), 1), squeeze=False)
        for r, outcome in enumerate(outcomes):
            for c, variant in enumerate(variants):
                ax = axes[r][c]
                k = 0
                for method in methods:
                    for selection, by_budget in curve[method].get(variant, {}).items():
                        budgets = sorted(by_budget, key=int)
                        ax.plot([int(b) for b in budgets], [by_budget[b][outcome] for b in budgets], marker="o",
                                markersize=3, color=plotting.color(k), linestyle="-" if selection == "packed" else "--",
                                label=f"{method} / {selection}")
                        k += 1
                ax.set_ylim(0.0, 1.0)
                ax.set_title(f"{outcome.replace('_', ' ')}: {variant.replace('_', ' ')}")
                ax.set_xlabel(f"token budget ({curve.get('token_count')})")
                if r == 0 and c == 0:
                    ax.legend(loc="lower right")

    return plotting.figure(build, 4.6 * max(len(variants), 1) + 0.9, 6.0, top=0.35, bottom=0.6, wspace=0.2,
                           hspace=0.45)


def recall_figure(public: Mapping):
    """The recall-at-k figure of a deeper protocol, drawn from the `recall_curve` block that
    evaluator/derived/depth.py derives (the computation room imports no rendering). From edition 1
    each method's line has its own colour and marker pair, up to 24 methods."""
    curve = public["recall_curve"]
    methods = public["plan"]["methods"]
    primary = public["evaluation"]["primary_contrast"]
    drawn = edition(public)

    def build(fig):
        ax = fig.subplots(1, 1)
        ks = curve["cutoffs"]
        for j, method in enumerate(methods):
            colour, marker, _ = plotting.series_style(j) if drawn else (plotting.color(j), None, "")
            if method in curve["band"]:
                band = curve["band"][method]
                ax.fill_between(ks, band["low"], band["high"], color=colour, alpha=0.2, linewidth=0)
            width = 2.0 if method in (primary["candidate"], primary["baseline"]) else 1.0
            marks = {"marker": marker, "markersize": 4} if drawn else {}
            ax.plot(ks, curve["methods"][method], color=colour, linewidth=width, label=method, **marks)
        ax.set_xscale("log")
        plotting.plain_log_axis(ax.xaxis)
        ax.set_xlim(1, curve["depth"])
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("k (log scale)")
        ax.set_ylabel("recall@k")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8.0)

    right = plotting.label_width(methods) + 0.6
    return plotting.figure(build, 6.5 + right, 4.0, left=0.7, right=right, top=0.25, bottom=0.6)

