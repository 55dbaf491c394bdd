"""A leaderboard's views: its tables, its quality-against-cost figure, Markdown, HTML and CSV.

Every number shown is read from the board document at its path (evaluator/views/tables.py),
so the HTML binds each one to the JSON the audit recomputes. `prefix` is where the board sits in
that document: () for leaderboard.json, ("leaderboard",) inside a public report.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

from evaluator.views import html, plotting, tables
from evaluator.views.tables import Table, interval, joined, label, num


def reading_rule(board: Mapping) -> str:
    """How to read a letter, with the board's own alpha, test and number of pairs."""
    s = board["settings"]
    rule = (f"Methods that share a letter cannot be told apart by this data: every pair was tested (paired sign-flip "
            f"randomization on {tables.metric_label(s['metric'])} over {s['unit']} units, {board['p_method'].replace('_', ' ')}), "
            f"Holm-adjusted over all {board['pairs_tested']} pairs, and a pair is separated only at an adjusted p of at "
            f"most {s['alpha']:g}. Two methods with no letter in common are separated.")
    if not board["decidable"]:
        least = min((p["smallest_p"] for p in board["pairs"]), default=1.0)
        rule += (f" This cohort is too small to tell any two methods apart: the smallest p a pair can reach is "
                 f"{least:.3g}, and Holm over {board['pairs_tested']} pairs needs {s['alpha']:g} after multiplying; "
                 f"one letter for all says nothing about equality.")
    return rule


def board_table(document: Mapping, prefix: tuple = ()) -> Table:
    board = tables.lookup(document, prefix)
    s = board["settings"]
    strata = [st["name"] for st in board["strata"]] if len(board["strata"]) > 1 else []
    columns = (["method", "rank", "group", f"{tables.metric_label(s['metric'])} [{s['confidence']:.0%} interval]"]
               + [f"{name} mean" for name in strata] + ["HTTP p50 ms", "server p50 ms", "Pareto front"])
    weights = ", ".join(f"{st['name']} {st['weight']:.3g}" for st in board["strata"])
    note = (f"{board['queries']:,} queries"
            + (f" in {len(board['strata'])} datasets, pooled with weights {weights}" if strata else "")
            + f"; best first. {reading_rule(board)}")
    if board["left_out"]:
        note += f" Left out (not measured on every dataset): {', '.join(board['left_out'])}."
    t = Table("leaderboard", f"Leaderboard on {tables.metric_label(s['metric'])}", columns, note=note,
              after="Cost is the median HTTP time and server retrieval time of every timed request of the method in "
                    "the same campaigns; the Pareto front holds the methods no other beats on both quality and HTTP "
                    "time.")
    for i, row in enumerate(board["methods"]):
        at = (*prefix, "methods", i)
        t.add(label(row["method"]), num(document, *at, "rank", fmt="d"), label(row["letters"]),
              joined(num(document, *at, "mean"), interval(document, *at, "interval", fmt=".3f"), sep=" "),
              *(num(document, *at, "per_dataset", name) for name in strata),
              num(document, *at, "cost", "http_ms_p50", fmt=".2f"),
              num(document, *at, "cost", "retrieval_ms_p50", fmt=".2f"),
              label("front" if row["pareto"] else ""))
    return t


def category_table(document: Mapping, prefix: tuple = ()) -> Table | None:
    board = tables.lookup(document, prefix)
    names = sorted({name for row in board["methods"] for name in row["per_category"]})
    if len(names) < 2:
        return None
    t = Table("leaderboard-categories", f"Leaderboard by category ({tables.metric_label(board['settings']['metric'])} mean)",
              ["method", "group", *names], note="Means only: the groups are the whole board's.")
    for i, row in enumerate(board["methods"]):
        t.add(label(row["method"]), label(row["letters"]),
              *(num(document, *prefix, "methods", i, "per_category", name) for name in names))
    return t


def adjacent_table(document: Mapping, prefix: tuple = ()) -> Table:
    board = tables.lookup(document, prefix)
    t = Table("leaderboard-adjacent", "Each method against the next one down",
              ["better", "worse", "delta [interval]", "p", "Holm p", "separated", "detectable ±", "queries to separate"],
              note="The detectable effect is the smallest difference this cohort finds with 80% power at the board's "
                   "alpha; queries to separate is how many queries would find the observed difference with that "
                   "power (n/a: the two are equal on every query).")
    for i, pair in enumerate(board["adjacent"]):
        at = (*prefix, "adjacent", i)
        t.add(label(pair["better"]), label(pair["worse"]),
              joined(num(document, *at, "mean_delta", fmt="+.3f"), interval(document, *at, "interval"), sep=" "),
              num(document, *at, "p_value", fmt=".4f"), num(document, *at, "p_value_holm", fmt=".4f"),
              label("yes" if pair["separated"] else "no"), num(document, *at, "detectable_effect"),
              num(document, *at, "queries_to_separate", fmt=",d"))
    return t


def sections(document: Mapping, prefix: tuple = ()) -> list[Table]:
    """The board's tables, in reading order: the board, the adjacent pairs, the categories."""
    out = [board_table(document, prefix), adjacent_table(document, prefix)]
    categories = category_table(document, prefix)
    return out + ([categories] if categories else [])


FIGURE_CAPTION = ("Quality against cost: each method's mean with its interval (vertical bar) against the median HTTP "
                  "time of its requests, numbered by rank; the dashed line joins the Pareto front (circles); the "
                  "letters in the legend are the groups.")


FIGURE = "quality_cost"  # the figure's name: its file, its element ids, its place in a public report


def cost_figure(board: Mapping):
    """The quality-against-cost figure (a matplotlib Figure; plotting.svg(fig, FIGURE) draws it)."""
    rows = [r for r in board["methods"] if r["cost"].get("http_ms_p50") is not None]

    def build(fig):
        ax = fig.subplots()
        if not rows:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no timed requests", ha="center", va="center")
            return
        for i, row in enumerate(rows):
            x, (low, high) = row["cost"]["http_ms_p50"], row["interval"]
            ax.plot([x, x], [low, high], color=plotting.color(i), linewidth=1.2)
            ax.plot([x], [row["mean"]], marker="o" if row["pareto"] else "s", color=plotting.color(i), markersize=5,
                    linestyle="none", label=f"{row['rank']} {row['method']} ({row['letters']})")
            ax.annotate(str(row["rank"]), (x, row["mean"]), xytext=(4, 3), textcoords="offset points", fontsize=8.0)
        front = sorted((r["cost"]["http_ms_p50"], r["mean"]) for r in rows if r["pareto"])
        ax.plot([c for c, _ in front], [m for _, m in front], color="black", linewidth=0.8, linestyle="--",
                label="Pareto front (circles)")
        ax.set_xscale("log")
        plotting.plain_log_axis(ax.xaxis)
        ax.set_xlabel("HTTP p50 (ms, log scale)")
        ax.set_ylabel(tables.metric_label(board["settings"]["metric"]))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)

    longest = max((len(f"{r['rank']} {r['method']} ({r['letters']})") for r in rows), default=10)
    right = 0.6 + longest * 8.0 * 0.6 / 72.0
    return plotting.figure(build, 5.5 + right, max(4.0, 1.2 + 0.2 * len(rows)), left=0.7, right=right,
                           bottom=0.6, top=0.3)


def markdown(heading: str, board: Mapping, figure_file: str) -> str:
    parts = [f"# {heading}", ""]
    for table in sections(board):
        parts.append(tables.markdown(table))
    parts += [f"![quality against cost]({figure_file})", "", f"*{FIGURE_CAPTION}*", ""]
    return "\n".join(parts).rstrip("\n") + "\n"


def page(heading: str, board: Mapping, svg: str) -> str:
    body = [tables.html_table(t) for t in sections(board)]
    body.append(html.figure(FIGURE, svg, FIGURE_CAPTION))
    return html.document(heading, body)


CSV_COLUMNS = ("rank", "method", "letters", "mean", "interval_low", "interval_high", "http_ms_p50",
               "retrieval_ms_p50", "pareto")


def csv_text(board: Mapping) -> str:
    """One line per method: rank, name, letters, mean and interval (repr: every bit), cost, front."""
    buffer = io.StringIO()
    names = sorted({name for row in board["methods"] for name in row["per_dataset"]})
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*CSV_COLUMNS, *(f"mean {n}" for n in names)])
    for row in board["methods"]:
        writer.writerow([row["rank"], row["method"], row["letters"], repr(row["mean"]), repr(row["interval"][0]),
                         repr(row["interval"][1]), _text(row["cost"]["http_ms_p50"]),
                         _text(row["cost"]["retrieval_ms_p50"]), "yes" if row["pareto"] else "no",
                         *(repr(row["per_dataset"][n]) for n in names)])
    return buffer.getvalue()


def _text(value) -> str:
    return "" if value is None else repr(value)


def heading(board: Mapping, inputs: Sequence[Mapping], suite: Mapping | None) -> str:
    what = suite["suite_version"] if suite else ", ".join(sorted({i["protocol_version"] for i in inputs}))
    return f"Leaderboard: {what} on {tables.metric_label(board['settings']['metric'])}"
