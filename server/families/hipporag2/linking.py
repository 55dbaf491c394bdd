"""From a query's cosines to HippoRAG 2's seeds (protocols/families/graphs/hipporag2.py, docs/hipporag2.md).

hipporag2_v1 (`seeds`):

1. Facts: cosine to every fact text, min-max normalized; the top `facts` by cosine (ties by the
   fact's position: the route holds facts by record id) are linked, each with its normalized
   score on the 2^-32 grid.
2. Phrases: each subject and object of a linked fact gets score / the number of passages holding
   it, averaged over its occurrences; the top `phrases` by that weight (ties by phrase) are seeds
   of floor(weight * 20 * 2^16) units.
3. Passages: every passage's min-max normalized dense cosine, floor(score * 2^16) units (the 1/20
   passage node weight is the unit's factor 20).

hipporag_ner_v1 (`entity_seeds`): each question entity's nearest phrase is a seed of 1 / its
passage count, once however many entities name it; passages as in 3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np


@dataclass(frozen=True)
class LinkedFact:
    index: int  # position in the graph's sorted facts
    cosine: float
    score: int  # normalized score, units of 2^-fact_score_bits


@dataclass(frozen=True)
class Seeds:
    facts: list[LinkedFact]
    phrases: list[tuple[str, int]]  # (phrase, seed units), weight desc, phrase asc
    dense: np.ndarray  # int64 per passage (graph order): floor(normalized cosine * 2^dense_bits)
    fact_range: tuple[float, float]  # (min, max) cosine over every fact
    dense_range: tuple[float, float]  # (min, max) cosine over every passage


def normalized(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """HippoRAG's `min_max_normalize`, given the range: all ones when every value is equal."""
    if high == low:
        return np.ones_like(values)
    return (values - low) / (high - low)


def grid(values: np.ndarray, bits: int) -> np.ndarray:
    """floor(value * 2^bits), exact: scaling a float64 by a power of two does not round."""
    return np.floor(values * float(1 << bits)).astype(np.int64)


def top_facts(cosines: np.ndarray, count: int) -> list[int]:
    """The `count` best fact positions by cosine desc, position asc (facts are held sorted): only
    the facts at or above the count-th best cosine are sorted, every tie at the cut among them."""
    if len(cosines) > count:
        kth = np.partition(cosines, len(cosines) - count)[len(cosines) - count]
        kept = np.flatnonzero(cosines >= kth)
    else:
        kept = np.arange(len(cosines))
    return kept[np.lexsort((kept, -cosines[kept]))][:count].tolist()


def phrase_weights(facts: Sequence[tuple[str, str, str]], linked: Sequence[LinkedFact],
                   holders: Mapping[str, Sequence[str]], score_bits: int) -> dict[str, Fraction]:
    """phrase -> the mean of (fact score / its passage count) over its occurrences as subject or object."""
    total: dict[str, Fraction] = {}
    occurrences: dict[str, int] = {}
    for fact in linked:
        subject, _, obj = facts[fact.index]
        for one in (subject, obj):
            if one not in holders:
                continue
            total[one] = total.get(one, Fraction(0)) + Fraction(fact.score, (1 << score_bits) * len(holders[one]))
            occurrences[one] = occurrences.get(one, 0) + 1
    return {one: value / occurrences[one] for one, value in total.items()}


def seeds(fact_cosines: np.ndarray, dense_cosines: np.ndarray, facts: Sequence[tuple[str, str, str]],
          holders: Mapping[str, Sequence[str]], profile: Mapping) -> Seeds:
    linking, passages = profile["linking"], profile["passages"]
    score_bits, dense_bits = linking["fact_score_bits"], passages["dense_bits"]
    linked: list[LinkedFact] = []
    fact_range = (0.0, 0.0)
    if len(fact_cosines):
        fact_range = (float(fact_cosines.min()), float(fact_cosines.max()))
        scores = grid(normalized(fact_cosines, *fact_range), score_bits)
        linked = [LinkedFact(i, float(fact_cosines[i]), int(scores[i])) for i in top_facts(fact_cosines, linking["facts"])]
    weights = phrase_weights(facts, linked, holders, score_bits)
    best = sorted(weights.items(), key=lambda item: (-item[1], item[0]))[: linking["phrases"]]
    unit = Fraction(passages["node_weight"]) / (1 << dense_bits)  # a passage seed's unit, as a weight
    phrases = [(one, int(weight / unit)) for one, weight in best]
    dense_range, dense = passage_seeds(dense_cosines, passages)
    return Seeds(linked, phrases, dense, fact_range, dense_range)


def passage_seeds(dense_cosines: np.ndarray, passages: Mapping) -> tuple[tuple[float, float], np.ndarray]:
    """(the dense range, every passage's seed units): its min-max normalized cosine on the grid."""
    dense_range = (float(dense_cosines.min()), float(dense_cosines.max()))
    return dense_range, grid(normalized(dense_cosines, *dense_range), passages["dense_bits"])


@dataclass(frozen=True)
class EntityLink:
    entity: str  # the question's entity, as a phrase
    phrase: str  # the graph's phrase nearest to it
    cosine: float


def entity_seeds(links: Sequence[EntityLink], dense_cosines: np.ndarray, holders: Mapping[str, Sequence[str]],
                 profile: Mapping) -> Seeds:
    passages = profile["passages"]
    unit = Fraction(passages["node_weight"]) / (1 << passages["dense_bits"])
    weights = {link.phrase: Fraction(1, len(holders[link.phrase])) for link in links}
    best = sorted(weights.items(), key=lambda item: (-item[1], item[0]))
    dense_range, dense = passage_seeds(dense_cosines, passages)
    return Seeds([], [(one, int(weight / unit)) for one, weight in best], dense, (0.0, 0.0), dense_range)
