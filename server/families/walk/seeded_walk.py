"""`seeded_walk_v1`: a truncated personalized PageRank over the typed graph, seeded by the fused
base scores, fused back into the base (docs/graph-v3.md); `entity_walk_v1` adds a second kind of
step over the `shares_name` relations of document_entity_graph_v1 (docs/graph-v4.md). Pure: every
input is explicit.

1. Base: the fused list of weighted_rrf_v2 (exact rationals), cut at its depth; s(d) its score.
2. Seeds: the top `seeds` base records; each starts with mass m0(d) = s(d).
3. Spread, `steps` times: each record u holding mass m_{t-1}(u) sends alpha * m_{t-1}(u) / n(u) to
   each of its n(u) neighbours (distinct other endpoints of its eligible relations of the profile's
   kinds, both directions); m_t(v) is the sum it receives. Visit mass V(d) = m0(d) + m1(d) + ...
4. Walk list: every record with V > 0, by V desc then id asc, cut at `walk_depth`; walk rank w(d).
5. Final score = s(d) (0 outside the base) + walk_weight / (walk_k + w(d)) (0 outside the walk
   list); order by the exact score desc, then record id asc.

With an entity step (a profile's `entity_step`), at each step up to its `up_to_step` a record u also
sends entity_alpha * m_{t-1}(u) / e(u) to each of its e(u) entity neighbours: the distinct other
endpoints of its eligible relations of the entity kinds that are not among its graph neighbours.
The two groups are disjoint, so a record receives at most one amount from each neighbour per step.

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
    neighbours in the step's group, sending `alpha` of its mass over them); the masses themselves
    are read from the walk (`Walk.mass`)."""

    step: int
    source: str
    relation_id: str
    source_neighbours: int
    alpha: Fraction


@dataclass(frozen=True)
class EntityStep:
    """The second kind of step (entity_walk_v1): its neighbours, share of the mass, last step."""

    neighbours: Neighbours  # already without the graph neighbours and the record itself
    alpha: Fraction
    up_to_step: int


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


def spread(seeds: Mapping[str, Fraction], neighbours: Neighbours, steps: int, alpha: Fraction,
           entity: EntityStep | None = None) -> Walk:
    """Visit mass after `steps` spreading steps from the seeds (step 3 of the module doc).

    D_0 = lcm of the seed denominators; D_t = D_{t-1} * A * lcm of the neighbour counts of the
    records spreading at step t (both groups), A = the lcm of the alphas' denominators, so every
    amount alpha * m_{t-1}(u) / n(u) is an integer over D_t."""
    d0 = math.lcm(*(mass.denominator for mass in seeds.values())) if seeds else 1
    walk = Walk([d0], [{node: mass.numerator * (d0 // mass.denominator) for node, mass in seeds.items()}])
    common = alpha.denominator if entity is None else math.lcm(alpha.denominator, entity.alpha.denominator)
    for step in range(1, steps + 1):
        frontier = walk.numerators[-1]
        groups = [(alpha, {node: neighbours(node) for node in sorted(frontier)})]
        if entity is not None and step <= entity.up_to_step:
            groups.append((entity.alpha, {node: entity.neighbours(node) for node in sorted(frontier)}))
        counts = [len(links) for _, around in groups for links in around.values() if links]
        scale = math.lcm(*counts) if counts else 1
        moved: dict[str, int] = {}
        spreading: set[str] = set()
        for node in sorted(frontier):
            for share, around in groups:
                links = around[node]
                if not links:
                    continue
                spreading.add(node)
                amount = frontier[node] * share.numerator * (common // share.denominator) * (scale // len(links))
                for other, relation_id in links:
                    moved[other] = moved.get(other, 0) + amount
                    walk.inflow.setdefault(other, []).append(Inflow(step, node, relation_id, len(links), share))
        walk.expanded += len(spreading)
        walk.denominators.append(walk.denominators[-1] * common * scale)
        walk.numerators.append(moved)
    last = walk.denominators[-1]
    for step, masses in enumerate(walk.numerators):
        factor = last // walk.denominators[step]
        for node, mass in masses.items():
            walk.visit_numerators[node] = walk.visit_numerators.get(node, 0) + mass * factor
    return walk


def rank_walk(base: list[tuple[str, tuple[int, int]]], neighbours: Neighbours, profile: Mapping,
              entity_neighbours: Neighbours | None = None) -> Ranked:
    """base: the fused base list (record id, exact score as a (numerator, denominator) pair), best
    first, already cut at its depth; `entity_neighbours` for a profile with an entity step (the
    entity relations' neighbours, without the graph neighbours and the record itself)."""
    seeds = {rid: Fraction(*score) for rid, score in base[: profile["seeds"]]}
    entity = None
    if "entity_step" in profile:
        if entity_neighbours is None:
            raise ValueError("a profile with an entity step needs the entity neighbours")
        spec = profile["entity_step"]
        entity = EntityStep(entity_neighbours, Fraction(str(spec["alpha"])), spec["up_to_step"])
    walk = spread(seeds, neighbours, profile["steps"], Fraction(str(profile["alpha"])), entity)
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
