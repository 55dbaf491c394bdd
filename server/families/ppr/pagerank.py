"""`ppr_entity_v1` and its variants: personalized PageRank over a passage-entity graph, in integers.

Pure: every input is explicit (protocols/families/graphs/ppr.py holds the parameters).

1. Graph: bipartite, passage nodes and entity nodes; an entity's passages are the endpoints of the
   eligible relations naming it (builders/ner_graph.py's stars, or the v4 shares_name pairs).
2. Reset: each query entity equal to a graph entity gets weight 1 / its passage count (node
   specificity); with a passage weight w > 0, each base passage p also gets w * s(p) / sum s
   times the entity weights' sum (1 when no entity matched). Integers on a 2^G grid:
   r(v) = floor(weight(v) * 2^G / total weight), exact (Fractions, then one floor).
3. Subgraph: the nodes within `radius` bipartite steps of the reset nodes; edges inside it.
4. Iterations, `iterations` times from m_0 = r: every node u pushes floor(m(u) / (2 deg u)) to
   each neighbour; m'(v) = floor(r(v) / 2) + what v received. Mass a node of degree 0 would push is
   dropped. Integer sums are exact, so the order of the pushes cannot change a bit.
5. Ranking: passages with mass > 0 by mass desc, id asc; then the base's other passages in base
   order (the backfill), cut at the limit. No entity matched and no passage seeds: the base order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

PASSAGE, ENTITY = "p:", "e:"


@dataclass(frozen=True)
class Ranked:
    reset: dict[str, int]  # node -> reset integer, the seeds (entity and passage nodes)
    mass: dict[str, int]  # node -> mass after the last iteration
    iterations: int
    subgraph_nodes: int
    grid_bits: int
    order: list[tuple[str, int | None, int | None]]  # (passage id, mass or None, base rank or None)


def reset_weights(query_entities: Sequence[str], holders: Mapping[str, Sequence[str]],
                  base: Sequence[tuple[str, Fraction]], passage_weight: Fraction) -> dict[str, Fraction]:
    weights: dict[str, Fraction] = {}
    for text in sorted(set(query_entities)):
        passages = holders.get(text)
        if passages:
            weights[ENTITY + text] = Fraction(1, len(passages))
    entity_total = sum(weights.values(), Fraction(0)) or Fraction(1)
    score_total = sum((score for _, score in base), Fraction(0))
    if passage_weight > 0 and score_total > 0:
        for rid, score in base:
            if score > 0:
                weights[PASSAGE + rid] = weights.get(PASSAGE + rid, Fraction(0)) + passage_weight * entity_total * score / score_total
    return weights


def entities_by_passage(holders: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """passage id -> the entities it holds (the inverse of `holders`)."""
    entities_of: dict[str, list[str]] = {}
    for text, passages in holders.items():
        for rid in passages:
            entities_of.setdefault(rid, []).append(text)
    return entities_of


def rank_ppr(query_entities: Sequence[str], holders: Mapping[str, Sequence[str]],
             base: Sequence[tuple[str, Fraction]], profile: Mapping, limit: int,
             entities_of: Mapping[str, Sequence[str]] | None = None) -> Ranked:
    """holders: entity text -> its passages, ascending; base: the fused list (id, exact score);
    entities_of: its inverse, when the caller keeps one."""
    grid = 1 << profile["arithmetic"]["grid_bits"]
    weights = reset_weights(query_entities, holders, base, Fraction(profile["reset"]["passage_weight"]))
    total = sum(weights.values(), Fraction(0))
    reset = {node: (w * grid) // total for node, w in sorted(weights.items())} if total else {}
    entities_of = entities_by_passage(holders) if entities_of is None else entities_of
    neighbours = _subgraph(reset, holders, entities_of, profile["subgraph"]["radius"])
    mass = dict(reset)
    for _ in range(profile["iterations"]):
        nxt = {node: value // 2 for node, value in reset.items()}
        for node in sorted(neighbours):
            near = neighbours[node]
            if not near or not mass.get(node):
                continue
            share = mass[node] // (2 * len(near))
            for other in near:
                nxt[other] = nxt.get(other, 0) + share
        mass = nxt
    base_rank = {rid: i for i, (rid, _) in enumerate(base, start=1)}
    massive = sorted(((value, node[len(PASSAGE):]) for node, value in mass.items()
                      if node.startswith(PASSAGE) and value > 0), key=lambda t: (-t[0], t[1]))
    order = [(rid, value, base_rank.get(rid)) for value, rid in massive]
    ranked = {rid for rid, _, _ in order}
    order += [(rid, None, base_rank[rid]) for rid, _ in base if rid not in ranked]
    return Ranked(reset, mass, profile["iterations"], len(neighbours), profile["arithmetic"]["grid_bits"],
                  order[:limit])


def _subgraph(reset: Mapping[str, int], holders: Mapping[str, Sequence[str]],
              entities_of: Mapping[str, Sequence[str]], radius: int) -> dict[str, list[str]]:
    """node -> its neighbours inside the subgraph (nodes within `radius` steps of the reset nodes)."""
    def adjacent(node: str) -> list[str]:
        if node.startswith(ENTITY):
            return [PASSAGE + rid for rid in holders.get(node[len(ENTITY):], ())]
        return [ENTITY + text for text in entities_of.get(node[len(PASSAGE):], ())]

    inside, frontier = set(reset), set(reset)
    for _ in range(radius):
        frontier = {other for node in frontier for other in adjacent(node)} - inside
        inside |= frontier
    return {node: sorted(other for other in adjacent(node) if other in inside) for node in inside}


def _score(mass: int | None, base_rank: int | None, grid: int) -> float:
    """A hit's score, as the order is: its mass as a fraction of the reset total (exact in a float,
    a power-of-two grid), or for a backfilled passage minus its base rank, below every mass."""
    if mass is not None:
        return mass / grid
    assert base_rank is not None, "a hit has a mass or a base rank"
    return float(-base_rank)


def page_section(ranked: Ranked) -> tuple[dict, list[dict]]:
    """What a page carries for the verifier: the seeds (reset integers), the iteration count, the
    subgraph's size, and each ranked passage's mass (None for a backfilled one) and base rank."""
    section = {"iterations": ranked.iterations, "subgraph_nodes": ranked.subgraph_nodes,
               "seeds": [{"node": node, "reset": value} for node, value in sorted(ranked.reset.items())]}
    grid = 1 << ranked.grid_bits
    hits = [{"rank": i, "id": rid, "score": _score(mass, base_rank, grid), "mass": mass, "base_rank": base_rank}
            for i, (rid, mass, base_rank) in enumerate(ranked.order, start=1)]
    return section, hits
