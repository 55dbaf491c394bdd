"""HippoRAG 2's passage ranking from its seeds: the whole-graph PageRank, or the dense order when no
fact links a phrase (protocols/families/graphs/hipporag2.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from protocols.families.graphs.hipporag2 import PASSAGE, PHRASE
from server.families.hipporag2.linking import Seeds
from server.retrieval.whole_graph_pagerank import Mass, Transitions, pagerank, reset_vector


@dataclass(frozen=True)
class Ranked:
    seeds: Seeds
    mass: Mass | None  # None: no phrase was linked, the dense order
    order: list[tuple[str, int | None]]  # (passage id, mass or None)


def passage_rows(walk: Transitions, passages: Sequence[str]) -> np.ndarray:
    """Each passage's node position in the walk, in the order of `passages`."""
    return np.fromiter((walk.position[PASSAGE + pid] for pid in passages), dtype=np.int64, count=len(passages))


def seed_vector(walk: Transitions, rows: np.ndarray, seeds: Seeds) -> np.ndarray:
    """rows: `passage_rows` of the passages `seeds.dense` follows."""
    vector = np.zeros(len(walk.nodes), dtype=np.int64)
    vector[rows] = seeds.dense
    for one, units in seeds.phrases:
        vector[walk.position[PHRASE + one]] += units
    return vector


def rank(walk: Transitions, passages: Sequence[str], dense_cosines: np.ndarray, seeds: Seeds,
         profile: Mapping, limit: int, rows: np.ndarray | None = None) -> Ranked:
    """passages: the graph's passages, in the order of `dense_cosines` and `seeds.dense`; rows:
    their `passage_rows` when the caller keeps them (the route does, once per graph)."""
    if not seeds.phrases:
        order = np.lexsort((np.arange(len(passages)), -dense_cosines))[:limit]
        return Ranked(seeds, None, [(passages[i], None) for i in order.tolist()])
    rules = profile["pagerank"]
    if rules["damping"] != "1/2":
        raise ValueError(f"the integer walk folds a damping of 1/2 into its shift, got {rules['damping']}")
    rows = passage_rows(walk, passages) if rows is None else rows
    mass = pagerank(walk, reset_vector(seed_vector(walk, rows, seeds), rules["grid_bits"]), rules["max_iterations"])
    values = mass.mass[rows]
    order = np.lexsort((np.arange(len(passages)), -values))[:limit]
    return Ranked(seeds, mass, [(passages[i], int(values[i])) for i in order.tolist()])
