"""Which rendering a report's pages were drawn with: the edition, kept in the document itself.

The audit renders every page again from the JSON and compares bytes, so a page can only change
under a new edition that the document names: a report exported before it renders as it did then,
one exported after renders the new way. `edition(document)` is 0 for a document that names none.

| edition | what it adds |
|---|---|
| 0 | the pages as they were before editions |
| 1 | the answer box opens with the synthetic-corpus warning on the synthetic corpus; the boards say in words whether each method is separated from the best one and from the baseline, mark the question's two methods, keep their adjacent pairs within 800 px, and draw up to 24 methods with distinct colour and marker, numbered, without overlapping labels |
"""

from __future__ import annotations

from collections.abc import Mapping

FIELD = "view_edition"
CURRENT = 1


def edition(document: Mapping | None) -> int:
    return int((document or {}).get(FIELD, 0))
