"""Assembling `source.json`: the corpus and queries plus the provenance that binds them (docs/design.md §4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ground.artifacts import SOURCE_FORMAT, WARMUP_CORPUS, query_splits, source_counts, validate_source, warmup_query
from ground.canonical import digest
from importer.corpus import make_queries, union_corpus
from importer.formats.base import Query, RowReader
from importer.passages import Passages


def build_source(
    protocol: dict,
    file_rows: Mapping[str, int],
    selected: Mapping[str, Sequence[Mapping[str, Any]]],
    reader: RowReader,
    passages: Passages | None = None,
    corpus_record: Mapping[str, int] | None = None,
) -> dict:
    """The validated source.json value.

    `file_rows` maps each source file role to its row count; `selected` maps each split (in the
    protocol's selection order) to its chosen full rows sorted by id. The dataset's name, licence
    and attribution come from the protocol; `row_format` is copied when the protocol names one
    (absent, as in the frozen MuSiQue protocols, it means MuSiQue, and the bytes stay as before).
    `passages` (the HippoRAG layout) are the documents instead of the rows' paragraphs, and
    `corpus_record` what matching the gold in them found. Under the corpus warm-up rule the one
    warm-up query (ground.artifacts.warmup_query) follows the selected queries.
    """
    selection = protocol["selection"]
    order = list(selection["order"])
    if passages is None:
        documents = union_corpus((row for split in order for row in selected[split]), reader)
        queries = make_queries({split: selected[split] for split in order}, reader)
    else:
        documents = passages.documents
        queries = make_queries({split: selected[split] for split in order}, reader, passages.document_id_for(reader))
    if protocol["evaluation"]["warmup"] == WARMUP_CORPUS:
        # the warm-up query is a query of the source like any other (its fields are Query's)
        queries = sorted([*queries, cast(Query, warmup_query(documents))], key=lambda q: (q["split"], q["id"]))
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
            "selected_ids": {split: [row_id(row, reader) for row in selected[split]] for split in order},
        },
        "corpus_policy": {**reader.corpus_policy, **(corpus_record or {})},
        "judgment_policy": dict(reader.judgment_policy),
        "documents": documents,
        "queries": queries,
        "counts": source_counts(len(documents), queries, query_splits(order, queries)),
    }
    if "row_format" in protocol:
        source["row_format"] = protocol["row_format"]
    return validate_source(source)


def row_id(row: Mapping[str, Any], reader: RowReader) -> str:
    return reader.selection_fields(row)["id"]
