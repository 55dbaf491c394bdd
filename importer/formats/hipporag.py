"""The HippoRAG layout (docs/hipporag.md): a question file and a passage corpus shared by all questions.

The question file is one JSON array of rows in the dataset's own row format (MuSiQue's, HotpotQA's or
2WikiMultihopQA's official keys, validated by the same checks as the official files); the corpus
file is one JSON array of `{title, text}` passages. A reader here is the dataset's own reader with
its documents taken from the corpus instead of the rows' paragraphs, and its gold matched to the
corpus (importer/passages.py):

- `hipporag_musique_v1`: the `is_supporting` paragraphs, matched by title and text;
- `hipporag_2wikimultihopqa_v1`, `hipporag_hotpotqa_v1`: the titles `supporting_facts` names,
  matched by title.

Document ids are the dataset's own (`musique-` + digest({title, paragraph_text}) with the passage
text as paragraph_text), so a passage has the id the same paragraph has when imported from rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ground.artifacts import ROW_FORMATS
from importer.formats.base import GRADE, RowReader
from importer.formats.hotpotqa import HOTPOTQA, HOTPOTQA_ROWS
from importer.formats.musique import MUSIQUE
from importer.formats.twowiki import TWOWIKI, TWOWIKI_ROWS


@dataclass(frozen=True)
class CorpusMatch:
    """How a row's gold passages are found in the corpus.

    `gold(row)` lists the row's gold passages as (title, the row's own text of it), each once, in
    first-mention order; `by_title` says whether the corpus is searched by title alone (the
    row's text is then only compared, for the record) or by title and text."""

    by_title: bool
    gold: Callable[[Mapping[str, Any]], list[tuple[str, str]]]


def _musique_gold(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    pairs = [(p["title"], p["paragraph_text"]) for p in row["paragraphs"] if p["is_supporting"]]
    return list(dict.fromkeys(pairs))


def _context_gold(paragraphs: Callable[[Mapping[str, Any]], list[tuple[str, str]]]):
    def gold(row: Mapping[str, Any]) -> list[tuple[str, str]]:
        text = dict(paragraphs(row))  # a title repeated in one row carries one text (validated)
        return [(title, text[title]) for title in dict.fromkeys(title for title, _ in row["supporting_facts"])]
    return gold


def _corpus_reader(base: RowReader, name: str, match: CorpusMatch, relevant: str) -> RowReader:
    prefix = ROW_FORMATS[name].document_prefix
    return replace(
        base,
        row_format=ROW_FORMATS[name],
        corpus=match,
        corpus_policy={
            "unit": "passage",
            "source": "the corpus file (source_files.corpus): every passage, whatever the selection",
            "dedup_key": ["title", "text"],
            "id": f"{prefix} + digest({{title, paragraph_text: text}})",
            "text": "title + \\n + text",
        },
        judgment_policy={"grade": GRADE, "relevant": relevant, "judgments_complete": False},
    )


HIPPORAG_MUSIQUE = _corpus_reader(
    MUSIQUE, "hipporag_musique_v1", CorpusMatch(by_title=False, gold=_musique_gold),
    "corpus passages equal in title and text to the row's is_supporting paragraphs")
HIPPORAG_TWOWIKI = _corpus_reader(
    TWOWIKI, "hipporag_2wikimultihopqa_v1", CorpusMatch(by_title=True, gold=_context_gold(TWOWIKI_ROWS.paragraphs)),
    "the corpus passage of each title the row's supporting_facts name (2WikiMultihopQA), matched by title")
HIPPORAG_HOTPOTQA = _corpus_reader(
    HOTPOTQA, "hipporag_hotpotqa_v1", CorpusMatch(by_title=True, gold=_context_gold(HOTPOTQA_ROWS.paragraphs)),
    "the corpus passage of each title the row's supporting_facts name (HotpotQA), matched by title")

READERS = (HIPPORAG_MUSIQUE, HIPPORAG_TWOWIKI, HIPPORAG_HOTPOTQA)  # bound by importer/formats/__init__.py
