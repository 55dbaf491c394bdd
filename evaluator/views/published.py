"""The published figures beside the lab's own, for a campaign on a published cohort (or its twin).

The public report carries, under `published`, the rows of the published figures file for the
cohort's dataset (protocols/published.py) with their sources and the file's SHA-256; the two tables
here read every number from there or from the lab's aggregates, so the HTML binds each one to the
public report like every other table. The published rows are labelled "published, not re-run
here"; the lab's R@2 and R@5 are shown in the field's units (percent, one decimal) in their own
table: docs/hipporag.md says when the two are the same measure.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.views.tables import Table, label, num
from protocols.published import CUTOFFS, FIELD, block


def public_block(protocol: Mapping) -> dict | None:
    """What the public report carries for a protocol on a published cohort; None for any other."""
    cohort = protocol.get(FIELD)
    return None if cohort is None else block(cohort)


def _cohort_label(published: Mapping, name: str) -> str:
    if name == published["cohort"]:
        return "the cohort this one twins" if published["relation"] == "twin" else "this cohort"
    return f"another corpus: {published['cohorts'][name]['files']}"


def tables(public: Mapping) -> list[Table]:
    published = public.get("published")
    if not published:
        return []
    cohort = published["cohorts"][published["cohort"]]
    twin = published["relation"] == "twin"
    sources = "; ".join(f"{key}: {text}" for key, text in published["sources"].items())
    note = (f"Figures as published on {cohort['dataset']} ({cohort['questions']:,} questions), not re-run by this lab. "
            f"Sources: {sources}. Metric: {published['metric']}.")
    if twin:
        note = (f"This campaign ran on a twin of {published['cohort']} (same layout, other questions and passages): "
                f"the published figures below are the real cohort's and are not comparable with this campaign's. "
                + note)
    rows = Table("published", f"Published recall on {published['cohort']} (published, not re-run here)",
                 ["method", "cohort", "passages", "R@2 (%)", "R@5 (%)", "source"], note=note)
    for i, row in enumerate(published["rows"]):
        rows.add(row["method"], _cohort_label(published, row["cohort"]),
                 num(public, "published", "cohorts", row["cohort"], "passages", fmt=",d"),
                 *(num(public, "published", "rows", i, cutoff, fmt=".1f") for cutoff in CUTOFFS),
                 label(row["source"]))
    methods = public["plan"]["methods"]
    lab = Table("field-recall", "This lab's R@2 and R@5 in the field's units (measured here)",
                ["method", "queries", "R@2 (%)", "R@5 (%)"],
                note="The lab's recall@2 and recall@5 (judged passages in the top k over judged passages, averaged "
                     "over the measured questions), shown as percentages with one decimal like the published "
                     "table; docs/hipporag.md says when they equal the field's recall@k exactly.")
    for m in methods:
        lab.add(m, num(public, "aggregates", "methods", m, "queries", fmt="d"),
                *(num(public, "aggregates", "methods", m, cutoff, fmt=".1%") for cutoff in CUTOFFS))
    return [rows, lab]
