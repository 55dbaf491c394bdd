"""HippoRAG 2's recomputation for the verifier (docs/hipporag2.md), by another algorithm than the server's.

The server walks with a sparse matrix product (scipy, one sum per node, then one floor). Here the
transitions are recomputed from the graph's exact weights with Python integers, and each step
gathers m(u) t(u, v) along an edge list and sums per target with `np.add.at`: every product is
below 2^62 and every sum too, so both agree on every bit or one of them is wrong.

Dense seeds are the one input recomputed from floats that may differ by an ulp between two
implementations of cosine: a passage whose normalized score lies within `AMBIGUOUS` of a grid
boundary may be floored either way, and the page's digest of the dense seeds decides (at most
`MAX_AMBIGUOUS` such passages per query; more fails).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np

SCALE = 1 << 53
AMBIGUOUS = 1e-9  # in normalized-score units: ulp differences are below 1e-15, the grid step is 2^-16
MAX_AMBIGUOUS = 10


def edge_arrays(nodes: Sequence[str], undirected: Mapping[tuple[str, str], float], transition_bits: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, t) for both directions of every edge, t = floor(w 2^T / strength(source))."""
    index = {node: i for i, node in enumerate(nodes)}
    weights = {pair: Fraction(w) * SCALE for pair, w in undirected.items()}
    if any(w.denominator != 1 or w <= 0 for w in weights.values()):
        raise ValueError("an edge weight is not a positive multiple of 2^-53")
    strength = [0] * len(nodes)
    for (a, b), w in weights.items():
        strength[index[a]] += int(w)
        strength[index[b]] += int(w)
    source, target, share = [], [], []
    for (a, b), w in sorted(weights.items()):
        for s, d in ((index[a], index[b]), (index[b], index[a])):
            source.append(s)
            target.append(d)
            share.append((int(w) << transition_bits) // strength[s])
    return (np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(share, dtype=np.int64))


def walk(edges: tuple[np.ndarray, np.ndarray, np.ndarray], seeds: np.ndarray, grid_bits: int,
         transition_bits: int, max_iterations: int) -> tuple[np.ndarray, int, int]:
    """(mass, iterations, last change) from integer seeds, as protocols/profiles/hipporag2.py states it."""
    source, target, share = edges
    total = int(seeds.sum())
    reset = np.array([(int(s) << grid_bits) // total for s in seeds], dtype=np.int64)
    mass, change = reset.copy(), 0
    for step in range(1, max_iterations + 1):
        received = np.zeros(len(mass), dtype=np.int64)
        np.add.at(received, target, mass[source] * share)
        following = reset // 2 + received // (1 << (transition_bits + 1))
        change = int(np.abs(following - mass).sum())
        mass = following
        if change == 0:
            return mass, step, 0
    return mass, max_iterations, change


def dense_digest(dense: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(dense, dtype="<i8").tobytes()).hexdigest()


def dense_seeds(cosines: np.ndarray, low: float, high: float, bits: int, digest: str) -> np.ndarray | None:
    """The dense seeds whose digest is `digest`: the recomputed floors, or those with some ambiguous
    passages floored the other way; None when no such choice exists."""
    scaled = np.ones_like(cosines) if high == low else (cosines - low) / (high - low)
    scaled = scaled * float(1 << bits)
    floors = np.floor(scaled).astype(np.int64)
    if dense_digest(floors) == digest:
        return floors
    fraction = scaled - floors
    near = np.flatnonzero((fraction < AMBIGUOUS * (1 << bits)) | (fraction > 1 - AMBIGUOUS * (1 << bits)))
    if len(near) > MAX_AMBIGUOUS:
        return None
    for flips in itertools.product((0, 1), repeat=len(near)):
        trial = floors.copy()
        for i, flip in zip(near, flips):
            if flip:
                trial[i] += -1 if fraction[i] < 0.5 else 1
        if dense_digest(trial) == digest:
            return trial
    return None
