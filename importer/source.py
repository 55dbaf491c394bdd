"""Assembling `source.json`: the corpus and queries plus the provenance that binds them (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from importer.corpus import GRADE, make_queries, union_corpus
from protocols.artifacts import SOURCE_FORMAT, source_counts, validate_source
from protocols.canonical import digest

CORPUS_POLICY = {
    "unit": "paragraph",
    "dedup_key": ["title", "paragraph_text"],
    "id": "musique- + digest({title, paragraph_text})",
    "text": "title + \\n + paragraph_text",
    "includes": "every paragraph supplied with a selected question, distractors included",
}
JUDGMENT_POLICY = {
    "grade": GRADE,
    "relevant": "original supporting paragraphs",
    "judgments_complete": False,
}


def build_source(
    protocol: dict,
    file_rows: Mapping[str, int],
    selected: Mapping[str, list[Mapping[str, Any]]],
) -> dict:
    """The validated source.json value.

    `file_rows` maps each source file role to its row count; `selected` maps each split (in the
    protocol's selection order) to its chosen full rows sorted by id.
    """
    selection = protocol["selection"]
    order = list(selection["order"])
    documents = union_corpus(row for split in order for row in selected[split])
    queries = make_queries({split: selected[split] for split in order})
    source = {
        "format": SOURCE_FORMAT,
        "protocol": {"version": protocol["protocol_version"], "digest": digest(protocol)},
        "dataset": dict(protocol["dataset"]),
        "source_files": {
            role: {"name": entry["name"], "sha256": entry["sha256"], "rows": file_rows[role]}
            for role, entry in protocol["source_files"].items()
        },
        "selection": {
            "version": selection["version"],
            "seed": selection["seed"],
            "order": order,
            "splits": selection["splits"],
            "selected_ids": {split: [row["id"] for row in selected[split]] for split in order},
        },
        "corpus_policy": CORPUS_POLICY,
        "judgment_policy": JUDGMENT_POLICY,
        "documents": documents,
        "queries": queries,
        "counts": source_counts(len(documents), queries, order),
    }
    return validate_source(source)
