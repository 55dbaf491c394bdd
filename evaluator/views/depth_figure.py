"""The recall-at-k figure of a deeper protocol, drawn from the `recall_curve` block that
evaluator/derived/depth.py derives (kept apart so the computation room imports no rendering)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.views import plotting


def recall_figure(public: Mapping):
    from evaluator.views import plotting

    curve = public["recall_curve"]
    methods = public["plan"]["methods"]
    primary = public["evaluation"]["primary_contrast"]

    def build(fig):
        ax = fig.subplots(1, 1)
        ks = curve["cutoffs"]
        for j, method in enumerate(methods):
            colour = plotting.color(j)
            if method in curve["band"]:
                band = curve["band"][method]
                ax.fill_between(ks, band["low"], band["high"], color=colour, alpha=0.2, linewidth=0)
            width = 2.0 if method in (primary["candidate"], primary["baseline"]) else 1.0
            ax.plot(ks, curve["methods"][method], color=colour, linewidth=width, label=method)
        ax.set_xscale("log")
        plotting.plain_log_axis(ax.xaxis)
        ax.set_xlim(1, curve["depth"])
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("k (log scale)")
        ax.set_ylabel("recall@k")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8.0)

    right = plotting.label_width(methods) + 0.6
    return plotting.figure(build, 6.5 + right, 4.0, left=0.7, right=right, top=0.25, bottom=0.6)
