"""Independent recomputation of the channels every method stands on, from the frozen inputs
(docs/design.md §7): BM25, exact cosine, their fusion and the relations as edges.

Nothing here is shared with `server/`: the tokenizer, BM25, cosine and fusion are written again
from the specification, so a page that agrees with them was checked, not echoed. What one family
alone computes is recomputed beside its verifier (verifiers/), the fused base lists' near ties in
fused_lists.py.

- BM25 and cosine are computed in float64 (cosine from the fixture's float32 vectors), so they
  agree with the server's floats only up to rounding: channel orders are compared with a tolerance
  and a near-tie may be ordered either way (`near_tie` below), never a real difference.
- Fusion scores are rank-derived, so they are exact rationals (GMP's, through
  `evaluator.verification.exact`) and compared exactly.
- A query's scores are one float64 array over the records in a fixed order (`Scores`), read as a
  mapping: no per-record dict is built, which at 40,000 documents cost more than the scoring.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

from evaluator.verification.exact import ZERO, Rational, parse, rational
from protocols.fusion import check_fusion_bindings

# rounding room between float64 recomputation and the server's arithmetic (float32 matrices for
# cosine, another summation order for BM25): far below any real score difference
BM25_TOLERANCE = 1e-9
COSINE_TOLERANCE = 2e-6


class Scores(Mapping):
    """One query's scores as a read-only mapping record id -> float, held as one float64 array over
    a fixed record order (`ids`, `position`), with `present` marking the records that have a score
    (BM25 scores only records holding a query term; every record has a cosine). Iteration follows
    the record order. `top` and `count_at_least` work on the array directly."""

    # the array is `array`, not `values`: a Mapping's values() must stay callable
    __slots__ = ("ids", "position", "array", "present", "_size")

    def __init__(self, ids: Sequence[str], position: Mapping[str, int], values: np.ndarray,
                 present: np.ndarray | None = None):
        self.ids, self.position, self.array, self.present = ids, position, values, present
        self._size = len(ids) if present is None else int(np.count_nonzero(present))

    def __getitem__(self, rid: str) -> float:
        i = self.position[rid]
        if self.present is not None and not self.present[i]:
            raise KeyError(rid)
        return float(self.array[i])

    def __contains__(self, rid) -> bool:
        i = self.position.get(rid)
        return i is not None and (self.present is None or bool(self.present[i]))

    def __iter__(self) -> Iterator[str]:
        if self.present is None:
            return iter(self.ids)
        return (self.ids[int(i)] for i in np.flatnonzero(self.present))

    def __len__(self) -> int:
        return self._size

    def _candidates(self, min_score: float | None) -> np.ndarray:
        keep = np.ones(len(self.ids), dtype=bool) if self.present is None else self.present.copy()
        if min_score is not None:
            keep &= self.array >= min_score
        return np.flatnonzero(keep)

    def top(self, depth: int | None, min_score: float | None) -> list[tuple[str, float]]:
        """`ordered(self, depth, min_score)`: score descending, ties by record id ascending."""
        index = self._candidates(min_score)
        values = self.array[index]
        if depth is not None and 0 <= depth < len(index):
            if depth == 0:
                return []
            kth = np.partition(values, len(values) - depth)[len(values) - depth]
            keep = values >= kth
            index, values = index[keep], values[keep]
        items = list(zip([self.ids[int(i)] for i in index], values.tolist()))
        items.sort(key=lambda item: (-item[1], item[0]))
        return items if depth is None else items[:depth]

    def count_at_least(self, min_score: float | None) -> int:
        return len(self) if min_score is None else int(len(self._candidates(min_score)))


# `[^\W_]`: a character that `str.isalnum` accepts (re's Unicode \w is exactly isalnum or "_")
_ALNUM_RUN = re.compile(r"[^\W_]+")


def bm25_tokens(text: str) -> list[str]:
    """Maximal runs of Unicode letters and digits (`str.isalnum`, so `_` splits), each lowercased
    (after the split: lowercasing can add a character that is not alphanumeric, as "İ" does).
    tests/evaluator/test_recompute.py compares it with a character loop over all of Unicode."""
    return [run.lower() for run in _ALNUM_RUN.findall(text)]


class Bm25Scoring:
    """The BM25 formula and its one summation order, shared by `Bm25` and the packed index
    (evaluator/verification/packed.py), so both score bit for bit alike. A subclass provides `k1`,
    `b`, `lengths` (one per record), `average_length`, `document_frequency` and `_arrays()` (ids,
    position, lengths and per-term postings as arrays)."""

    k1: float
    b: float
    lengths: Any

    @property
    def average_length(self) -> float:
        raise NotImplementedError

    def document_frequency(self, term: str) -> int:
        raise NotImplementedError

    def _arrays(self) -> Any:
        raise NotImplementedError

    def idf(self, term: str) -> float:
        n = len(self.lengths)
        df = self.document_frequency(term)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> Scores:
        """Score of every record holding at least one query term (terms deduplicated).

        Per record, the terms' contributions idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl))
        are added in query-term order starting from 0.0, element by element in numpy with the same
        operations in the same order as the scalar formula, so the sums are the scalar sums bit for
        bit (tested) at a fraction of the cost on a 40,000-document corpus.
        """
        terms = list(dict.fromkeys(bm25_tokens(query)))
        arrays = self._arrays()
        avgdl = self.average_length
        total = np.zeros(len(arrays.ids), dtype=np.float64)
        touched = np.zeros(len(arrays.ids), dtype=bool)
        for term in terms:
            posted = arrays.postings.get(term)
            if posted is None:
                continue
            positions, tf = posted
            idf = self.idf(term)
            norm = self.k1 * (1.0 - self.b + self.b * arrays.lengths[positions] / avgdl)
            total[positions] += idf * tf * (self.k1 + 1.0) / (tf + norm)
            touched[positions] = True
        return Scores(arrays.ids, arrays.position, total, touched)


@dataclass
class Bm25(Bm25Scoring):
    """BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5)/(df + 0.5))) over a fixed set of records."""

    k1: float = 1.2
    b: float = 0.75
    term_frequencies: dict[str, Counter] = field(default_factory=dict)
    lengths: dict[str, int] = field(default_factory=dict)
    postings: dict[str, list[str]] = field(default_factory=dict)
    _cache: "_Bm25Arrays | None" = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, texts: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> "Bm25":
        index = cls(k1=k1, b=b)
        for record_id, text in texts.items():
            tokens = bm25_tokens(text)
            counts = Counter(tokens)
            index.term_frequencies[record_id] = counts
            index.lengths[record_id] = len(tokens)
            for term in counts:
                index.postings.setdefault(term, []).append(record_id)
        return index

    @property
    def average_length(self) -> float:
        return math.fsum(self.lengths.values()) / len(self.lengths) if self.lengths else 0.0

    def document_frequency(self, term: str) -> int:
        return len(self.postings.get(term, ()))

    def prepared(self) -> "Bm25":
        """Builds the scoring arrays now (else the first query pays for them)."""
        self._arrays()
        return self

    def _arrays(self) -> "_Bm25Arrays":
        if self._cache is None:
            ids = list(self.lengths)
            position = {rid: i for i, rid in enumerate(ids)}
            postings = {term: (np.array([position[r] for r in records], dtype=np.int64),
                               np.array([self.term_frequencies[r][term] for r in records], dtype=np.float64))
                        for term, records in self.postings.items()}
            self._cache = _Bm25Arrays(ids, position, np.array([self.lengths[r] for r in ids], dtype=np.float64),
                                      postings)
        return self._cache


@dataclass(frozen=True)
class _Bm25Arrays:
    ids: list[str]
    position: dict[str, int]
    lengths: np.ndarray  # float64, in ids order
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (positions, term frequencies as float64)


class CosineIndex:
    """Every record's vector in one float64 matrix: a query's exact cosines in one product.

    Same formula as `cosines` (dot / (|q| * |v|), clamped); a matrix-vector product may sum in
    another order than one dot product per record, so values can differ in the last bit, far
    inside COSINE_TOLERANCE. Built once per campaign (the vectors are frozen).
    """

    def __init__(self, vectors: Mapping[str, np.ndarray]):
        self._blas = ThreadpoolController()
        self.ids = list(vectors)
        self.position = {rid: i for i, rid in enumerate(self.ids)}
        rows = [np.asarray(v, dtype=np.float64) for v in vectors.values()]
        self.matrix = np.vstack(rows) if rows else np.zeros((0, 0))
        self.norms = np.linalg.norm(self.matrix, axis=1)

    @classmethod
    def of_rows(cls, ids: Sequence[str], matrix: np.ndarray, norms: np.ndarray) -> "CosineIndex":
        """The index over a matrix already built (row i is `ids[i]`'s float64 vector, `norms` its
        row norms as `np.linalg.norm(matrix, axis=1)` gives them), held as given: no copy, so a
        read-only mapped matrix stays shared."""
        index = cls.__new__(cls)
        index._blas = ThreadpoolController()
        index.ids = list(ids)
        index.position = {rid: i for i, rid in enumerate(index.ids)}
        index.matrix, index.norms = matrix, norms
        return index

    def row(self, rid: str) -> np.ndarray:
        """`rid`'s float64 vector (a view of its row)."""
        return self.matrix[self.position[rid]]

    def scores(self, query: np.ndarray) -> Scores:
        q = np.asarray(query, dtype=np.float64)
        # one BLAS thread: a matrix-vector product over a few thousand rows is over before a thread
        # pool wakes, and checks run one process per core (measured 0.2 ms on one thread, 16 ms on
        # two under load, 1,687 x 384)
        with self._blas.limit(limits=1, user_api="blas"):
            product = self.matrix @ q
        values = np.clip(product / (float(np.linalg.norm(q)) * self.norms), -1.0, 1.0)
        return Scores(self.ids, self.position, values)


def cosines(query: np.ndarray, vectors: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Exact cosine in float64 of the query against every record's vector, clamped to [-1, 1]."""
    q = np.asarray(query, dtype=np.float64)
    qn = float(np.linalg.norm(q))
    out = {}
    for record_id, vec in vectors.items():
        v = np.asarray(vec, dtype=np.float64)
        value = float(np.dot(q, v)) / (qn * float(np.linalg.norm(v)))
        out[record_id] = min(1.0, max(-1.0, value))
    return out


def ordered(scores: Mapping[str, float], depth: int | None = None, min_score: float | None = None) -> list[tuple[str, float]]:
    """Score descending, ties by record id ascending; optionally only scores >= min_score.

    With a depth well below the number of scores, only the records scoring at least the depth-th
    best score are sorted: every record of the top `depth` is among them, ties included, so the
    result is the full sort's prefix exactly."""
    if isinstance(scores, Scores):
        return scores.top(depth, min_score)
    if depth is not None and 0 < depth and 4 * depth < len(scores):
        ids = list(scores)
        values = np.fromiter(scores.values(), dtype=np.float64, count=len(ids))
        if min_score is not None:
            keep = np.flatnonzero(values >= min_score)
            ids, values = [ids[i] for i in keep], values[keep]
        if depth < len(ids):
            kth = np.partition(values, len(values) - depth)[len(values) - depth]
            keep = np.flatnonzero(values >= kth)
            ids, values = [ids[i] for i in keep], values[keep]
        items = list(zip(ids, values.tolist()))
        items.sort(key=lambda item: (-item[1], item[0]))
        return items[:depth]
    items = [(rid, s) for rid, s in scores.items() if min_score is None or s >= min_score]
    items.sort(key=lambda item: (-item[1], item[0]))
    return items if depth is None else items[:depth]


def count_at_least(scores: Mapping[str, float], min_score: float | None) -> int:
    if isinstance(scores, Scores):
        return scores.count_at_least(min_score)
    if min_score is None:
        return len(scores)
    return int(np.count_nonzero(np.fromiter(scores.values(), dtype=np.float64, count=len(scores)) >= min_score))


@functools.lru_cache(maxsize=4096)
def constant(value: float | int) -> Rational:
    """A profile's number as an exact rational, converted once (profiles hold a few dozen)."""
    return rational(value)


def rrf(channels: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int) -> dict[str, dict]:
    """Exact weighted reciprocal rank fusion: per record, 1-based channel ranks and exact score."""
    fused: dict[str, dict] = {}
    for name, ranking in channels.items():
        weight = constant(weights[name])
        for rank, record_id in enumerate(ranking, start=1):
            entry = fused.setdefault(record_id, {"ranks": {}, "score": ZERO})
            entry["ranks"][name] = rank
            entry["score"] += weight / (k + rank)
    return fused


# The fusion rules this verifier recomputes, by name (protocols/fusion.py declares them).
FUSERS = {"weighted_reciprocal_rank": rrf}
check_fusion_bindings("evaluator/verification/recompute.py", FUSERS)


def fuse(rule: str, channels: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int) -> dict[str, dict]:
    """The channels fused by the named rule (a profile's `fusion`): per record, ranks and exact score."""
    return FUSERS[rule](channels, weights, k)


def fused_order(fused: Mapping[str, Mapping]) -> list[str]:
    return sorted(fused, key=lambda rid: (-fused[rid]["score"], rid))


def parse_fraction(text: Any, where: str) -> Rational:
    return parse(text, where)


# ---- relations ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edge:
    relation_id: str
    kind: str
    source: str
    target: str


def adjacency(edges: Iterable[Edge]) -> dict[str, list[tuple[str, str, str, str]]]:
    """node -> [(relation id, direction, kind, other end)] sorted, both directions."""
    out: dict[str, list[tuple[str, str, str, str]]] = {}
    for edge in edges:
        out.setdefault(edge.source, []).append((edge.relation_id, "forward", edge.kind, edge.target))
        out.setdefault(edge.target, []).append((edge.relation_id, "backward", edge.kind, edge.source))
    for entries in out.values():
        entries.sort()
    return out


def near_tie(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))


def first_difference(have: Sequence, want: Sequence) -> int:
    """Index of the first position at which two lists differ (the shorter length when one is a
    prefix of the other); callers only ask when the lists differ."""
    return next((i for i, (a, b) in enumerate(zip(have, want)) if a != b), min(len(have), len(want)))


def near_tie_neighbours(ranked: list[tuple[str, float]], tolerance: float) -> dict[str, set[str]]:
    """For each id, its neighbours in the ranking whose recomputed score differs from its own by
    rounding only: the server's arithmetic may order such a pair either way, and nothing else."""
    out: dict[str, set[str]] = {}
    for (a, sa), (b, sb) in zip(ranked, ranked[1:]):
        if sa != sb and near_tie(sa, sb, tolerance):
            out.setdefault(a, set()).add(b)
            out.setdefault(b, set()).add(a)
    return out


def near_tie_ids(ranked: list[tuple[str, float]], tolerance: float) -> set[str]:
    """Ids that sit in a near tie with a neighbour (see `near_tie_neighbours`)."""
    return set(near_tie_neighbours(ranked, tolerance))
