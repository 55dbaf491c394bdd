"""Which rendering a report's pages were drawn with: the edition, kept in the document itself.

The audit renders every page again from the JSON and compares bytes, so a page can only change
under a new edition that the document names: a report exported before it renders as it did then,
one exported after renders the new way. `edition(document)` is 0 for a document that names none.

| edition | what it adds |
|---|---|
| 0 | the pages as they were before editions |
| 1 | the answer box opens with the synthetic-corpus warning on the synthetic corpus; the boards say in words whether each method is separated from the best one and from the baseline, mark the question's two methods, keep their adjacent pairs within 800 px, and draw up to 24 methods with distinct colour and marker, numbered, without overlapping labels |
| 2 | the answer box asks its question as a question and gives the board's Holm-adjusted p of the same pair; a p that rounds to the board's alpha shows the digits that decide it; a board says why a method can be told apart from the baseline while one ranked above it is not; quoted commands read as code in the HTML; the category table and heatmap put methods in rows, so 16 methods fit 1,400 px |
"""

from __future__ import annotations

from collections.abc import Mapping

FIELD = "view_edition"
CURRENT = 2


def edition(document: Mapping | None) -> int:
    return int((document or {}).get(FIELD, 0))
