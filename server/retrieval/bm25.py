"""`bm25_v1` (docs/design.md §7) over a scope's inverted index.

score(d) = sum over distinct query terms t present in d, in first-occurrence order, of
(idf(t) * (tf * (k1 + 1))) / (tf + k1 * (1 - b + b * |d| / avgdl)), with
idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), N = current records of the scope (records with
no tokens count too), |d| = token count, avgdl = total tokens / N. Only documents holding a
query term are ranked; ties go to the smaller record id. The float64 grouping of the term score
is part of the contract (docs/retrieval.md, `bm25_v1`): grouped otherwise, some scores differ in
the last bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from protocols.families.lists.lexical import BM25_V1
from server.retrieval.indexes import ScopeIndex
from server.retrieval.tokenize import bm25_tokens

K1 = BM25_V1["k1"]
B = BM25_V1["b"]


@dataclass(frozen=True)
class LexicalRanking:
    ids: list[str]  # best first
    scores: list[float]
    matched: int  # documents holding at least one query term
    terms: list[str]  # the deduplicated query terms


def query_terms(query: str) -> list[str]:
    return list(dict.fromkeys(bm25_tokens(query)))


def _length_norms(index: ScopeIndex) -> np.ndarray:
    inverted = index.lexical
    lengths = np.array(inverted.lengths, dtype=np.float64)
    avgdl = inverted.total_length / inverted.documents
    return K1 * (1.0 - B + B * lengths / avgdl)


# A term in at least one document in DENSE_SHARE is scored from a weight per slot (zero where the
# term is absent): adding that array whole is about eight times cheaper per element than a
# scattered add, and adding 0.0 leaves a (non-negative) score bit for bit unchanged, so both
# forms give the same sums in the same term order.
DENSE_SHARE = 8


@dataclass(frozen=True)
class TermWeights:
    values: np.ndarray  # per posting (sparse), or per slot (dense)
    dense: bool


def _term_weights(index: ScopeIndex, term: str, slots: np.ndarray, tfs: np.ndarray, slot_count: int) -> TermWeights:
    """Each posting's BM25 term score, the same float64 expression in the same order as scoring
    it at query time, computed once per term and index version (eager scoring, as bm25s does):
    a query then only adds the cached arrays, in query-term order, so every sum is bit-identical."""
    inverted = index.lexical
    n = inverted.documents
    norms = inverted.derived("bm25_v1_norms", lambda: _length_norms(index))
    df = len(slots)
    idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    weights = idf * (tfs * (K1 + 1.0)) / (tfs + norms[slots])
    if df * DENSE_SHARE < slot_count:
        return TermWeights(weights, dense=False)
    dense = np.zeros(slot_count, dtype=np.float64)
    dense[slots] = weights
    return TermWeights(dense, dense=True)


def top_positive(scores: np.ndarray, id_rank: np.ndarray, limit: int, positive: int) -> np.ndarray:
    """The slots of the `limit` best positive scores (`positive` of them are), by score desc then
    record id asc: `ranking.top_by_score` over the positive slots, without gathering them first.
    With more positives than `limit`, the limit-th largest score is positive, so every slot at or
    above it is a positive one and an exact tie straddling the cut is resolved by id."""
    if limit <= 0 or positive == 0:
        return np.zeros(0, dtype=np.int64)
    if positive > limit:
        cut = len(scores) - limit
        candidates = np.flatnonzero(scores >= np.partition(scores, cut)[cut])
    else:
        candidates = np.flatnonzero(scores)
    order = np.lexsort((id_rank[candidates], -scores[candidates]))
    return candidates[order[:limit]]


def term_scores(index: ScopeIndex, terms: Sequence[tuple[str, float | None]]) -> np.ndarray:
    """Per slot, the sum over `terms`, in their order, of each term's bm25_v1 score times its
    weight (None: the score itself, as plain BM25 adds it; RM3's expanded query weighs its terms)."""
    inverted = index.lexical
    slots_total = len(index.slot_ids)
    scores = np.zeros(slots_total, dtype=np.float64)
    if not (inverted.documents and inverted.total_length):
        return scores
    for term, weight in terms:
        postings = inverted.postings(term)
        if postings is None:
            continue
        slots, tfs = postings
        weights = inverted.term_derived(term, "bm25_v1", lambda: _term_weights(index, term, slots, tfs, slots_total))
        values = weights.values if weight is None else weight * weights.values
        if not weights.dense:
            scores[slots] += values
        elif len(values) == slots_total:
            scores += values
        else:  # slots were added without a text change (cached per index version): scatter
            scores[slots] += values[slots]
    return scores


def ranked(index: ScopeIndex, scores: np.ndarray, limit: int, terms: list[str]) -> LexicalRanking:
    """The `limit` best of per-slot scores; every term score is positive (idf > 0, tf >= 1), so the
    matched documents are the nonzero ones."""
    matched = int(np.count_nonzero(scores))
    chosen = top_positive(scores, index.id_rank(), limit, matched)
    return LexicalRanking(ids=[index.slot_ids[s] for s in chosen.tolist()], scores=scores[chosen].tolist(),
                          matched=matched, terms=terms)


def bm25(index: ScopeIndex, query: str, limit: int) -> LexicalRanking:
    terms = query_terms(query)
    return ranked(index, term_scores(index, [(term, None) for term in terms]), limit, terms)
