"""The rescue oracle: an UPPER BOUND, not a retrieval method (it reads the labels).

It moves every rescued document that the judgments mark as supporting to the front of the list,
keeping both groups in their retrieved order. No label-free policy that reorders the same list can
beat it on the rescued supports, so the gap between it and the real list bounds what any smarter
placement of the rescue lane could gain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def oracle_ranking(ranking: Sequence[str], rescued: Sequence[bool], judgments: Mapping[str, int]) -> list[str]:
    front = [doc for doc, r in zip(ranking, rescued) if r and judgments.get(doc, 0) > 0]
    moved = set(front)
    return front + [doc for doc in ranking if doc not in moved]
