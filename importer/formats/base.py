"""What every row format provides to the shared pipeline, and the check that tells formats apart."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from ground.artifacts import RowFormat
from importer.reading import SourceFileError

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


@dataclass(frozen=True)
class RowReader:
    """One dataset's row format, as the pipeline uses it.

    - `validate(row, where)` checks a parsed row completely (every row of a pinned file, selected
      or not) and raises SourceFileError naming the row and the field;
    - `selection_fields(row)` is the little the selection keeps of every row: `id`, `question`
      and what `stratum` reads;
    - `count_key(key)` maps a protocol count key ("2", "bridge") to the stratum `stratum` returns;
    - `paragraphs(row)` lists (title, paragraph_text) of every paragraph the row supplies;
    - `query(row, split, document_id)` builds the query record, given the document id function;
    - `corpus`, for the HippoRAG layout only, says how a row's gold is found in the corpus file
      (importer/formats/hipporag.py); None: the documents are the rows' own paragraphs.
    """

    row_format: RowFormat
    validate: Callable[[Any, str], None]
    selection_fields: Callable[[Mapping[str, Any]], dict]
    stratum: Callable[[Mapping[str, Any]], Hashable]
    count_key: Callable[[str], Hashable]
    paragraphs: Callable[[Mapping[str, Any]], list[tuple[str, str]]]
    query: Callable[[Mapping[str, Any], str, Callable[[str, str], str]], Query]
    corpus_policy: dict
    judgment_policy: dict
    corpus: Any = None  # importer.formats.hipporag.CorpusMatch


def check_row_keys(row: Any, where: str, format_name: str, keys: tuple[str, ...],
                   optional: tuple[str, ...] = ()) -> dict:
    """A row of `format_name` is an object with the format's official keys and no other.

    A key of another format (MuSiQue's `id` in a HotpotQA file, HotpotQA's `level` in a 2Wiki
    file) is the first sign of the wrong file, so it is named before any missing key.
    """
    known = keys + optional
    expected = f"a {format_name} row has the keys {', '.join(known)}"
    if optional:
        expected += f" ({', '.join(optional)} optional)"
    if not isinstance(row, dict):
        raise SourceFileError(f"{where}: not a {format_name} row: expected a JSON object ({expected})")
    for key in row:
        if key not in known:
            raise SourceFileError(
                f"{where}: not a {format_name} row: key {key!r} does not fit ({expected})")
    for key in keys:
        if key not in row:
            raise SourceFileError(f"{where}.{key}: missing field ({expected})")
    return row
