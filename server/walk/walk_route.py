"""The walk route: `POST .../search/walk` body -> validated request -> ranking -> page.

The method is `server.walk.seeded_walk.rank_walk` (pure); this module validates the body, reads the
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

from ground.canonical import digest
from protocols.profiles.v1 import V1_PROFILES
from protocols.routes import ROUTES
from server import validation
from server.receipts import vector_sha256
from server.retrieval import bm25, cosine
from server.retrieval.fusion import fuse
from server.walk.seeded_walk import Neighbours, Ranked, rank_walk


@dataclass(frozen=True)
class WalkRequest:
    profile_name: str
    query: str
    vector: object  # np.ndarray float32, validated
    space_id: str
    limit: int


WALK_PROFILES = ROUTES["walk"].profiles  # the walks over the title graph, the names and an imported graph


def parse_request(body: dict, index) -> WalkRequest:
    """Validate a walk body (the fields are already exactly the route's) against the catalog and
    the scope's spaces; 422 on any fault."""
    name = validation.profile_name(body["profile"], WALK_PROFILES)
    query = validation.query_text(body["query"])
    space_id = body["space_id"]
    space = validation.bound_space(space_id, index.spaces)
    vector = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    limit = validation.integer(body["limit"], "limit", 1, WALK_PROFILES[name]["limit_max"])
    return WalkRequest(name, query, vector, space_id, limit)


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


def search_walk(index, body: dict) -> dict:
    """POST .../search/walk: validate, rank on the live index, and build the page (no fence)."""
    request = parse_request(body, index)
    profile = WALK_PROFILES[request.profile_name]
    spec = profile["base"]
    channels = spec["channels"]
    with index.lock:
        lex = bm25.bm25(index, request.query, channels["lexical"]["depth"])
        space = index.spaces[request.space_id]
        sem = cosine.cosine(index, cosine.prepare_query(space, request.vector),
                              channels["semantic"]["depth"], channels["semantic"]["min_score"])
        # the base fuses by the rule of the hybrid profile it names (weighted_rrf_v2), with its own parameters
        rule = V1_PROFILES[spec["profile"]]["fusion"]
        fused = fuse(rule, spec, {"lexical": (lex.ids, lex.scores), "semantic": (sem.ids, sem.scores)})[: spec["depth"]]
        reads = Reads()
        graph = index_neighbours(index, profile["graph"]["kinds"], reads)
        ranked = rank_walk([(entry.id, entry.score) for entry in fused], graph, profile,
                           entity_neighbours(index, profile, graph, reads))
        page = build_page(index, request, profile, fused, ranked, reads)
        page["work"]["records_examined"] = lex.matched + sem.scored
        page["work"]["embeddings_missing"] = len(index.records) - space.live_count()
        page["coverage"]["embeddings"] = page["work"]["embeddings_missing"] == 0
        page["coverage"]["complete"] = page["coverage"]["embeddings"]
    return page


def exact(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def build_page(index, request: WalkRequest, profile: Mapping, fused: list, ranked: Ranked, reads: Reads) -> dict:
    base = {entry.id: (rank, entry) for rank, entry in enumerate(fused, start=1)}
    weight, k = Fraction(str(profile["fusion"]["walk_weight"])), profile["fusion"]["walk_k"]
    used: set[str] = set()
    hits = []
    for rank, (rid, _, walk_rank, pair) in enumerate(ranked.final[: request.limit], start=1):
        total = Fraction(*pair)
        record = index.records[rid]
        binding = index.live_binding(request.space_id, rid)
        base_rank, entry = base.get(rid, (None, None))
        hit_channels = _base_channels(entry)
        proof = None
        if walk_rank is None:
            hit_channels["walk"] = {"rank": None, "raw_score": None, "contribution": 0.0, "contribution_exact": "0/1"}
        else:
            part = weight / (k + walk_rank)
            visit = ranked.walk.visit(rid)
            hit_channels["walk"] = {"rank": walk_rank, "raw_score": float(visit), "contribution": float(part),
                                    "contribution_exact": exact(part)}
            proof = _proof(index, rid, walk_rank, ranked)
            used.update(step["relation_id"] for step in proof["inflow"])
        hits.append({
            "rank": rank, "id": rid, "revision": record.revision, "payload": record.payload,
            "score": float(total), "score_exact": exact(total), "base_rank": base_rank,
            "channels": hit_channels,
            "embedding_receipt": None if binding is None else binding.receipt(),
            "proof": proof,
        })
    seed_mass = ranked.walk.seed_mass
    seeds = list(seed_mass)
    return {
        "method": "walk", "profile": request.profile_name, "profile_digest": digest(profile),
        "parameters": {"limit": request.limit, "space_id": request.space_id},
        "query_receipt": {"space_id": request.space_id, "vector_sha256": vector_sha256(request.vector)},
        "hits": hits,
        "anchors": [{"id": rid, "revision": index.records[rid].revision, "rank": r,
                     "mass": float(seed_mass[rid]), "mass_exact": exact(seed_mass[rid])}
                    for r, rid in enumerate(seeds, start=1)],
        "relations": [_relation(index.relations[rid]) for rid in sorted(used)],
        "walk": {"base_size": len(fused), "reached": len(ranked.walk.visit_numerators),
                 "walk_size": len(ranked.walk_rank), "expanded": ranked.walk.expanded},
        "coverage": {"source": True, "candidates": True, "graph": True, "embeddings": True, "complete": True},
        "stop_reasons": [],
        "work": {"records_examined": 0, "adjacency_examined": reads.adjacency_examined,
                 "relations_examined": len(reads.relations), "nodes_admitted": len(ranked.walk.visit_numerators),
                 "affinity_lookups": 0, "affinity_reuses": 0, "candidates_ranked": len(ranked.final),
                 "stale_relations_skipped": reads.stale_skipped, "embeddings_missing": 0, "affinity_missing": 0},
    }


def _base_channels(entry) -> dict:
    out = {}
    for name in ("lexical", "semantic"):
        part = None if entry is None else entry.channels.get(name)
        if part is None:
            out[name] = {"rank": None, "raw_score": None, "contribution": 0.0, "contribution_exact": "0/1"}
        else:
            value = Fraction(*part.contribution)
            out[name] = {"rank": part.rank, "raw_score": part.raw_score, "contribution": float(value),
                         "contribution_exact": exact(value)}
    return out


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
            "from_mass": float(source_mass), "from_mass_exact": exact(source_mass),
            "from_neighbours": step.source_neighbours,
            "amount": float(amount), "amount_exact": exact(amount),
        })
    seeded = rid in walk.numerators[0]
    visit = walk.visit(rid)
    return {"walk_rank": walk_rank, "visit_mass": float(visit), "visit_mass_exact": exact(visit),
            "seed_mass_exact": exact(walk.mass(0, rid)) if seeded else None, "inflow": inflow}


def _relation(relation: dict) -> dict:
    return {key: relation[key] for key in ("id", "revision", "kind", "source", "target", "provenance")}
