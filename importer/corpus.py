"""The union corpus, the judgments and the evidence chains of the selected questions (DESIGN §4).

Documents hold title and paragraph text only; questions, answers and decompositions stay on the
query side, so nothing a retriever can see carries a label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from protocols.artifacts import document_id, document_text, hop_category

GRADE = 1


class Document(TypedDict):
    id: str
    title: str
    paragraph_text: str
    text: str


class Query(TypedDict):
    id: str
    split: str
    hop: int
    category: str
    question: str
    answer: str
    answer_aliases: list[str]
    judgments: dict[str, int]
    evidence_chain: list[str]


def paragraph_document(paragraph: Mapping[str, Any]) -> Document:
    title, text = paragraph["title"], paragraph["paragraph_text"]
    return {"id": document_id(title, text), "title": title, "paragraph_text": text,
            "text": document_text(title, text)}


def union_corpus(rows: Iterable[Mapping[str, Any]]) -> list[Document]:
    """Every paragraph of every row, distractors included, one document per (title, text), by id."""
    documents: dict[str, Document] = {}
    for row in rows:
        for paragraph in row["paragraphs"]:
            doc = paragraph_document(paragraph)
            documents.setdefault(doc["id"], doc)
    return [documents[key] for key in sorted(documents)]


def make_query(row: Mapping[str, Any], split: str) -> Query:
    """The query record: grade-1 judgments for supporting paragraphs, the ordered evidence chain."""
    hop, category = hop_category(row["id"])
    by_idx = {p["idx"]: p for p in row["paragraphs"]}
    supporting = sorted({paragraph_document(p)["id"] for p in row["paragraphs"] if p["is_supporting"]})
    chain = [paragraph_document(by_idx[step["paragraph_support_idx"]])["id"]
             for step in row["question_decomposition"]]
    return {
        "id": row["id"], "split": split, "hop": hop, "category": category,
        "question": row["question"], "answer": row["answer"],
        "answer_aliases": list(row["answer_aliases"]),
        "judgments": {doc_id: GRADE for doc_id in supporting},
        "evidence_chain": chain,
    }


def make_queries(selected: Mapping[str, list[Mapping[str, Any]]]) -> list[Query]:
    """Queries of every split, sorted by (split, id) as source.json requires."""
    queries = [make_query(row, split) for split, rows in selected.items() for row in rows]
    return sorted(queries, key=lambda q: (q["split"], q["id"]))
