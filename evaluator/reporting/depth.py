"""Evaluation depth: how many documents each method returns and each ranking is judged to.

A protocol that declares no `evaluation.depth` is judged to `evaluation.k` (every protocol frozen
before depth existed, whose methods return k documents). A deeper protocol declares `depth` (at most
the lab's search limit, 100) with recall cutoffs up to it, and gets the recall-at-k curve.
"""

from __future__ import annotations

from collections.abc import Mapping


def evaluation_depth(evaluation: Mapping) -> int:
    return int(evaluation.get("depth", evaluation["k"]))
