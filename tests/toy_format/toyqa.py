"""Toy QA rows (`toyqa_v1`): HotpotQA's row shape without `level`, sentences joined with " " (the toy
format tests/importer/test_formats.py adds through docs/extend-a-format.md)."""

from __future__ import annotations

from ground.fields import Fields
from importer.formats.context import ContextFormat

KEYS = ("_id", "answer", "question", "supporting_facts", "context", "type")


def _no_more_checks(f: Fields, row: dict, where: str) -> None:
    """Every key toyqa has is one the shared context checks read."""


TOYQA = ContextFormat("toyqa_v1", KEYS, (), " ", _no_more_checks).reader("ToyQA")
READERS = (TOYQA,)
