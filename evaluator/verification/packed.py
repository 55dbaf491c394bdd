"""The checker's heavy inputs as a few flat arrays: the document vectors as one float64 matrix with
its row norms, and BM25's document lengths and postings as compressed columns (docs/scale.md,
"Workers that share their inputs").

A `Checker` scores from these arrays whether they were built in this process (`pack`) or mapped
read-only from the files a caller wrote for its workers (evaluator/verification/worker_inputs.py), so the
arithmetic is the same code over the same values in both cases. Per-document Python objects (one
float64 array, one term counter per document) cost more than the arrays themselves at 40,000
documents and could not be shared between processes.

`PackedBm25` scores exactly as `recompute.Bm25` (same terms, same float64 operations in the same
order: tested bit for bit); a document's term counts, which only pseudo-relevance feedback reads
for a few documents per query, are recounted from its text when asked for.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluator.verification.recompute import Bm25Scoring, bm25_tokens

ARRAYS = ("matrix", "norms", "lengths", "offsets", "positions", "frequencies")


@dataclass(frozen=True)
class Packed:
    """`vector_ids[i]` is row i of `matrix` (the fixture's vector order), `text_ids[j]` position j of
    the BM25 arrays (the source's document order); the postings of `terms[t]` are
    `positions[offsets[t]:offsets[t + 1]]` (ascending) with their term counts in `frequencies`."""

    vector_ids: list[str]
    matrix: np.ndarray  # float64, one row per document
    norms: np.ndarray  # float64, |row|
    text_ids: list[str]
    terms: list[str]
    lengths: np.ndarray  # float64, tokens per document
    offsets: np.ndarray  # int64, len(terms) + 1
    positions: np.ndarray  # int64
    frequencies: np.ndarray  # float64

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in ARRAYS}


def pack(doc_vectors: Mapping[str, np.ndarray], texts: Mapping[str, str]) -> Packed:
    """The arrays of a fixture's document vectors and of its documents' texts (by document id)."""
    vector_ids = list(doc_vectors)
    rows = [np.asarray(v, dtype=np.float64) for v in doc_vectors.values()]
    matrix = np.vstack(rows) if rows else np.zeros((0, 0))
    del rows
    norms = np.linalg.norm(matrix, axis=1)
    text_ids = list(texts)
    term_index: dict[str, int] = {}
    owners: list[int] = []  # per posting: its term
    where: list[int] = []  # per posting: its document's position
    counts: list[int] = []
    lengths = np.zeros(len(text_ids), dtype=np.float64)
    for position, text in enumerate(texts.values()):
        tokens = bm25_tokens(text)
        lengths[position] = len(tokens)
        for term, count in Counter(tokens).items():
            owners.append(term_index.setdefault(term, len(term_index)))
            where.append(position)
            counts.append(count)
    # grouped by term, each term's postings in document order (a stable sort keeps it)
    order = np.argsort(np.asarray(owners, dtype=np.int64), kind="stable")
    positions = np.asarray(where, dtype=np.int64)[order]
    frequencies = np.asarray(counts, dtype=np.float64)[order]
    offsets = np.zeros(len(term_index) + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.asarray(owners, dtype=np.int64), minlength=len(term_index)), out=offsets[1:])
    return Packed(vector_ids, matrix, norms, text_ids, list(term_index), lengths, offsets, positions, frequencies)


class _Postings:
    """term -> (positions, term counts as float64), views into the packed columns."""

    __slots__ = ("index", "offsets", "positions", "frequencies")

    def __init__(self, terms: Sequence[str], offsets: np.ndarray, positions: np.ndarray, frequencies: np.ndarray):
        self.index = {term: t for t, term in enumerate(terms)}
        self.offsets, self.positions, self.frequencies = offsets, positions, frequencies

    def get(self, term: str, default=None):
        t = self.index.get(term)
        if t is None:
            return default
        start, end = int(self.offsets[t]), int(self.offsets[t + 1])
        return self.positions[start:end], self.frequencies[start:end]

    def document_frequency(self, term: str) -> int:
        t = self.index.get(term)
        return 0 if t is None else int(self.offsets[t + 1] - self.offsets[t])


class _TermCounts(Mapping):
    """record id -> its term counts, recounted from the text (the few most recent kept)."""

    def __init__(self, text_of: Callable[[str], str], ids: Sequence[str], position: Mapping[str, int]):
        self.text_of, self.ids, self.position = text_of, ids, position
        self._recent: dict[str, Counter] = {}

    def __getitem__(self, rid: str) -> Counter:
        found = self._recent.get(rid)
        if found is None:
            if rid not in self.position:
                raise KeyError(rid)
            if len(self._recent) >= 256:
                self._recent.clear()
            found = self._recent[rid] = Counter(bm25_tokens(self.text_of(rid)))
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


class PackedBm25(Bm25Scoring):
    """BM25 (k1 1.2, b 0.75) over packed postings; `scores` is `recompute.Bm25.scores` exactly."""

    def __init__(self, ids: Sequence[str], packed: Packed, text_of: Callable[[str], str],
                 k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.ids = list(ids)
        self.position = {rid: i for i, rid in enumerate(self.ids)}
        self.lengths = packed.lengths
        self.postings = _Postings(packed.terms, packed.offsets, packed.positions, packed.frequencies)
        self.term_frequencies = _TermCounts(text_of, self.ids, self.position)
        # the sum of integer lengths is exact in fsum, as over the per-document integers
        self._average = math.fsum(self.lengths.tolist()) / len(self.ids) if self.ids else 0.0

    @property
    def average_length(self) -> float:
        return self._average

    def document_frequency(self, term: str) -> int:
        return self.postings.document_frequency(term)

    def prepared(self) -> "PackedBm25":
        return self

    def _arrays(self) -> "PackedBm25":
        """What `recompute.Bm25._arrays` gives (ids, position, lengths, postings): these arrays."""
        return self
