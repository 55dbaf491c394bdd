"""Published figures: the recall the field reports on its standard cohorts, kept beside the protocols.

`protocols/frozen/published/hipporag-recall.json` holds the published R@2/R@5 rows (HippoRAG, NeurIPS
2024, Table 2; HippoRAG 2, Table 3), each with its source and the cohort it was measured on (a
question file and a corpus of a stated size: HippoRAG 1's HotpotQA corpus has 9,221 passages,
HippoRAG 2's 9,811). Nothing here was re-run by this lab; a report shows these rows in their own
table, labelled as published (evaluator/views/published.py).

A protocol names the cohort it is with `published_cohort`: `{"name": <cohort>, "relation": "cohort"}`
for the cohort itself, or `"twin"` for a stand-in in the same layout (a test's synthetic cohort),
whose figures are not comparable with the published ones and are labelled so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground.canonical import sha256_file
from ground.fields import Fields, join
from ground.files import load_json
from protocols.committed import PUBLISHED_DIR

FIELD = "published_cohort"
RELATIONS = ("cohort", "twin")
FIGURES_FILE = PUBLISHED_DIR / "hipporag-recall.json"
FORMAT = "published_recall_v1"
CUTOFFS = ("recall@2", "recall@5")


def figures(path: Path = FIGURES_FILE) -> dict:
    """The published figures file, read and checked (a row names a known source and cohort)."""
    value = load_json(path, "published figures")
    f = Fields()
    f.obj(value, "", ("format", "metric", "sources", "cohorts", "rows"))
    f.string(value["format"], "format", allowed=[FORMAT])
    sources = f.mapping(value["sources"], "sources")
    cohorts = f.mapping(value["cohorts"], "cohorts")
    for name, cohort in cohorts.items():
        path_ = join("cohorts", name)
        f.obj(cohort, path_, ("dataset", "questions", "passages", "files", "protocol"))
        f.integer(cohort["passages"], join(path_, "passages"), minimum=1)
    for i, row in enumerate(f.array(value["rows"], "rows", nonempty=True)):
        where = join("rows", i)
        f.obj(row, where, ("method", "source", "cohort") + CUTOFFS)
        f.string(row["source"], join(where, "source"), allowed=sorted(sources))
        f.string(row["cohort"], join(where, "cohort"), allowed=sorted(cohorts))
        for cutoff in CUTOFFS:
            if row[cutoff] is not None:
                f.number(row[cutoff], join(where, cutoff), low=0.0, high=100.0)
    return value


def check_published_cohort(f: Fields, value: Any) -> dict:
    """A protocol's `published_cohort`: a cohort of the figures file, and how the protocol relates to it."""
    f.obj(value, FIELD, ("name", "relation"))
    f.string(value["name"], join(FIELD, "name"), allowed=sorted(figures()["cohorts"]))
    f.string(value["relation"], join(FIELD, "relation"), allowed=RELATIONS)
    return value


def block(published_cohort: dict, path: Path = FIGURES_FILE) -> dict:
    """What a report on a published cohort (or its twin) carries and shows: every published row of the
    cohort's dataset, on this cohort or another corpus of the same dataset, each with its source,
    and the figures file's SHA-256."""
    data = figures(path)
    cohort = data["cohorts"][published_cohort["name"]]
    same_dataset = {name: c for name, c in data["cohorts"].items() if c["dataset"] == cohort["dataset"]}
    rows = [row for row in data["rows"] if row["cohort"] in same_dataset]
    return {
        "cohort": published_cohort["name"],
        "relation": published_cohort["relation"],
        "figures_file": {"name": path.name, "sha256": sha256_file(path)},
        "metric": data["metric"],
        "cohorts": same_dataset,
        "sources": {key: text for key, text in data["sources"].items() if any(r["source"] == key for r in rows)},
        "rows": rows,
    }
