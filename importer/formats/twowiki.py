"""2WikiMultihopQA rows (`2wikimultihopqa_v1`, docs/design.md §4.1). Ho et al., COLING 2020; Apache-2.0.
Sentences carry no leading space, so the paragraph text is the sentences joined with " ".
`evidences` must be present (it tells the format apart from HotpotQA's) and `entity_ids`,
`evidences_id`, `answer_id` may be (the release with Wikidata ids has them, the first did not);
none of them enters a document or a query."""

from __future__ import annotations

from ground.fields import Fields, join
from importer.formats.context import ContextFormat

KEYS = ("_id", "type", "question", "context", "supporting_facts", "evidences", "answer")
OPTIONAL_KEYS = ("entity_ids", "evidences_id", "answer_id")


def _evidences(f: Fields, row: dict, where: str) -> None:
    f.array(row["evidences"], join(where, "evidences"))


TWOWIKI_ROWS = ContextFormat("2wikimultihopqa_v1", KEYS, OPTIONAL_KEYS, " ", _evidences)
TWOWIKI = TWOWIKI_ROWS.reader("2WikiMultihopQA")

READERS = (TWOWIKI,)  # bound by importer/formats/__init__.py to ground/artifacts.py's declaration
