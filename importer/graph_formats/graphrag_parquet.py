"""Microsoft GraphRAG's parquet output, `graphrag_parquet_v1` (docs/graph-import.md).

Four tables: `documents` (id, title, text), `text_units` (id and its document: `document_id`, or
the older `document_ids` list), `entities` (title) and `relationships` (source, target,
description, text_unit_ids). A relationship is the triple (source, description, target); its
passages are its text units' documents, and a document is matched to the corpus by title and text
exactly. A relationship naming a text unit, or a text unit naming a document, that the tables do
not hold is refused, and so is a relationship whose source or target is no entity's title.
Read with pyarrow (pinned), column by column.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from importer.graph_formats.base import BY_TITLE_TEXT, GraphFileError, GraphPassage

COLUMNS = {
    "documents": ("id", "title", "text"),
    "text_units": ("id",),
    "entities": ("title",),
    "relationships": ("source", "target", "description", "text_unit_ids"),
}


def _table(paths: Mapping[str, Path], role: str) -> dict[str, list]:
    import pyarrow.parquet as pq

    path = paths[role]
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for a file that is not parquet
        raise GraphFileError(f"graph file {path} ({role}): not a parquet table ({type(exc).__name__}: {exc})") from None
    wanted = list(COLUMNS[role])
    if role == "text_units":
        wanted.append("document_id" if "document_id" in table.column_names else "document_ids")
    missing = [name for name in wanted if name not in table.column_names]
    if missing:
        raise GraphFileError(f"graph file {path} ({role}): no column {', '.join(missing)} "
                             f"(columns: {', '.join(table.column_names)})")
    return {name: table.column(name).to_pylist() for name in wanted}


def read(paths: Mapping[str, Path]) -> list[GraphPassage]:
    documents, units = _table(paths, "documents"), _table(paths, "text_units")
    entities, relationships = _table(paths, "entities"), _table(paths, "relationships")
    passages: dict[str, GraphPassage] = {}
    # rows are counted from 1, as JSON-lines lines are: "row 1" is the table's first row
    for i, (doc_id, title, text) in enumerate(zip(documents["id"], documents["title"], documents["text"]), start=1):
        if not all(isinstance(v, str) for v in (doc_id, title, text)):
            raise GraphFileError(f"graph file {paths['documents']}: row {i}: id, title and text must be strings")
        if doc_id in passages:
            raise GraphFileError(f"graph file {paths['documents']}: row {i}: document id {doc_id!r} appears twice")
        passages[doc_id] = GraphPassage(BY_TITLE_TEXT, (title, text), [], f"documents row {i}")
    unit_documents: dict[str, list[str]] = {}
    owners = units.get("document_id") or units.get("document_ids") or []
    for i, (unit_id, owner) in enumerate(zip(units["id"], owners), start=1):
        owned = [owner] if isinstance(owner, str) else list(owner or [])
        for doc_id in owned:
            if doc_id not in passages:
                raise GraphFileError(f"graph file {paths['text_units']}: row {i}: text unit {unit_id!r} names "
                                     f"document {doc_id!r}, which the documents table does not hold")
        unit_documents[unit_id] = owned
    titles = set(entities["title"])
    for i, (source, target, description, unit_ids) in enumerate(zip(
            relationships["source"], relationships["target"], relationships["description"],
            relationships["text_unit_ids"]), start=1):
        where = f"graph file {paths['relationships']}: row {i}"
        for end in (source, target):
            if end not in titles:
                raise GraphFileError(f"{where}: {end!r} is no entity's title in the entities table")
        for unit_id in unit_ids or []:
            if unit_id not in unit_documents:
                raise GraphFileError(f"{where}: text unit {unit_id!r} is not in the text_units table")
            for doc_id in unit_documents[unit_id]:
                passages[doc_id].triples.append([source, description, target])
                passages[doc_id].origins.append(f"relationships row {i}")
    return list(passages.values())


READERS = {"graphrag_parquet_v1": read}
