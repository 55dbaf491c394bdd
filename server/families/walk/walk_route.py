"""The walk route: admitted search -> ranking -> page.

The method is `server.families.walk.seeded_walk.rank_walk` (pure); this module reads the
live index (the two channels, the eligible relations around a record) and lays out the page of
docs/graph-v3.md: every hit with a walk rank carries the proof of its visit mass (its seed mass
and every inflow: from which record, over which relation, that record's mass and neighbour count,
the amount), and `relations` lists exactly the relations those proofs use, each with the
provenance that produced it (for a `shares_name` relation of entity_walk_v1, the shared name:
docs/graph-v4.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from server.families.walk.seeded_walk import Neighbours, Ranked, rank_walk
from server.retrieval import page_parts as parts
from server.retrieval.exact import to_text
from server.retrieval.fusion import fused_base
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, VectorQuery


@dataclass
class Reads:
    """What the walk read of the graph (the page's `work`)."""

    adjacency_examined: int = 0
    stale_skipped: int = 0
    relations: set[str] = field(default_factory=set)  # eligible relations examined


def index_neighbours(index, kinds: list[str], reads: Reads) -> Neighbours:
    """Distinct other endpoints of a record's eligible relations of `kinds`, both directions, each
    with the smallest relation id linking the two; memoized for one search."""
    memo: dict[str, list[tuple[str, str]]] = {}

    def neighbours(node: str) -> list[tuple[str, str]]:
        if node in memo:
            return memo[node]
        best: dict[str, str] = {}
        for kind in kinds:
            for direction in ("forward", "backward"):
                for relation_id, other in index.neighbours(kind, direction, node):
                    reads.adjacency_examined += 1
                    if not index.eligible(index.relations[relation_id]):
                        reads.stale_skipped += 1
                        continue
                    reads.relations.add(relation_id)
                    if other != node and (other not in best or relation_id < best[other]):
                        best[other] = relation_id
        memo[node] = sorted(best.items())
        return memo[node]
    return neighbours


def entity_neighbours(index, profile: Mapping, graph: Neighbours, reads: Reads) -> Neighbours | None:
    """The entity step's neighbours of a record (entity_walk_v1): the distinct other endpoints of
    its eligible relations of the step's kinds that are not among its graph neighbours."""
    if "entity_step" not in profile:
        return None
    linked = index_neighbours(index, profile["entity_step"]["kinds"], reads)

    def neighbours(node: str) -> list[tuple[str, str]]:
        near = {other for other, _ in graph(node)}
        return [(other, rid) for other, rid in linked(node) if other not in near]
    return neighbours


def search_walk(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/walk: rank on the live index and build the page (no fence)."""
    profile = search.profile
    vq = search.vector(index)
    base = fused_base(index, profile["base"], search.text(), vq.query)
    reads = Reads()
    graph = index_neighbours(index, profile["graph"]["kinds"], reads)
    ranked = rank_walk([(entry.id, entry.score) for entry in base.fused], graph, profile,
                       entity_neighbours(index, profile, graph, reads))
    return build_page(index, search, vq, base.fused, ranked, reads, base.examined)



def build_page(index, search: Search, vq: VectorQuery, fused: list, ranked: Ranked, reads: Reads,
               examined: int) -> dict:
    profile = search.profile
    base = {entry.id: (rank, entry) for rank, entry in enumerate(fused, start=1)}
    weight, k = Fraction(str(profile["fusion"]["walk_weight"])), profile["fusion"]["walk_k"]
    used: set[str] = set()
    hits = []
    for rank, (rid, _, walk_rank, pair) in enumerate(ranked.final[: search.limit], start=1):
        total = Fraction(*pair)
        base_rank, entry = base.get(rid, (None, None))
        hit_channels = parts.fused_channels(entry)
        proof = None
        if walk_rank is None:
            hit_channels["walk"] = parts.rational_channel(None, None, (0, 1))
        else:
            part = weight / (k + walk_rank)
            visit = ranked.walk.visit(rid)
            hit_channels["walk"] = {"rank": walk_rank, "raw_score": float(visit), "contribution": float(part),
                                    "contribution_exact": to_text(part)}
            proof = _proof(index, rid, walk_rank, ranked)
            used.update(step["relation_id"] for step in proof["inflow"])
        hits.append(parts.hit(index, rank, rid, float(total), to_text(total), hit_channels,
                              parts.receipt(index, vq, rid), proof, base_rank=base_rank))
    seed_mass = ranked.walk.seed_mass
    anchors = [{**parts.ref(index, rid), "rank": r, "mass": float(seed_mass[rid]), "mass_exact": to_text(seed_mass[rid])}
               for r, rid in enumerate(seed_mass, start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=examined, adjacency_examined=reads.adjacency_examined,
                      relations_examined=len(reads.relations), nodes_admitted=len(ranked.walk.visit_numerators),
                      candidates_ranked=len(ranked.final), stale_relations_skipped=reads.stale_skipped,
                      embeddings_missing=missing)
    walk = {"base_size": len(fused), "reached": len(ranked.walk.visit_numerators),
            "walk_size": len(ranked.walk_rank), "expanded": ranked.walk.expanded}
    return parts.page(search, {"limit": search.limit, "space_id": vq.receipt["space_id"]}, vq.receipt, hits,
                      parts.coverage(embeddings=missing == 0), work, anchors=anchors,
                      relations=[_relation(index.relations[rid]) for rid in sorted(used)], walk=walk)


def _proof(index, rid: str, walk_rank: int, ranked: Ranked) -> dict:
    walk = ranked.walk
    inflow = []
    for step in walk.inflow.get(rid, ()):
        relation = index.relations[step.relation_id]
        source_mass = walk.mass(step.step - 1, step.source)
        amount = step.alpha * source_mass / step.source_neighbours
        inflow.append({
            "step": step.step, "from": {"id": step.source, "revision": index.records[step.source].revision},
            "relation_id": step.relation_id, "relation_revision": relation["revision"], "kind": relation["kind"],
            "direction": "forward" if relation["source"]["id"] == step.source else "backward",
            "from_mass": float(source_mass), "from_mass_exact": to_text(source_mass),
            "from_neighbours": step.source_neighbours,
            "amount": float(amount), "amount_exact": to_text(amount),
        })
    seeded = rid in walk.numerators[0]
    visit = walk.visit(rid)
    return {"walk_rank": walk_rank, "visit_mass": float(visit), "visit_mass_exact": to_text(visit),
            "seed_mass_exact": to_text(walk.mass(0, rid)) if seeded else None, "inflow": inflow}


def _relation(relation: dict) -> dict:
    return {key: relation[key] for key in ("id", "revision", "kind", "source", "target", "provenance")}
