"""Token-budget selection after one retrieval per query (evaluation side; docs/rescue.md).

A reader with a context budget cannot take a whole ranked list. Two selections are compared on the
same ranked list at each budget:

- `none`: the ranked prefix, stopping at the first document that does not fit.
- `packed`: greedy knapsack. Value of the document at rank r = 1/log2(r + 1) (the DCG discount);
  redundancy = the largest Jaccard similarity of its BM25 token set to any selected document;
  marginal value = value * (1 - redundancy). Repeatedly take, among the documents that fit and
  whose redundancy is below `skip_redundancy_at_least`, the one with the largest marginal value
  per token (ties: record id ascending). When none is left, backfill: the remaining documents in
  rank order, each taken if it still fits.

Token count of a document = the number of `bm25_v1` tokens of its text (title + newline +
paragraph), the same tokenizer the lexical channel uses, counted by the evaluator's own copy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evaluator.numbers import metrics
from evaluator.verification.recompute import bm25_tokens

PACKED = {"skip_redundancy_at_least": 0.5}


@dataclass(frozen=True)
class Selection:
    ids: list[str]  # selected documents, in the order they were taken
    tokens: int
    backfilled: int = 0


def token_count(text: str) -> int:
    return len(bm25_tokens(text))


def select_none(ranking: Sequence[str], tokens: Mapping[str, int], budget: int) -> Selection:
    chosen, spent = [], 0
    for doc in ranking:
        if spent + tokens[doc] > budget:
            break
        chosen.append(doc)
        spent += tokens[doc]
    return Selection(chosen, spent)


class Similarity:
    """Pairwise Jaccard of token sets, computed once per pair (shared across budgets)."""

    def __init__(self, token_sets: Mapping[str, frozenset]):
        self.sets = token_sets
        self.cache: dict[tuple[str, str], float] = {}

    def __call__(self, a: str, b: str) -> float:
        key = (a, b) if a < b else (b, a)
        value = self.cache.get(key)
        if value is None:
            x, y = self.sets[a], self.sets[b]
            union = len(x | y)
            value = len(x & y) / union if union else 0.0
            self.cache[key] = value
        return value


def select_packed(ranking: Sequence[str], tokens: Mapping[str, int], similarity: Similarity, budget: int,
                  skip_at: float = PACKED["skip_redundancy_at_least"]) -> Selection:
    value = {doc: 1.0 / math.log2(rank + 1) for rank, doc in enumerate(ranking, start=1)}
    redundancy = {doc: 0.0 for doc in ranking}
    remaining = list(ranking)
    chosen, spent = [], 0
    while True:
        best, best_key = None, None
        for doc in remaining:
            if spent + tokens[doc] > budget or redundancy[doc] >= skip_at:
                continue
            key = (-(value[doc] * (1.0 - redundancy[doc])) / max(tokens[doc], 1), doc)
            if best_key is None or key < best_key:
                best, best_key = doc, key
        if best is None:
            break
        chosen.append(best)
        spent += tokens[best]
        remaining.remove(best)
        for doc in remaining:
            redundancy[doc] = max(redundancy[doc], similarity(doc, best))
    backfilled = 0
    for doc in list(remaining):  # rank order: unspent budget goes to what the ranking liked best
        if spent + tokens[doc] <= budget:
            chosen.append(doc)
            spent += tokens[doc]
            remaining.remove(doc)
            backfilled += 1
    return Selection(chosen, spent, backfilled)


def outcome(selection: Selection, judgments: Mapping[str, int], chain: Sequence[str]) -> dict:
    """Recall and chain coverage of the selected set: the report's metrics with the whole selection
    as the cutoff (one definition of each, in `evaluator.numbers.metrics`)."""
    everything = len(selection.ids)
    return {
        "tokens_spent": selection.tokens,
        "documents": everything,
        "backfilled": selection.backfilled,
        "evidence_recall": metrics.recall(selection.ids, judgments, everything),
        "chain_coverage": metrics.chain_coverage(selection.ids, chain, everything),
    }


def budget_rows(ranking: Sequence[str], texts: Mapping[str, str], judgments: Mapping[str, int],
                chain: Sequence[str], budgets: Sequence[int]) -> dict[str, dict[int, dict]]:
    """selection -> budget -> outcome, for one ranked list of document ids."""
    tokens = {doc: token_count(texts[doc]) for doc in ranking}
    similarity = Similarity({doc: frozenset(bm25_tokens(texts[doc])) for doc in ranking})
    return {
        "none": {b: outcome(select_none(ranking, tokens, b), judgments, chain) for b in budgets},
        "packed": {b: outcome(select_packed(ranking, tokens, similarity, b), judgments, chain) for b in budgets},
    }
