"""Paired contrasts, rendered in one place for every output that shows them.

A contrast is what `statistics.contrast` returns (queries, candidate and baseline means, mean
delta, interval, wins/losses/ties) plus `metric` and `label` (confirmatory, exploratory, paired)
and whatever names the two sides. The public report's contrasts (candidate − baseline within one
campaign) and a comparison's (B − A of one method across two campaigns) go through the same table
columns and the same forest plot, so a statistic added to the contrast dict later (a p-value, a
clustered interval, a detectable effect) is added here once: a column in `COLUMNS`, a mark in
`forest`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from evaluator.views import plotting
from evaluator.views.tables import Cell, Table, interval, joined, label, lookup, metric_label, num

# heading, cell(document, path of the contrast, path of the primary unit's numbers); the sides'
# names come first, from the caller
COLUMNS: list[tuple[str, Callable[[Mapping, tuple, tuple], Cell]]] = [
    ("metric", lambda d, p, u: label(metric_label(lookup(d, p)["metric"]))),
    ("label", lambda d, p, u: label(lookup(d, p)["label"])),
    ("queries", lambda d, p, u: num(d, *p, "queries", fmt="d")),
    ("{candidate} mean", lambda d, p, u: num(d, *p, "candidate_mean")),
    ("{baseline} mean", lambda d, p, u: num(d, *p, "baseline_mean")),
    ("delta", lambda d, p, u: num(d, *p, "mean_delta", fmt="+.3f")),
    ("95% interval", lambda d, p, u: interval(d, *p, "interval")),
    ("cluster interval", lambda d, p, u: interval(d, *p, "cluster", "interval")),
    ("p", lambda d, p, u: num(d, *u, "p_value", fmt=".3g")),
    ("p (Holm)", lambda d, p, u: num(d, *u, "p_value_holm", fmt=".3g")),
    ("detectable ±", lambda d, p, u: num(d, *u, "detectable_effect")),
    ("W/L/T", lambda d, p, u: joined(num(d, *p, "wins", fmt="d"), num(d, *p, "losses", fmt="d"),
                                     num(d, *p, "ties", fmt="d"), sep="/")),
]


def table(document: Mapping, path: tuple, sides: Sequence[tuple[str, Callable[[Mapping], str]]], *, id: str,
          title: str, note: str = "", candidate: str = "candidate", baseline: str = "baseline",
          unit: str = "query") -> Table:
    """One row per contrast in `document` at `path`; `sides` are the leading (heading, name-of)
    columns. p, Holm p and the detectable effect are those of `unit` (the protocol's primary
    interval: "query" or "cluster"); a number a contrast does not carry reads n/a."""
    columns = [h for h, _ in sides] + [h.format(candidate=candidate, baseline=baseline) for h, _ in COLUMNS]
    out = Table(id, title, columns, note=note)
    for i, contrast in enumerate(lookup(document, path)):
        where = (*path, i)
        numbers = (*where, "cluster") if unit == "cluster" else where
        out.add(*[label(name_of(contrast)) for _, name_of in sides],
                *[cell(document, where, numbers) for _, cell in COLUMNS])
    return out


def forest(contrasts: Sequence[Mapping], name_of: Callable[[Mapping], str], title: str):
    """Forest plot: one panel per metric, one line per contrast (mean delta and its interval);
    confirmatory contrasts are filled and red, the rest open and dark; zero is marked."""
    metrics = list(dict.fromkeys(c["metric"] for c in contrasts))
    rows = max((sum(1 for c in contrasts if c["metric"] == m) for m in metrics), default=1)

    def build(fig):
        if not contrasts:
            plotting.empty(fig, "no contrasts")
            return
        axes = fig.subplots(1, len(metrics), squeeze=False)[0]
        names = {m: [name_of(c) for c in contrasts if c["metric"] == m] for m in metrics}
        same_rows = all(n == names[metrics[0]] for n in names.values())
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            mine = [c for c in contrasts if c["metric"] == metric]
            for y, c in enumerate(mine):
                confirmatory = c["label"] == "confirmatory"
                colour = plotting.CONFIRMATORY if confirmatory else plotting.EXPLORATORY
                low, high = c["interval"]
                ax.plot([low, high], [y, y], color=colour, linewidth=1.6)
                ax.plot([c["mean_delta"]], [y], marker="D" if confirmatory else "o", markersize=6,
                        color=colour, markerfacecolor=colour if confirmatory else "white", linestyle="none")
            ax.axvline(0.0, color="#888888", linewidth=0.8, linestyle="--")
            ax.set_title(metric_label(metric))
            ax.set_xlabel("delta (95% interval)")
            shown = not same_rows or i == 0  # identical rows in every panel: name them once, on the left
            ax.set_yticks(range(len(mine)), [name_of(c) + (" [confirmatory]" if c["label"] == "confirmatory" else "")
                                             for c in mine] if shown else [])
            ax.set_ylim(len(mine) - 0.5, -0.5)
        fig.suptitle(title)

    left = plotting.label_width([name_of(c) + " [confirmatory]" for c in contrasts])
    return plotting.figure(build, left + 3.0 * max(len(metrics), 1) + 0.3, 0.32 * rows + 1.4, left=left, top=0.75,
                           wspace=0.12)
