"""HippoRAG 2's passage ranking from its seeds: the whole-graph PageRank, or the dense order when no
fact links a phrase (protocols/profiles/hipporag2.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from protocols.profiles.hipporag2 import PASSAGE, PHRASE
from server.hipporag2.linking import Seeds
from server.hipporag2.whole_graph_pagerank import Mass, Transitions, pagerank, reset_vector


@dataclass(frozen=True)
class Ranked:
    seeds: Seeds
    mass: Mass | None  # None: no phrase was linked, the dense order
    order: list[tuple[str, int | None]]  # (passage id, mass or None)


def seed_vector(walk: Transitions, passages: Sequence[str], seeds: Seeds) -> np.ndarray:
    vector = np.zeros(len(walk.nodes), dtype=np.int64)
    rows = np.fromiter((walk.position[PASSAGE + pid] for pid in passages), dtype=np.int64, count=len(passages))
    vector[rows] = seeds.dense
    for one, units in seeds.phrases:
        vector[walk.position[PHRASE + one]] += units
    return vector


def rank(walk: Transitions, passages: Sequence[str], dense_cosines: np.ndarray, seeds: Seeds,
         profile: Mapping, limit: int) -> Ranked:
    """passages: the graph's passages, in the order of `dense_cosines` and `seeds.dense`."""
    if not seeds.phrases:
        order = np.lexsort((np.arange(len(passages)), -dense_cosines))[:limit]
        return Ranked(seeds, None, [(passages[i], None) for i in order.tolist()])
    rules = profile["pagerank"]
    if rules["damping"] != "1/2":
        raise ValueError(f"the integer walk folds a damping of 1/2 into its shift, got {rules['damping']}")
    reset = reset_vector(seed_vector(walk, passages, seeds), rules["grid_bits"])
    mass = pagerank(walk, reset, rules["max_iterations"])
    rows = np.fromiter((walk.position[PASSAGE + pid] for pid in passages), dtype=np.int64, count=len(passages))
    values = mass.mass[rows]
    order = np.lexsort((np.arange(len(passages)), -values))[:limit]
    return Ranked(seeds, mass, [(passages[i], int(values[i])) for i in order.tolist()])
