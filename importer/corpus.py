"""The union corpus and the queries of the selected questions (docs/design.md §4 and §4.1).

Documents hold title and paragraph text only; questions, answers, decompositions, evidences and
supporting facts stay on the query side, so nothing a retriever can see carries a label. What a
row supplies and how it is judged is the row format's (importer.formats); the union, the ids and
the order are the same for every dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from ground.artifacts import document_id, document_text
from importer.formats.base import Document, Query, RowReader


def make_document(title: str, paragraph_text: str, prefix: str) -> Document:
    return {"id": document_id(title, paragraph_text, prefix), "title": title, "paragraph_text": paragraph_text,
            "text": document_text(title, paragraph_text)}


def union_corpus(rows: Iterable[Mapping[str, Any]], reader: RowReader) -> list[Document]:
    """Every paragraph of every row, distractors included, one document per (title, text), by id."""
    prefix = reader.row_format.document_prefix
    documents: dict[str, Document] = {}
    for row in rows:
        for title, text in reader.paragraphs(row):
            doc = make_document(title, text, prefix)
            documents.setdefault(doc["id"], doc)
    return [documents[key] for key in sorted(documents)]


def make_queries(selected: Mapping[str, Sequence[Mapping[str, Any]]], reader: RowReader,
                 ids: Callable[[str, str], str] | None = None) -> list[Query]:
    """Queries of every split, sorted by (split, id) as source.json requires. `ids` maps a row's
    (title, text) to its document id: by default the digest, a corpus layout's lookup otherwise."""
    ids = ids or partial(document_id, prefix=reader.row_format.document_prefix)
    queries = [reader.query(row, split, ids) for split, rows in selected.items() for row in rows]
    return sorted(queries, key=lambda q: (q["split"], q["id"]))
