"""What a route's verifier may read of the page's Checker: its type, which the Checker
(evaluator/verification/verify.py) satisfies.

A verifier sits below the Checker (the `verification-layers` contract): it is handed the Checker
and may not import it. This protocol names what it is handed, so the type checker holds every
verifier to it: the frozen inputs and their maps, the relations, the recomputed channels and the
two caches (`work(query).derived` per query, `derived_table(key, build)` per campaign).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, Protocol, TypeVar

import numpy as np

from evaluator.inputs import Frozen
from evaluator.verification import recompute as rc
from evaluator.verification.packed import PackedBm25

T = TypeVar("T")


class QueryShare(Protocol):
    """What every page of one query shares: what a verifier derives once per query, keyed by it."""

    @property
    def derived(self) -> dict[Any, Any]: ...


class PageChecker(Protocol):
    @property
    def frozen(self) -> Frozen: ...
    @property
    def profiles(self) -> Mapping[str, Any]: ...  # the protocol's ranking profiles by name
    @property
    def record_of(self) -> Mapping[str, str]: ...  # fixture document or node id -> lab record id
    @property
    def doc_of(self) -> Mapping[str, str]: ...
    @property
    def revision_of(self) -> Mapping[str, int]: ...
    @property
    def texts(self) -> Mapping[str, str]: ...  # record id -> its document's text
    @property
    def vectors(self) -> Mapping[str, np.ndarray]: ...  # record id -> its float64 vector
    @property
    def cosine_index(self) -> rc.CosineIndex: ...
    @property
    def edges(self) -> Mapping[str, rc.Edge]: ...  # lab relation id -> the frozen relation
    @property
    def relation_revision(self) -> Mapping[str, int]: ...
    @property
    def provenance(self) -> Mapping[str, dict]: ...  # lab relation id -> what produced it
    @property
    def adjacency(self) -> Mapping[str, list[tuple[str, str, str, str]]]: ...

    @property
    def bm25(self) -> PackedBm25: ...  # the frozen texts' BM25 with their term counts (PRF's expansion)

    def bm25_scores(self, query: Mapping) -> rc.Scores: ...
    def cosines(self, query: Mapping) -> rc.Scores: ...
    def fused(self, query: Mapping, profile_name: str) -> tuple[dict, list[str], dict[str, list[tuple[str, float]]]]:
        ...
    def work(self, query: Mapping) -> QueryShare: ...
    def derived_table(self, key: Hashable, build: Callable[[], T]) -> T: ...
