"""The whole-graph PageRank of the hipporag2, hipporag_ner and linearrag verifiers, by another algorithm
than the server's (server/retrieval/whole_graph_pagerank.py), and the cosines they read.

The server walks with a sparse matrix product (scipy, one sum per node, then one floor). Here the
transitions are recomputed from the graph's exact weights with Python integers and fractions, and
each step gathers m(u) t(u, v) along an edge list and sums per target with `np.add.at`: every
product is below 2^62 and every sum too, so both agree on every bit or one of them is wrong.

Seeds recomputed from floats may differ by an ulp between two implementations of a cosine or a
logarithm: a value within a declared margin of a grid boundary may be floored either way, and the
page's digest of the seeds decides (`floors_by_digest`, at most a few such values per query).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from evaluator.verification.failure import Findings

SCALE = 1 << 53


def edge_arrays(nodes: Sequence[str], undirected: Mapping[tuple[str, str], float], transition_bits: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, t) for both directions of every edge, t = floor(w 2^T / strength(source)), with
    every weight an exact rational (a float64 is the binary fraction it stores)."""
    index = {node: i for i, node in enumerate(nodes)}
    weights = {pair: Fraction(w) for pair, w in undirected.items()}
    if any(w <= 0 for w in weights.values()):
        raise ValueError("an edge weight is not positive")
    strength = [Fraction(0)] * len(nodes)
    for (a, b), w in weights.items():
        strength[index[a]] += w
        strength[index[b]] += w
    source, target, share = [], [], []
    for (a, b), w in sorted(weights.items()):
        for s, d in ((index[a], index[b]), (index[b], index[a])):
            source.append(s)
            target.append(d)
            part = w / strength[s]
            share.append((part.numerator << transition_bits) // part.denominator)
    return (np.array(source, dtype=np.int64), np.array(target, dtype=np.int64), np.array(share, dtype=np.int64))


def walk(edges: tuple[np.ndarray, np.ndarray, np.ndarray], seeds: Sequence[int] | np.ndarray, grid_bits: int,
         transition_bits: int, max_iterations: int) -> tuple[np.ndarray, int, int]:
    """(mass, iterations, last change) from integer seeds (of any size), as
    protocols/families/graphs/hipporag2.py and linearrag.py state it."""
    source, target, share = edges
    total = sum(int(s) for s in seeds)
    reset = np.array([(int(s) << grid_bits) // total for s in seeds], dtype=np.int64)
    mass, change, earlier = reset.copy(), 0, None  # earlier: the state two steps back
    for step in range(1, max_iterations + 1):
        received = np.zeros(len(mass), dtype=np.int64)
        np.add.at(received, target, mass[source] * share)
        following = reset // 2 + received // (1 << (transition_bits + 1))
        change = int(np.abs(following - mass).sum())
        if change == 0:
            return following, step, 0
        if earlier is not None and step < max_iterations and np.array_equal(following, earlier):
            # two states alternate from here on: the bound lands on this one after an even number of
            # further steps, else on the other, and each step changes the mass by the same amount
            return (following if (max_iterations - step) % 2 == 0 else mass), max_iterations, change
        earlier, mass = mass, following
    return mass, max_iterations, change


def int64_digest(values) -> str:
    """SHA-256 of integers as little-endian int64, in their order."""
    return hashlib.sha256(np.asarray(values, dtype="<i8").tobytes()).hexdigest()


dense_digest = int64_digest


def floors_by_digest(scaled: np.ndarray, margin: float, digest: object, most: int) -> np.ndarray | None:
    """The floors of `scaled` whose digest is `digest`: the floors themselves, or those with some values
    within `margin` of a boundary floored the other way (at most `most` such values); else None."""
    floors = np.floor(scaled).astype(np.int64)
    if int64_digest(floors) == digest:
        return floors
    fraction = scaled - floors
    near = np.flatnonzero((fraction < margin) | (fraction > 1 - margin))
    if len(near) > most:
        return None
    for flips in itertools.product((0, 1), repeat=len(near)):
        trial = floors.copy()
        for i, flip in zip(near, flips):
            if flip:
                trial[i] += -1 if fraction[i] < 0.5 else 1
        if int64_digest(trial) == digest:
            return trial
    return None


def unit_rows(vectors: Sequence[np.ndarray]) -> np.ndarray:
    """cosine_exact_v1's stored rows: each vector normalized in float64 by its own dot product,
    rounded once to float32 (the rows the dense and fact cosines read)."""
    rows = []
    for vector in vectors:
        wide = np.asarray(vector, dtype=np.float32).astype(np.float64)
        rows.append((wide / float(np.sqrt(float(np.dot(wide, wide))))).astype(np.float32))
    return np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)


def query_unit(vector: np.ndarray) -> np.ndarray:
    wide = np.asarray(vector, dtype=np.float32).astype(np.float64)
    return wide / np.sqrt(np.dot(wide, wide))


def exact_cosines(units: np.ndarray, query: np.ndarray) -> np.ndarray:
    """cosine_exact_v1: the float64 products of each float32 unit row with the float64 unit query,
    summed per row (numpy's summation of one row does not depend on the other rows), clamped."""
    if not len(units):
        return np.zeros(0)
    return np.clip((units.astype(np.float64) * query).sum(axis=1), -1.0, 1.0)


def walked_failures(section: Mapping, hits: Sequence[Mapping], passages: Sequence[str], edges,
                    seeds: Sequence[int] | np.ndarray, rules: Mapping, limit: int) -> Findings:
    """The page's walk (iteration count, last change) and its hits (id, mass) against the walk
    recomputed from the seeds (one integer per node, the passages first), ties by node order."""
    mass, iterations, change = walk(edges, seeds, rules["grid_bits"], rules["transition_bits"],
                                    rules["max_iterations"])
    if (section.get("iterations"), section.get("last_change")) != (iterations, change):
        yield (None, "iterations", f"{section.get('iterations')} with last_change {section.get('last_change')}, "
                                   f"recomputed {iterations} and {change}")
        return
    order = np.lexsort((np.arange(len(passages)), -mass[: len(passages)]))[:limit]
    want = [(passages[i], int(mass[i])) for i in order.tolist()]
    have = [(hit.get("id"), hit.get("mass")) for hit in hits]
    if have != want:
        first = next(i for i, pair in enumerate(zip(have + [None] * len(want), want + [None] * len(have)))
                     if pair[0] != pair[1])
        field = "mass" if first < min(len(have), len(want)) and have[first][0] == want[first][0] else "id"
        yield (first + 1, field, f"{have[first] if first < len(have) else None} (id, mass), recomputed "
                                 f"{want[first] if first < len(want) else None}")


def dense_order_failures(section: Mapping, hits: Sequence[Mapping], passages: Sequence[str], dense: np.ndarray,
                         limit: int, tolerance: float, seeded: str) -> Findings:
    """Nothing seeded (no `seeded` linked): the page is the dense order, no walk, up to near ties."""
    if (section.get("iterations"), section.get("last_change")) != (0, 0):
        yield None, "iterations", f"no {seeded} seeded, yet iterations {section.get('iterations')}"
        return
    order = np.lexsort((np.arange(len(passages)), -dense))[:limit]
    position: dict[Any, int] = {rid: i for i, rid in enumerate(passages)}  # a page's id may be anything
    if len(hits) != len(order):
        yield None, "hits", f"{len(hits)} hits, recomputed {len(order)}"
        return
    for rank, (hit, i) in enumerate(zip(hits, order.tolist()), start=1):
        j = position.get(hit.get("id"))
        if hit.get("mass") is not None:
            yield rank, "mass", f"{hit.get('mass')} on the dense order, which has no mass"
            return
        if j is None or abs(dense[j] - dense[i]) > tolerance:
            yield rank, "id", f"{hit.get('id')} on the dense order, recomputed {passages[i]}"
            return


def dense_range_failures(section: Mapping, dense: np.ndarray, tolerance: float) -> Findings:
    """The section's `dense_range` against the recomputed cosines' least and greatest (the range the
    dense seeds are scaled over), each within the tolerance."""
    low, high = section.get("dense_range") or [None, None]
    if not (isinstance(low, float) and isinstance(high, float) and abs(low - dense.min()) <= tolerance
            and abs(high - dense.max()) <= tolerance):
        yield None, "dense_range", f"{section.get('dense_range')}, recomputed [{dense.min()!r}, {dense.max()!r}]"

