"""The pure cores of the PRF family (docs/prf.md): RM3's expanded query and Rocchio's moved vector.

RM3 (`bm25_rm3_v1`, Anserini's reading of Lavrenko and Croft's relevance model, RM3 variant):
1. the `fb_docs` best bm25_v1 documents of the query are the feedback set, with their scores s(d);
2. each feedback document's model: its terms that pass the filter (in at most `max_document_share`
   of the scope's documents, length within [min_length, max_length]), each tf(t, d) / the sum of
   the kept terms' tf in d;
3. the relevance model rm(t) = sum over the feedback set, best first, of model_d(t) * s(d); the
   `fb_terms` largest (ties by term) are kept and scaled to sum 1;
4. the query model: each distinct query term 1 / (number of distinct terms);
5. the expanded query: w(t) = original_query_weight * q(t) + (1 - original_query_weight) * rm(t)
   over both sets of terms, ordered by weight desc then term asc.
The second pass scores d by sum over the expanded terms, in that order, of w(t) * the bm25_v1 term
score of t in d (page.py). Every value is float64; sums of many terms use math.fsum so the result
does not depend on the order of a dict.

Rocchio (`cosine_rocchio_v1`): q' = normalize(unit(q) + beta * mean of the unit vectors of the
`fb_docs` best cosine documents), in float64.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np


def document_model(counts: Mapping[str, int], keep: Callable[[str], bool]) -> dict[str, float]:
    """A feedback document's term distribution over its kept terms (step 2)."""
    kept = {term: tf for term, tf in counts.items() if keep(term)}
    length = sum(kept.values())
    return {term: tf / length for term, tf in kept.items()} if length else {}


def term_filter(profile: Mapping, document_frequency: Callable[[str], int], documents: int) -> Callable[[str], bool]:
    """Step 2's filter: not too common in the scope (Anserini skips terms in over 10% of documents;
    with the lab's tokenizer, which has no stopword list, this is what removes function words) and
    of a reasonable length."""
    rule = profile["term_filter"]

    def keep(term: str) -> bool:
        return (rule["min_length"] <= len(term) <= rule["max_length"]
                and document_frequency(term) <= rule["max_document_share"] * documents)
    return keep


def relevance_model(feedback: Sequence[tuple[Counter, float]], keep: Callable[[str], bool],
                    fb_terms: int) -> list[tuple[str, float]]:
    """Steps 2-3: [(term, rm(t))], the `fb_terms` heaviest, scaled to sum 1, heaviest first."""
    parts: dict[str, list[float]] = {}
    for counts, score in feedback:
        for term, share in document_model(counts, keep).items():
            parts.setdefault(term, []).append(share * score)
    weights = {term: math.fsum(values) for term, values in parts.items()}
    top = sorted(weights.items(), key=lambda item: (-item[1], item[0]))[:fb_terms]
    total = math.fsum(weight for _, weight in top)
    return [(term, weight / total) for term, weight in top] if total > 0 else []


def expanded_query(query_terms: Sequence[str], model: Sequence[tuple[str, float]],
                   original_weight: float) -> list[tuple[str, float]]:
    """Steps 4-5: [(term, w(t))], weight desc then term asc."""
    q = {term: 1.0 / len(query_terms) for term in query_terms} if query_terms else {}
    rm = dict(model)
    weights = {term: original_weight * q.get(term, 0.0) + (1.0 - original_weight) * rm.get(term, 0.0)
               for term in set(q) | set(rm)}
    return sorted(((t, w) for t, w in weights.items() if w > 0), key=lambda item: (-item[1], item[0]))


def rm3(query_terms: Sequence[str], feedback: Sequence[tuple[Counter, float]], profile: Mapping,
        document_frequency: Callable[[str], int], documents: int) -> list[tuple[str, float]]:
    """The expanded query of bm25_rm3_v1 from its feedback documents (term counts, first-pass score)."""
    keep = term_filter(profile, document_frequency, documents)
    model = relevance_model(feedback, keep, profile["fb_terms"])
    return expanded_query(query_terms, model, profile["original_query_weight"])


def rocchio(unit_query: np.ndarray, unit_documents: Sequence[np.ndarray], beta: float) -> np.ndarray:
    """cosine_rocchio_v1's moved query, unit length, float64 (the query itself without feedback)."""
    moved = np.asarray(unit_query, dtype=np.float64).copy()
    if len(unit_documents):
        mean = np.mean(np.vstack([np.asarray(d, dtype=np.float64) for d in unit_documents]), axis=0)
        moved = moved + beta * mean
    return moved / math.sqrt(float(np.dot(moved, moved)))
