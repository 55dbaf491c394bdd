"""2WikiMultihopQA rows (`2wikimultihopqa_v1`, DESIGN §4.1). Ho et al., COLING 2020; Apache-2.0.
Sentences carry no leading space, so the paragraph text is the sentences joined with " ".
`evidences`, `entity_ids`, `evidences_id` and `answer_id` must be present (they tell the format
apart) but never enter a document or a query."""

from __future__ import annotations

from importer.formats.context import ContextFormat
from protocols.fields import Fields, join

KEYS = ("_id", "type", "question", "context", "supporting_facts", "evidences", "answer", "entity_ids",
        "evidences_id", "answer_id")


def _evidences(f: Fields, row: dict, where: str) -> None:
    f.array(row["evidences"], join(where, "evidences"))


TWOWIKI_ROWS = ContextFormat("2wikimultihopqa_v1", KEYS, " ", _evidences)
TWOWIKI = TWOWIKI_ROWS.reader("2WikiMultihopQA")
