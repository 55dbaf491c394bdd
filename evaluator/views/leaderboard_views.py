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
from evaluator.views.edition import edition
from evaluator.views.tables import Cell, Table, interval, joined, label, num, p_format, unbroken_interval


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
    drawn = edition(board)
    strata = [st["name"] for st in board["strata"]] if len(board["strata"]) > 1 else []
    against = _against(board) if drawn else []
    metric = tables.metric_label(s["metric"])
    # edition 1 keeps the interval whole in a column of its own and leaves the server time to the
    # latency table and the CSV, so 16 methods read at 800 pixels
    quality = [metric, f"{s['confidence']:.0%} interval"] if drawn else [f"{metric} [{s['confidence']:.0%} interval]"]
    cost = ["HTTP p50 ms"] if drawn else ["HTTP p50 ms", "server p50 ms"]
    columns = (["method", "rank", "group", *quality] + [heading for heading, _ in against]
               + [f"{name} mean" for name in strata] + [*cost, "Pareto" if drawn else "Pareto front"])
    weights = ", ".join(f"{st['name']} {st['weight']:.3g}" for st in board["strata"])
    note = (f"{board['queries']:,} queries"
            + (f" in {len(board['strata'])} datasets, pooled with weights {weights}" if strata else "")
            + f"; best first. {reading_rule(board)}")
    if against:
        note += " The columns \"told apart from\" say in words whether the data separates each method from the best one"
        if len(against) > 1:  # the question's baseline is on the board and is not the best
            question = board["question"]
            note += (f" and from the baseline, {question['baseline']}, which the protocol's question, "
                     f"{question['candidate']}, is measured against (both marked)")
        note += ", with the pair's Holm-adjusted p."
        if edition(board) >= 2:
            note += baseline_order_note(board)
    if board["left_out"]:
        note += f" Left out (not measured on every dataset): {', '.join(board['left_out'])}."
    after = ("Cost is the median HTTP time" + ("" if drawn else " and server retrieval time") + " of every timed "
             "request of the method in the same campaigns; the Pareto front holds the methods no other beats on "
             "both quality and HTTP time.")
    t = Table("leaderboard", f"Leaderboard on {metric}", columns, note=note, after=after)
    for i, row in enumerate(board["methods"]):
        at = (*prefix, "methods", i)
        mean = ([num(document, *at, "mean"), unbroken_interval(document, *at, "interval", fmt=".3f")] if drawn else
                [joined(num(document, *at, "mean"), interval(document, *at, "interval", fmt=".3f"), sep=" ")])
        times = [num(document, *at, "cost", "http_ms_p50", fmt=".2f")]
        if not drawn:
            times.append(num(document, *at, "cost", "retrieval_ms_p50", fmt=".2f"))
        t.add(label(named(board, row["method"])), num(document, *at, "rank", fmt="d"), label(row["letters"]), *mean,
              *(separation(document, prefix, board, row["method"], other, role) for _, (other, role) in against),
              *(num(document, *at, "per_dataset", name) for name in strata), *times,
              label("front" if row["pareto"] else ""))
    return t


def named(board: Mapping, method: str) -> str:
    """The method's name, marked when it is one of the question's two (edition 1)."""
    question = board.get("question") or {}
    role = "question" if method == question.get("candidate") else "baseline" if method == question.get("baseline") else ""
    return f"{method} ({role})" if role else method


def _against(board: Mapping) -> list[tuple[str, tuple[str, str]]]:
    """The columns that say in words whether a method is separated from the best one and from the
    question's baseline: (heading, (the other method, its role))."""
    best = board["methods"][0]["method"]
    out = [("told apart from the best? (Holm p)", (best, "the best"))]
    baseline = (board.get("question") or {}).get("baseline")
    if baseline in {row["method"] for row in board["methods"]} and baseline != best:
        out.append(("told apart from the baseline? (Holm p)", (baseline, "the baseline")))
    return out


def separation(document: Mapping, prefix: tuple, board: Mapping, method: str, other: str, role: str) -> Cell:
    """"yes, below (0.004)", "no (1.000)" with the pair's Holm-adjusted p, or the method's own role."""
    if method == other:
        return label(role.removeprefix("the "))
    j = next(j for j, pair in enumerate(board["pairs"]) if {pair["better"], pair["worse"]} == {method, other})
    pair = board["pairs"][j]
    words = ("yes, " + ("above" if pair["better"] == method else "below")) if pair["separated"] else "no"
    fmt = p_format(pair["p_value_holm"], board["settings"]["alpha"]) if edition(board) >= 2 else ".3f"
    return Cell((f"{words} (", *num(document, *prefix, "pairs", j, "p_value_holm", fmt=fmt).parts, ")"))


def baseline_order_note(board: Mapping) -> str:
    """Edition 2: where a method is told apart from the baseline while one ranked above it is not,
    the reason in one sentence (it surprises a reader of the ranks alone)."""
    baseline = (board.get("question") or {}).get("baseline")
    methods = [row["method"] for row in board["methods"]]
    if baseline not in methods:
        return ""
    separated = {}
    for pair in board["pairs"]:
        if baseline in (pair["better"], pair["worse"]):
            separated[pair["worse"] if pair["better"] == baseline else pair["better"]] = pair["separated"]
    above = methods[:methods.index(baseline)]
    for i, upper in enumerate(above):
        lower = next((m for m in above[i + 1:] if separated.get(m) and not separated.get(upper)), None)
        if lower is not None:
            return (f" {lower} is told apart from the baseline while {upper}, ranked above it, is not: a pair is "
                    f"separated by how consistently the two differ query by query, not by the means alone, so a "
                    f"method that gains a little on most queries can be separated where one that gains much on a "
                    f"few is not.")
    return ""


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
    if edition(board):
        return _adjacent_compact(document, prefix, board)
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


def _adjacent_compact(document: Mapping, prefix: tuple, board: Mapping) -> Table:
    """Edition 1: the same pairs in narrower columns (the two methods in one cell, p beside its Holm
    adjustment, the interval whole), so the table fits an 800-pixel window at 16 methods."""
    alpha = board["settings"]["alpha"]

    def p_fmt(p: float | None) -> str:
        return p_format(p, alpha) if edition(board) >= 2 else ".3f"

    t = Table("leaderboard-adjacent", "Each method against the next one down",
              ["better − worse", "delta", "interval", "p (Holm)", "separated", "detectable ±", "queries to separate"],
              note="p (Holm): the pair's p, and in brackets adjusted over every pair of the board, which decides "
                   "\"separated\". The detectable effect is the smallest difference this cohort finds with 80% power "
                   "at the board's alpha; queries to separate is how many queries would find the observed difference "
                   "with that power (n/a: the two are equal on every query).")
    for i, pair in enumerate(board["adjacent"]):
        at = (*prefix, "adjacent", i)
        t.add(label(f"{pair['better']} − {pair['worse']}"), num(document, *at, "mean_delta", fmt="+.3f"),
              unbroken_interval(document, *at, "interval"),
              Cell((*num(document, *at, "p_value", fmt=p_fmt(pair["p_value"])).parts, " (",
                    *num(document, *at, "p_value_holm", fmt=p_fmt(pair["p_value_holm"])).parts, ")")),
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
    """The quality-against-cost figure (a matplotlib Figure; plotting.svg(fig, FIGURE) draws it). From
    edition 1 each method has its own colour and marker (up to 24), the front is ringed, and a rank
    number is written beside a point only where it overlaps nothing: the numbered legend names every one."""
    rows = [r for r in board["methods"] if r["cost"].get("http_ms_p50") is not None]
    drawn = edition(board)

    def build(fig):
        ax = fig.subplots()
        if not rows:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no timed requests", ha="center", va="center")
            return
        for i, row in enumerate(rows):
            x, (low, high) = row["cost"]["http_ms_p50"], row["interval"]
            if drawn:
                colour, marker, _ = plotting.series_style(i)
            else:
                colour, marker = plotting.color(i), "o" if row["pareto"] else "s"
            ax.plot([x, x], [low, high], color=colour, linewidth=1.2)
            ax.plot([x], [row["mean"]], marker=marker, color=colour, markersize=5, linestyle="none",
                    label=f"{row['rank']} {named(board, row['method'])} ({row['letters']})")
            if not drawn:
                ax.annotate(str(row["rank"]), (x, row["mean"]), xytext=(4, 3), textcoords="offset points",
                            fontsize=8.0)
        front = sorted((r["cost"]["http_ms_p50"], r["mean"]) for r in rows if r["pareto"])
        ax.plot([c for c, _ in front], [m for _, m in front], color="black", linewidth=0.8, linestyle="--",
                label="Pareto front" + (" (ringed)" if drawn else " (circles)"))
        if drawn:
            ax.plot([c for c, _ in front], [m for _, m in front], marker="o", markersize=10, markerfacecolor="none",
                    markeredgecolor="black", markeredgewidth=0.8, linestyle="none")
        ax.set_xscale("log")
        plotting.plain_log_axis(ax.xaxis)
        ax.set_xlabel("HTTP p50 (ms, log scale)")
        ax.set_ylabel(tables.metric_label(board["settings"]["metric"]))
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False)
        if drawn:
            ax.autoscale_view()
            points = [(r["cost"]["http_ms_p50"], r["mean"]) for r in rows]
            numbers = [str(r["rank"]) for r in rows]
            for point, text, spot in zip(points, numbers, plotting.free_spots(ax, points, numbers, 8.0)):
                if spot is not None:
                    ax.annotate(text, point, xytext=spot, textcoords="offset points", fontsize=8.0, ha="left",
                                va="bottom")

    longest = max((len(f"{r['rank']} {named(board, r['method'])} ({r['letters']})") for r in rows), default=10)
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
