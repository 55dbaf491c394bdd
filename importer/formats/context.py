"""The row shape HotpotQA and 2WikiMultihopQA share (docs/design.md §4.1): `context` is a list of
[title, sentences] pairs, `supporting_facts` a list of [title, sentence index] pairs, `type` the
stratum and the category. The two differ in their keys and in how sentences join into a paragraph.

Rules where the data could be read two ways (docs/import.md, "HotpotQA and 2WikiMultihopQA"):
- a title twice in one row's context with the same sentences supplies one paragraph; with
  different sentences the row is refused (a supporting fact names a title, which would then be
  ambiguous);
- a supporting fact whose title is not in the row's context, or whose sentence index is not one of
  that paragraph's sentences, is refused: the fact does not describe the row it is in;
- judgments are per paragraph: every context paragraph whose title a supporting fact names is
  judged grade 1, and the evidence chain orders those paragraphs by first mention in
  `supporting_facts`; hop = the number of supporting paragraphs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ground.artifacts import ROW_FORMATS
from ground.fields import Fields, join
from importer.formats.base import GRADE, Query, RowReader, check_row_keys
from importer.reading import SourceFileError
from protocols.selection import type_stratum


@dataclass(frozen=True)
class ContextFormat:
    name: str
    keys: tuple[str, ...]  # the official row's keys the import requires
    optional_keys: tuple[str, ...]  # official keys a release may lack (never read)
    sentence_joiner: str  # HotpotQA sentences carry their own leading spaces; 2Wiki's do not
    extra_checks: Callable[[Fields, dict, str], None]

    @property
    def types(self) -> tuple[str, ...]:
        return ROW_FORMATS[self.name].strata

    def validate(self, row: Any, where: str) -> None:
        f = Fields(SourceFileError)
        check_row_keys(row, where, self.name, self.keys, self.optional_keys)
        f.string(row["_id"], join(where, "_id"))
        f.string(row["question"], join(where, "question"))
        f.string(row["answer"], join(where, "answer"), nonempty=False)
        row_type = f.string(row["type"], join(where, "type"))
        if row_type not in self.types:
            f.fail(join(where, "type"), f"{row_type!r} is outside the protocol's strata "
                                        f"({', '.join(self.types)}: the types of {self.name})")
        self.extra_checks(f, row, where)
        sentences = _context(f, row["context"], join(where, "context"))
        _supporting_facts(f, row["supporting_facts"], join(where, "supporting_facts"), sentences)

    def paragraphs(self, row: Mapping[str, Any]) -> list[tuple[str, str]]:
        return [(title, self.sentence_joiner.join(sentences)) for title, sentences in row["context"]]

    def query(self, row: Mapping[str, Any], split: str, document_id: Callable[[str, str], str]) -> Query:
        text = dict(self.paragraphs(row))  # duplicate titles carry equal texts (validated)
        titles = list(dict.fromkeys(title for title, _ in row["supporting_facts"]))
        chain = [document_id(title, text[title]) for title in titles]
        return {
            "id": row["_id"], "split": split, "hop": len(chain), "category": row["type"],
            "question": row["question"], "answer": row["answer"], "answer_aliases": [],
            "judgments": {doc_id: GRADE for doc_id in sorted(chain)},
            "evidence_chain": chain,
        }

    def reader(self, dataset: str) -> RowReader:
        prefix = ROW_FORMATS[self.name].document_prefix
        return RowReader(
            row_format=ROW_FORMATS[self.name],
            validate=self.validate,
            selection_fields=lambda row: {"id": row["_id"], "question": row["question"], "type": row["type"]},
            stratum=type_stratum,
            count_key=str,
            paragraphs=self.paragraphs,
            query=self.query,
            corpus_policy={
                "unit": "paragraph",
                "dedup_key": ["title", "paragraph_text"],
                "paragraph_text": f"the context sentences joined with {self.sentence_joiner!r}",
                "id": f"{prefix} + digest({{title, paragraph_text}})",
                "text": "title + \\n + paragraph_text",
                "includes": "every context paragraph of a selected question, distractors included",
            },
            judgment_policy={
                "grade": GRADE,
                "relevant": f"context paragraphs whose title a supporting fact names ({dataset} supporting_facts)",
                "judgments_complete": False,
            },
        )


def _context(f: Fields, context: Any, path: str) -> dict[str, list[str]]:
    """title -> sentences of a non-empty context; a title repeated with other sentences is refused."""
    f.array(context, path, nonempty=True)
    sentences_of: dict[str, list[str]] = {}
    for i, entry in enumerate(context):
        where = join(path, i)
        if not isinstance(entry, list) or len(entry) != 2:
            f.fail(where, "expected a [title, sentences] pair")
        title = f.string(entry[0], join(where, 0), nonempty=False)
        sentences = f.array(entry[1], join(where, 1))
        for j, sentence in enumerate(sentences):
            f.string(sentence, join(join(where, 1), j), nonempty=False)
        if title in sentences_of and sentences_of[title] != sentences:
            f.fail(where, f"title {title!r} appears twice in the row's context with different texts")
        sentences_of[title] = sentences
    return sentences_of


def _supporting_facts(f: Fields, facts: Any, path: str, sentences_of: dict[str, list[str]]) -> None:
    f.array(facts, path, nonempty=True)
    for i, fact in enumerate(facts):
        where = join(path, i)
        if not isinstance(fact, list) or len(fact) != 2:
            f.fail(where, "expected a [title, sentence index] pair")
        title = f.string(fact[0], join(where, 0), nonempty=False)
        index = f.integer(fact[1], join(where, 1), minimum=0)
        if title not in sentences_of:
            f.fail(join(where, 0), f"supporting title {title!r} is absent from the row's context")
        if index >= len(sentences_of[title]):
            f.fail(join(where, 1), f"sentence index {index} is beyond the {len(sentences_of[title])} "
                                   f"sentence(s) of paragraph {title!r}")
