"""`seeded_walk_v1`: a truncated personalized PageRank over the typed graph, seeded by the fused
base scores, fused back into the base (docs/graph-v3.md). Pure: every input is explicit.

1. Base: the fused list of weighted_rrf_v2 (exact rationals), cut at its depth; s(d) its score.
2. Seeds: the top `seeds` base records; each starts with mass m0(d) = s(d).
3. Spread, `steps` times: each record u holding mass m_{t-1}(u) sends alpha * m_{t-1}(u) / n(u) to
   each of its n(u) neighbours (distinct other endpoints of its eligible relations of the profile's
   kinds, both directions); m_t(v) is the sum it receives. Visit mass V(d) = m0(d) + m1(d) + ...
4. Walk list: every record with V > 0, by V desc then id asc, cut at `walk_depth`; walk rank w(d).
5. Final score = s(d) (0 outside the base) + walk_weight / (walk_k + w(d)) (0 outside the walk
   list); order by the exact score desc, then record id asc.

All arithmetic is on exact `Fraction`s, so two equal scores are equal and order by id.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from server.retrieval import exact

# node -> its distinct neighbours, ascending id, each with the relation that links them
# (the smallest eligible relation id between the two): [(neighbour id, relation id)]
Neighbours = Callable[[str], list[tuple[str, str]]]


@dataclass(frozen=True)
class Inflow:
    """Mass that reached a record at `step` from one neighbour (`source`, with `source_neighbours`
    neighbours); the masses themselves are read from the walk (`Walk.mass`)."""

    step: int
    source: str
    relation_id: str
    source_neighbours: int


@dataclass
class Walk:
    """Masses as integers over one denominator per step (exact and fast: Fraction arithmetic on
    every spread step cost more than the rest of the search together)."""

    denominators: list[int]  # D_t: m_t(d) = numerators[t][d] / D_t
    numerators: list[dict[str, int]]
    visit_numerators: dict[str, int] = field(default_factory=dict)  # V(d) = visit_numerators[d] / D_last
    inflow: dict[str, list[Inflow]] = field(default_factory=dict)
    expanded: int = 0  # records whose neighbours were spread to

    def mass(self, step: int, node: str) -> Fraction:
        return Fraction(self.numerators[step].get(node, 0), self.denominators[step])

    def visit(self, node: str) -> Fraction:
        return Fraction(self.visit_numerators[node], self.denominators[-1])

    @property
    def seed_mass(self) -> dict[str, Fraction]:
        return {node: self.mass(0, node) for node in self.numerators[0]}


@dataclass(frozen=True)
class Ranked:
    """The final list: (record id, base score or None, walk rank or None, final score), scores as
    unreduced exact pairs (numerator, denominator) like the fusion's (server/retrieval/exact.py)."""

    final: list[tuple[str, tuple[int, int] | None, int | None, tuple[int, int]]]
    walk: Walk
    walk_rank: dict[str, int]


def spread(seeds: Mapping[str, Fraction], neighbours: Neighbours, steps: int, alpha: Fraction) -> Walk:
    """Visit mass after `steps` spreading steps from the seeds (step 3 of the module doc).

    D_0 = lcm of the seed denominators; D_t = D_{t-1} * den(alpha) * lcm of the neighbour counts
    of the records spreading at step t, so every amount alpha * m_{t-1}(u) / n(u) is an integer
    over D_t."""
    d0 = math.lcm(*(mass.denominator for mass in seeds.values())) if seeds else 1
    walk = Walk([d0], [{node: mass.numerator * (d0 // mass.denominator) for node, mass in seeds.items()}])
    for step in range(1, steps + 1):
        frontier = walk.numerators[-1]
        around = {node: neighbours(node) for node in sorted(frontier)}
        counts = [len(links) for links in around.values() if links]
        scale = math.lcm(*counts) if counts else 1
        moved: dict[str, int] = {}
        for node, links in around.items():
            if not links:
                continue
            walk.expanded += 1
            amount = frontier[node] * alpha.numerator * (scale // len(links))
            for other, relation_id in links:
                moved[other] = moved.get(other, 0) + amount
                walk.inflow.setdefault(other, []).append(Inflow(step, node, relation_id, len(links)))
        walk.denominators.append(walk.denominators[-1] * alpha.denominator * scale)
        walk.numerators.append(moved)
    last = walk.denominators[-1]
    for step, masses in enumerate(walk.numerators):
        factor = last // walk.denominators[step]
        for node, mass in masses.items():
            walk.visit_numerators[node] = walk.visit_numerators.get(node, 0) + mass * factor
    return walk


def rank_walk(base: list[tuple[str, tuple[int, int]]], neighbours: Neighbours, profile: Mapping) -> Ranked:
    """base: the fused base list (record id, exact score as a (numerator, denominator) pair), best
    first, already cut at its depth."""
    seeds = {rid: Fraction(*score) for rid, score in base[: profile["seeds"]]}
    walk = spread(seeds, neighbours, profile["steps"], Fraction(str(profile["alpha"])))
    visit = walk.visit_numerators  # one denominator: integers order exactly
    order = sorted(visit, key=lambda rid: (-visit[rid], rid))[: profile["walk_depth"]]
    walk_rank = {rid: rank for rank, rid in enumerate(order, start=1)}
    fusion = profile["fusion"]
    num, den = exact.rational(fusion["walk_weight"])
    k = fusion["walk_k"]
    base_score = dict(base)
    items = []
    for rid in set(base_score) | set(walk_rank):
        b, w = base_score.get(rid), walk_rank.get(rid)
        total = b or (0, 1)
        if w is not None:
            total = exact.add(total, (num, den * (k + w)))
        items.append((rid, b, w, total))
    return Ranked(exact.exact_order(items, _total, _id), walk, walk_rank)


def _total(item: tuple) -> tuple[int, int]:
    return item[3]


def _id(item: tuple) -> str:
    return item[0]
