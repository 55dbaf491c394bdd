"""MuSiQue-Ans v1.0 rows (`musique_v1`, docs/design.md §4): JSON lines with `id`, `paragraphs`,
`question_decomposition`; hop and category are read off the id; every row must be answerable."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ground.artifacts import ROW_FORMATS, hop_category
from ground.errors import RefusedInput
from ground.fields import Fields, join
from importer.formats.base import GRADE, Query, RowReader, check_row_keys
from importer.reading import SourceFileError
from protocols.selection import hop_stratum, row_stratum

NAME = "musique_v1"
KEYS = ("id", "paragraphs", "question", "question_decomposition", "answer", "answer_aliases", "answerable")


def validate_row(row: Any, where: str) -> None:
    """The official row format, checked for every row."""
    f = Fields(SourceFileError)
    check_row_keys(row, where, NAME, KEYS)
    try:
        row_stratum(row, where)
    except RefusedInput as exc:
        raise SourceFileError(str(exc)) from None
    f.string(row["question"], join(where, "question"))
    f.string(row["answer"], join(where, "answer"), nonempty=False)
    f.strings(row["answer_aliases"], join(where, "answer_aliases"))
    paragraphs = f.array(row["paragraphs"], join(where, "paragraphs"), nonempty=True)
    indexes: dict[int, bool] = {}
    for i, paragraph in enumerate(paragraphs):
        path = join(join(where, "paragraphs"), i)
        f.obj(paragraph, path, ("idx", "title", "paragraph_text", "is_supporting"), extra=True)
        idx = f.integer(paragraph["idx"], join(path, "idx"))
        if idx in indexes:
            f.fail(join(path, "idx"), f"duplicate paragraph idx {idx}")
        f.string(paragraph["title"], join(path, "title"), nonempty=False)
        f.string(paragraph["paragraph_text"], join(path, "paragraph_text"), nonempty=False)
        if not isinstance(paragraph["is_supporting"], bool):
            f.fail(join(path, "is_supporting"), "expected a boolean")
        indexes[idx] = paragraph["is_supporting"]
    steps = f.array(row["question_decomposition"], join(where, "question_decomposition"), nonempty=True)
    for i, step in enumerate(steps):
        path = join(join(where, "question_decomposition"), i)
        f.obj(step, path, ("paragraph_support_idx",), extra=True)
        idx = f.integer(step["paragraph_support_idx"], join(path, "paragraph_support_idx"))
        if idx not in indexes:
            f.fail(join(path, "paragraph_support_idx"), f"no paragraph has idx {idx}")
        if not indexes[idx]:
            f.fail(join(path, "paragraph_support_idx"), f"paragraph {idx} is not marked is_supporting")


def selection_fields(row: Mapping[str, Any]) -> dict:
    return {"id": row["id"], "question": row["question"], "answerable": row["answerable"]}


def paragraphs(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(p["title"], p["paragraph_text"]) for p in row["paragraphs"]]


def make_query(row: Mapping[str, Any], split: str, document_id: Callable[[str, str], str]) -> Query:
    """Grade-1 judgments for the `is_supporting` paragraphs; the chain follows the decomposition."""
    strata = hop_category(row["id"])
    assert strata is not None, "validate_row refuses an unknown hop prefix before a query is made"
    hop, category = strata
    by_idx = {p["idx"]: p for p in row["paragraphs"]}
    supporting = sorted({document_id(p["title"], p["paragraph_text"]) for p in row["paragraphs"] if p["is_supporting"]})
    chain = [document_id(by_idx[step["paragraph_support_idx"]]["title"],
                         by_idx[step["paragraph_support_idx"]]["paragraph_text"])
             for step in row["question_decomposition"]]
    return {
        "id": row["id"], "split": split, "hop": hop, "category": category,
        "question": row["question"], "answer": row["answer"],
        "answer_aliases": list(row["answer_aliases"]),
        "judgments": {doc_id: GRADE for doc_id in supporting},
        "evidence_chain": chain,
    }


MUSIQUE = RowReader(
    row_format=ROW_FORMATS[NAME],
    validate=validate_row,
    selection_fields=selection_fields,
    stratum=hop_stratum,
    count_key=int,
    paragraphs=paragraphs,
    query=make_query,
    # the frozen MuSiQue source.json bytes carry exactly these two policies
    corpus_policy={
        "unit": "paragraph",
        "dedup_key": ["title", "paragraph_text"],
        "id": "musique- + digest({title, paragraph_text})",
        "text": "title + \\n + paragraph_text",
        "includes": "every paragraph supplied with a selected question, distractors included",
    },
    judgment_policy={
        "grade": GRADE,
        "relevant": "original supporting paragraphs",
        "judgments_complete": False,
    },
)

READERS = (MUSIQUE,)  # bound by importer/formats/__init__.py to ground/artifacts.py's declaration
