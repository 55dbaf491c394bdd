"""Ordering helpers shared by the methods: top-N by score with ties broken by record id."""

from __future__ import annotations

import numpy as np


def top_by_score(scores: np.ndarray, id_rank: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the `limit` best scores, ordered by score desc then record id asc.

    argpartition finds the limit-th best score; every index scoring at least that much is kept,
    so an exact tie straddling the cut is resolved by id, never by partition order.
    """
    if limit <= 0 or len(scores) == 0:
        return np.zeros(0, dtype=np.int64)
    candidates = np.arange(len(scores))
    if len(scores) > limit:
        kth = scores[np.argpartition(-scores, limit - 1)[limit - 1]]
        candidates = np.flatnonzero(scores >= kth)
    order = np.lexsort((id_rank[candidates], -scores[candidates]))
    return candidates[order[:limit]]
