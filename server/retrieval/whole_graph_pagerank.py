"""Personalized PageRank over a whole graph, in integers: the walk of the hipporag2, hipporag_ner and
linearrag families (protocols/families/graphs/hipporag2.py, linearrag.py).

Pure and exact: every product and sum is an integer below 2^63, so the order of the additions
cannot change a bit and the evaluator's recomputation agrees exactly.

- Transitions: t(u, v) = floor(w(u, v) * 2^T / strength(u)) from the exact edge weights (an
  edge weight is a count, a float64 cosine or a rational share; each is an exact rational),
  held as a sparse matrix whose row v lists what v receives.
- Reset: r(v) = floor(seed(v) * 2^G / total seed), seeds integers in the profile's seed unit.
- Step: m'(v) = floor(r(v) / 2) + floor(sum over u of m(u) t(u, v) / 2^(T + 1)), from m_0 = r,
  until no mass changes or the profile's bound; masses stay below 2^G and t below 2^T, and
  G + T = 62, so every sum fits in an int64.
- Settled: the floors can hold the walk in two alternating states instead of a fixed point (every
  walk of the LinearRAG samples does, from about its 33rd step). A step is a function of the masses
  alone, so once m_k = m_(k-2) every later state is known: the walk stops there and returns exactly
  the state, and the last change, that stepping on to the bound would reach. Pages are the same bits;
  only the steps not taken are saved. A longer cycle is not looked for (one comparison a step is
  cheap; hashing every state cost more than the steps it saved) and runs to the bound, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import scipy.sparse as sparse

WEIGHT_SCALE_BITS = 53  # a float64 weight in [1/2, 2^10] times 2^53 is an exact integer


@dataclass(frozen=True)
class Transitions:
    nodes: list[str]  # node names, the matrix's order
    position: dict[str, int]
    incoming: sparse.csr_matrix  # row v, column u: t(u, v)
    transition_bits: int


@dataclass(frozen=True)
class Mass:
    mass: np.ndarray  # int64 per node
    iterations: int
    last_change: int  # sum of |m_k - m_(k-1)| at the last step: 0 when it stopped on its own


def scaled(weight: float) -> int:
    value = weight * (1 << WEIGHT_SCALE_BITS)
    if value != int(value) or value <= 0:
        raise ValueError(f"edge weight {weight!r} is not a positive multiple of 2^-{WEIGHT_SCALE_BITS}")
    return int(value)


def transitions(nodes: Sequence[str], undirected: Mapping[tuple[str, str], float | Fraction],
                transition_bits: int) -> Transitions:
    """The walk's integer transition matrix over `nodes` (in that order) from the undirected weights:
    float64 weights in [2^-53, 2^10] as the integers `scaled` makes of them; rational weights (a
    passage's share of an entity, LinearRAG) exactly, over their common strengths."""
    position = {node: i for i, node in enumerate(nodes)}
    rational = any(isinstance(weight, Fraction) for weight in undirected.values())
    strength: list = [Fraction(0) if rational else 0] * len(nodes)
    pairs = []
    for (a, b), weight in undirected.items():
        # an exact Fraction on the rational walk, the integer `scaled` makes on the float one
        w: Any = Fraction(weight) if rational else scaled(float(weight))
        i, j = position[a], position[b]
        if w <= 0:
            raise ValueError(f"edge weight {weight!r} is not positive")
        strength[i] += w
        strength[j] += w
        pairs.append((i, j, w))
    rows, cols, data = [], [], []
    for i, j, w in pairs:
        for source, target in ((i, j), (j, i)):
            rows.append(target)
            cols.append(source)
            if rational:
                share = w / strength[source]
                data.append((share.numerator << transition_bits) // share.denominator)
            else:
                data.append((w << transition_bits) // strength[source])
    incoming = sparse.csr_matrix((np.array(data, dtype=np.int64), (np.array(rows, dtype=np.int64),
                                  np.array(cols, dtype=np.int64))), shape=(len(nodes), len(nodes)))
    incoming.sum_duplicates()
    return Transitions(list(nodes), position, incoming, transition_bits)


def reset_vector(seeds: np.ndarray, grid_bits: int) -> np.ndarray:
    """r(v) = floor(seed(v) * 2^G / total seed), seeds non-negative int64 below 2^(62 - G)."""
    total = int(seeds.sum())
    if total <= 0:
        raise ValueError("no seed: the reset vector is empty")
    return (seeds.astype(np.int64) << grid_bits) // total


def reset_of(units: Sequence[int], grid_bits: int) -> np.ndarray:
    """r(v) = floor(seed(v) * 2^G / total seed) for seeds of any size (Python integers), as int64."""
    total = sum(units)
    if total <= 0:
        raise ValueError("no seed: the reset vector is empty")
    return np.array([(unit << grid_bits) // total for unit in units], dtype=np.int64)


def pagerank(walk: Transitions, reset: np.ndarray, max_iterations: int) -> Mass:
    shift = walk.transition_bits + 1  # the damping 1/2 folded into the shift
    kept = reset >> 1
    mass, before = reset, None  # m_(k-1) and m_(k-2)
    for step in range(1, max_iterations + 1):
        following = walk.incoming @ mass
        following >>= shift
        following += kept
        # equality is the only question before the bound, and cheaper than the change it implies
        if np.array_equal(following, mass):
            return Mass(following, step, 0)
        if step == max_iterations:
            return Mass(following, step, int(np.abs(following - mass).sum()))
        if before is not None and np.array_equal(following, before):
            # settled into two alternating states: the bound's is this one when an even number of
            # steps remains, else the other, and every later step changes as much as this one
            last = following if (max_iterations - step) % 2 == 0 else mass
            return Mass(last, max_iterations, int(np.abs(following - mass).sum()))
        mass, before = following, mass
    return Mass(mass, 0, 0)
