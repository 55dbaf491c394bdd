"""What the public report shows a reader, in order: tables and figures, for Markdown and HTML alike.

`public_sections(public)` lists the sections once; `markdown(...)` and `page(...)` render the
same list, so the Markdown summary and the HTML page show the same numbers (every one read from
the public report at a named path, see `tables`) and the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.views import (
    about,
    contrast_text,
    contrasts,
    glance,
    html,
    leaderboard_views,
    published,
    rescue_tables,
    tables,
)
from evaluator.views.edition import edition
from evaluator.views.figures import caption
from evaluator.views.reach_table import reach_tables
from evaluator.views.tables import Table, metric_label, num


@dataclass(frozen=True)
class FigureRef:
    name: str
    caption: str


Section = Table | FigureRef | glance.Prose


def title(public: Mapping) -> str:
    return f"{public['protocol_version']}: graph-assisted retrieval evaluation"


def identity(public: Mapping) -> Table:
    t = Table("identity", "Campaign", ["what", "value"])
    plan = public["plan"]
    t.add("protocol", public["protocol_version"])
    frozen = public.get("protocol_frozen")  # absent from reports written before campaigns recorded it
    if frozen is not None:
        t.add("protocol digest", f"{frozen['digest']} (" + (f"frozen: {frozen['by']}" if frozen["frozen"] else
                                                            "NOT frozen: no lock held its content") + ")")
    t.add("split", plan["split"])
    t.add("queries (per method)", num(public, "aggregates", "methods", plan["methods"][0], "queries", fmt="d"))
    t.add("repetitions", num(public, "plan", "repetitions", fmt="d"))
    t.add("protocol seed", num(public, "plan", "seed", fmt="d"))
    t.add("private report digest", public["private_report_digest"])
    t.add("fixture digest", public["hash_chain"]["fixture"])
    t.add("embedding space", public["space_id"])
    t.add("lab", f"{public['lab']['lab_id']}, journal {public['lab']['journal_id']}")
    t.add("fence (high watermark)", num(public, "fences", "before", "high_watermark", fmt="d"))
    t.add("started, finished", f"{public['started_at']}, {public['finished_at']}")
    resumed = public.get("resumed")
    if resumed:
        t.add("resumed", "; ".join(f"at {r['at']} after {r['after_jobs']:,} recorded jobs" for r in resumed))
    return t


def methods_table(public: Mapping) -> Table:
    """Each method's means; with the encoder's counts (`encoder`, export --generation), the passages
    and questions the encoder truncated, on the rows of the methods that read vectors."""
    from protocols.routes import route_of

    methods = public["plan"]["methods"]
    names = [k for k in public["aggregates"]["methods"][methods[0]] if k != "queries"]
    encoder = public.get("encoder")
    extra = ["truncated passages / questions"] if encoder else []
    note = (f"Truncated: inputs longer than the encoder's token limit, embedded from their first tokens only: "
            f"{encoder['documents_truncated']} of {encoder['documents']} passages, {encoder['queries_truncated']} "
            f"of {encoder['queries']} questions; only the methods that read vectors see it." if encoder else "")
    t = Table("methods", "Methods", ["method", "queries", *map(metric_label, names), *extra], note=note)
    for m in methods:
        cells: list[Any] = [num(public, "aggregates", "methods", m, "queries", fmt="d"),
                 *(num(public, "aggregates", "methods", m, name) for name in names)]
        if encoder:
            method = public["methods"][m]
            cells.append(tables.joined(num(public, "encoder", "documents_truncated", fmt="d"),
                                       num(public, "encoder", "queries_truncated", fmt="d"))
                         if route_of(method).sends_vector(method) else "–")
        t.add(m, *cells)
    return t


def means_table(public: Mapping) -> Table | None:
    means = (public.get("statistics") or {}).get("means")
    if not means:
        return None
    metrics = public["evaluation"]["contrast_metrics"]
    t = Table("means", "Means with 95% bootstrap intervals",
              ["method", *(h for m in metrics for h in (metric_label(m), "interval"))],
              note="Percentile bootstrap of each method's per-query values (the protocol's seed and resamples).")
    for m in public["plan"]["methods"]:
        t.add(m, *(c for metric in metrics for c in (num(public, "statistics", "means", m, metric, "mean"),
                                                      tables.interval(public, "statistics", "means", m, metric,
                                                                      "interval", fmt=".3f"))))
    return t


def contrasts_table(public: Mapping) -> Table | None:
    stats = public.get("statistics")
    if not stats:
        return None
    # a report from before clusters keeps its one-line recipe above; otherwise the reading guide
    # follows the table it explains (the full recipe is in `statistics` and docs/reports.md)
    after = contrast_text.after_note(stats)
    table = contrasts.table(public, ("statistics", "contrasts"),
                            [("candidate", lambda c: c["candidate"]), ("baseline", lambda c: c["baseline"])],
                            id="contrasts", title="Paired comparisons", note="" if after else contrast_text.note(stats),
                            unit=contrast_text.primary_unit(stats))
    table.after = after
    return table


def categories_table(public: Mapping) -> Table:
    methods = public["plan"]["methods"]
    metric = public["evaluation"]["contrast_metrics"][0]
    categories = public["aggregates"]["categories"]
    if edition(public) >= 2:  # a row per method: 16 methods stay within 1,400 px, as few categories do
        return _categories_by_method(public, methods, metric, categories)
    t = Table("categories", f"{metric_label(metric)} by category", ["category", "queries", *methods])
    for category, per in categories.items():
        first = next(iter(per))
        t.add(category, num(public, "aggregates", "categories", category, first, "queries", fmt="d"),
              *(num(public, "aggregates", "categories", category, m, metric) for m in methods))
    return t


def _categories_by_method(public: Mapping, methods: list, metric: str, categories: Mapping) -> Table:
    names = list(categories)
    counts = [categories[c][next(iter(categories[c]))]["queries"] for c in names]
    t = Table("categories", f"{metric_label(metric)} by category",
              ["method", *(f"{c} ({n})" for c, n in zip(names, counts))],
              note="One row per method, one column per query category (its number of queries in brackets).")
    for m in methods:
        t.add(m, *(num(public, "aggregates", "categories", c, m, metric) for c in names))
    return t


def latency_table(public: Mapping) -> Table:
    t = Table("latency", "Latency and sizes",
              ["method", "retrieval p50 ms", "retrieval p95 ms", "HTTP p50 ms", "HTTP p95 ms", "embed+HTTP p50 ms",
               "embed+HTTP p95 ms", "response bytes (mean)", "payload bytes (mean)"])
    for m in public["plan"]["methods"]:
        cells = [num(public, "latency", m, kind, q, fmt=".2f") for kind in ("retrieval_ms", "http_ms", "embed_plus_http_ms")
                 for q in ("p50", "p95")]
        t.add(m, *cells, num(public, "sizes", m, "response_bytes_mean", fmt=".0f"),
              num(public, "sizes", m, "payload_bytes_mean", fmt=".0f"))
    return t


STOP_NOTE = ("A stop is the rule that ended a query's graph walk or path search: depth_limit (the declared depth "
             "was reached) or one of its other limits (node, edge, scan, search or page: a budget). \"any stop\" is the fraction of queries whose search "
             "ended by such a rule, so 1.000 means every query's walk or path search ended by one, which is normal "
             "when the depth is reached; \"budget cut\" counts only the queries a budget cut short.")


def work_table(public: Mapping) -> Table:
    t = Table("work", "Cuts and work",
              ["method", "any stop", "budget cut", "incomplete coverage", "mean adjacency examined",
               "mean nodes admitted", "mean relations examined"], note=STOP_NOTE)
    for m in public["plan"]["methods"]:
        t.add(m, num(public, "cuts", m, "any_stop_fraction"), num(public, "cuts", m, "budget_cut_fraction"),
              num(public, "cuts", m, "incomplete_coverage_fraction"),
              *(num(public, "work", m, k, fmt=".1f") for k in ("adjacency_examined", "nodes_admitted", "relations_examined")))
    return t


def resources_table(public: Mapping) -> Table:
    processes = (public.get("resources") or {}).get("processes")  # absent before resumes kept each process
    note = "psutil samples of the lab server's process during the campaign."
    if processes is not None:
        note = (f"psutil samples of the lab server's processes during the campaign: {processes} "
                + ("process" if processes == 1 else "processes, one for each time the campaign ran (it was resumed); "
                   "times and samples summed, memory the first process's first, the largest and the last's last"))
    t = Table("resources", "Lab server resources", ["what", "value"], note=note)
    for name, fmt in (("samples", "d"), ("wall_seconds", ".1f"), ("cpu_seconds", ".2f"), ("rss_bytes_first", ",d"),
                      ("rss_bytes_max", ",d"), ("rss_bytes_last", ",d")):
        t.add(name.replace("_", " "), num(public, "resources", name, fmt=fmt))
    return t


def public_sections(public: Mapping, figures: Mapping[str, str]) -> list[Section]:
    """Tables and figures in reading order; a figure is listed only when it was drawn."""
    def fig(name):
        return [FigureRef(name, caption(name, public))] if name in figures else []

    sections: list[Section | None] = [
        glance.answer_section(public), *_board(public, fig), about.methods_key(public),
        identity(public), methods_table(public), *published.tables(public), *fig("metric_bars"), means_table(public),
        contrasts_table(public), *fig("forest"), *fig("recall_curve"), glance.wins_losses_table(public),
        categories_table(public), *fig("category_heatmap"), *fig("category_bars"),
        latency_table(public), *fig("latency"), work_table(public), *fig("work_cuts"), resources_table(public),
        *rescue_tables.tables(public), *fig("budget_curve"), *reach_tables(public),
    ]
    return [s for s in sections if s is not None]


def terminal_summary(public: Mapping) -> str:
    """What `lab run` and `lab demo` end on: the answer box and the method table (the leaderboard,
    or the means table of a report without one), as in the full report; nothing else."""
    table = leaderboard_views.board_table(public, ("leaderboard",)) if "leaderboard" in public else means_table(public)
    sections = [glance.answer_section(public), table]
    return markdown_body([s for s in sections if s is not None], str)


def _board(public: Mapping, fig) -> list[Section]:
    """The leaderboard right after the answer: the board, its figure, the adjacent pairs."""
    if "leaderboard" not in public:
        return []
    where = ("leaderboard",)
    return [leaderboard_views.board_table(public, where), *fig(leaderboard_views.FIGURE),
            leaderboard_views.adjacent_table(public, where)]


def markdown(heading: str, sections: list[Section], figure_link) -> str:
    """Markdown: the tables, and each figure as an image link (`figure_link(name)` gives the path)."""
    return f"# {heading}\n\n" + markdown_body(sections, figure_link)


def markdown_body(sections: list[Section], figure_link) -> str:
    parts = []
    for section in sections:
        if isinstance(section, FigureRef):
            parts += [f"![{section.name}]({figure_link(section.name)})", "", f"*{section.caption}*", ""]
        elif isinstance(section, glance.Prose):
            parts.append(section.markdown())
        else:
            parts.append(tables.markdown(section))
    return "\n".join(parts).rstrip("\n") + "\n"


def page(heading: str, sections: list[Section], figures: Mapping[str, str]) -> str:
    """The one-file HTML page: the tables, and each figure's SVG inline."""
    body = []
    for section in sections:
        if isinstance(section, FigureRef):
            body.append(html.figure(section.name, figures[section.name], section.caption))
        elif isinstance(section, glance.Prose):
            body.append(section.html())
        else:
            body.append(tables.html_table(section))
    return html.document(heading, body)
