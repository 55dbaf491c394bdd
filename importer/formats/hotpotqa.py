"""HotpotQA distractor rows (`hotpotqa_distractor_v1`, docs/design.md §4.1). Yang et al., EMNLP 2018;
CC BY-SA 4.0. Each sentence after a paragraph's first carries its own leading space, so the
paragraph text is the sentences joined with ""."""

from __future__ import annotations

from ground.fields import Fields, join
from importer.formats.context import ContextFormat

KEYS = ("_id", "answer", "question", "supporting_facts", "context", "type", "level")


def _level(f: Fields, row: dict, where: str) -> None:
    f.string(row["level"], join(where, "level"))


HOTPOTQA_ROWS = ContextFormat("hotpotqa_distractor_v1", KEYS, (), "", _level)
HOTPOTQA = HOTPOTQA_ROWS.reader("HotpotQA")

READERS = (HOTPOTQA,)  # bound by importer/formats/__init__.py to ground/artifacts.py's declaration
