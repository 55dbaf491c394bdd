"""LinearRAG's retrieval from a question's links, on explicit inputs (protocols/families/graphs/linearrag.py).

`bridge` is LinearRAG's `calculate_entity_scores` (the BFS version): the seeds' activations, then
rounds in which each active entity whose score reaches the threshold takes its unused sentences most
similar to the question and activates their entities with score x sentence cosine; Python dicts
keep LinearRAG's order (a key keeps its first place, a later write its value). `passage_weights` is
its `calculate_passage_scores`, `seed_units` the declared grid the walk starts from. Every score is
float64 in the declared order, so the evaluator replays it bit for bit from the page's cosines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Taken:
    sentence: str  # its text
    id: str  # its node's record id
    cosine: float


@dataclass
class Bridged:
    activated: dict[str, tuple[float, int]]  # entity -> (its last activation's score, tier), in activation order
    weights: dict[str, float]  # entity -> its weight in the reset (seed score, plus every activation's)
    rounds: list[list[tuple[str, float, list[Taken]]]] = field(default_factory=list)  # per round: who spread what


def bridge(links: Sequence[tuple[str, float]], sentences_of: Callable[[str], Sequence],
           cosines: Callable[[Sequence], Any], entities_of: Callable[[str], Sequence[str]],
           rules: Mapping, order: Callable[[str], Any] = str) -> Bridged:
    """links: (graph entity, cosine) per question entity in the profile's question order; sentences_of(e):
    e's sentences (objects with .text and .id); cosines(sentences): their cosines to the question;
    entities_of(text): the entities a sentence names. `order` is the sort key of a text where LinearRAG
    leaves the order to chance: the text itself (v1, ascending) or the profile's draw (v2)."""
    threshold, top_k = rules["iteration_threshold"], rules["top_k_sentence"]
    activated: dict[str, tuple[float, int]] = {}
    weights: dict[str, float] = {}
    for entity, score in links:
        activated[entity] = (score, 1)
        weights[entity] = score
    out = Bridged(activated, weights)
    used: set[str] = set()
    current = dict(activated)
    iteration = 1
    while current and iteration < rules["max_iterations"]:
        new: dict[str, tuple[float, int]] = {}
        spread = []
        for entity, (score, _tier) in current.items():
            if score < threshold:
                continue
            candidates = [s for s in sentences_of(entity) if s.text not in used]
            if not candidates:
                continue
            found = cosines(candidates)
            best = sorted(range(len(candidates)), key=lambda i: (-found[i], order(candidates[i].text)))[:top_k]
            taken = []
            for i in best:
                sentence, cosine = candidates[i], float(found[i])
                used.add(sentence.text)
                taken.append(Taken(sentence.text, sentence.id, cosine))
                for following in sorted(entities_of(sentence.text), key=order):
                    next_score = score * cosine
                    if next_score < threshold:
                        continue
                    weights[following] = weights.get(following, 0.0) + next_score
                    new[following] = (next_score, iteration + 1)
            spread.append((entity, score, taken))
        activated.update(new)
        current = dict(new)
        out.rounds.append(spread)
        iteration += 1
    return out


def normalized(dense: np.ndarray) -> np.ndarray:
    """Min-max normalized dense cosines (1 where all are equal), as LinearRAG's min_max_normalize."""
    low, high = float(dense.min()), float(dense.max())
    return np.ones_like(dense) if high == low else (dense - low) / (high - low)


def passage_weights(dense: np.ndarray, activated: Mapping[str, tuple[float, int]],
                    occurrences: Callable[[str], tuple[np.ndarray, np.ndarray]], passages: Mapping) -> np.ndarray:
    """Each passage's reset weight: (ratio x normalized dense + ln(1 + bonus)) x node weight, the bonus
    summed over the activated entities in activation order (score x ln(1 + occurrences) / tier)."""
    bonus = np.zeros(len(dense), dtype=np.float64)
    for entity, (score, tier) in activated.items():
        where, counts = occurrences(entity)
        for i, count in zip(where.tolist(), counts.tolist()):
            bonus[i] += score * math.log(1 + count) / tier
    scores = passages["passage_ratio"] * normalized(dense)  # + ln(1 + 0) = + 0.0 where no bonus
    for i in np.flatnonzero(bonus).tolist():
        scores[i] += math.log(1 + float(bonus[i]))
    return scores * passages["passage_node_weight"]


def seed_units(weight: float, bits: int) -> int:
    """floor(weight * 2^bits), a negative weight (a link whose best cosine is below 0) seeding nothing."""
    return max(0, math.floor(weight * (1 << bits)))
