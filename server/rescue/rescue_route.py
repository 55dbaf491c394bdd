"""The rescue route: `POST .../search/rescue` body -> validated request -> ranking -> page.

The method itself is `server.rescue.rescue_method.rank_rescue` (pure, explicit inputs); this module reads the
live index (channels, title table, eligible relations) and lays out the page of docs/rescue.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from ground.canonical import digest
from protocols.profiles.rescue import RESCUE_PROFILES
from server import validation
from server.errors import ApiError
from server.receipts import vector_sha256
from server.rescue import titles as title_rules
from server.rescue.rescue_method import BaseHit, Edge, LaneHit, Neighbours, Ranked, Work, exact, rank_rescue
from server.retrieval import bm25
from server.retrieval import cosine

MODES = ("auto", "off", "force")


@dataclass(frozen=True)
class RescueRequest:
    profile_name: str
    query: str
    vector: object  # np.ndarray float32, validated
    space_id: str
    limit: int
    mode: str


def parse_request(body: dict, index) -> RescueRequest:
    """Validate a rescue body against the catalog and the scope's spaces (422 on any fault).

    `server.routes.search` has already checked the body is an object with exactly the route's
    fields; the shared primitives of server/validation.py check each value.
    """
    name = validation.profile_name(body["profile"], RESCUE_PROFILES)
    query = validation.query_text(body["query"], min_chars=1)
    space_id = body["space_id"]
    # the rescue route has always answered any space_id it cannot look up, string or not, as unknown
    space = index.spaces.get(space_id) if isinstance(space_id, str) else None
    if space is None:
        raise ApiError(422, "unknown_space", f"space_id {validation.shown(space_id)} has no bindings in this scope")
    vector = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    limit = validation.integer(body["limit"], "limit", 1, RESCUE_PROFILES[name]["limit_max"])
    mode = body["graph_mode"]
    if not isinstance(mode, str) or mode not in MODES:
        raise ApiError(422, "out_of_range", f"graph_mode must be one of {list(MODES)}, got {validation.shown(mode)}")
    return RescueRequest(name, query, vector, space_id, limit, mode)


def index_neighbours(index, work: Work) -> Neighbours:
    """The scope's eligible relations around a node, both directions, every kind the index holds;
    stale ones (an endpoint no longer at its asserted revision) are skipped and counted."""
    def neighbours(node: str) -> list[Edge]:
        edges = []
        for (kind, _direction), by_node in index.adjacency.items():
            for relation_id, _other in by_node.get(node, ()):
                relation = index.relations[relation_id]
                if not index.eligible(relation):
                    work.stale_skipped += 1
                    continue
                edges.append(Edge(relation_id, relation["revision"], kind,
                                  relation["source"]["id"], relation["target"]["id"]))
        return edges
    return neighbours


def search_rescue(index, body: object) -> dict:
    """POST .../search/rescue: validate, rank on the live index, and build the page (no fence)."""
    request = parse_request(body, index)
    profile = RESCUE_PROFILES[request.profile_name]
    channels = profile["base"]["channels"]
    with index.lock:
        lex = bm25.bm25(index, request.query, channels["lexical"]["depth"])
        space = index.spaces[request.space_id]
        sem = cosine.cosine(index, cosine.prepare_query(space, request.vector),
                              channels["semantic"]["depth"], channels["semantic"]["min_score"])
        table = index.lexical.derived("rescue_title_table", lambda: title_rules.title_table(
            (rid, record.content) for rid, record in index.records.items()))
        work = Work()
        ranked = rank_rescue(request.query, list(zip(lex.ids, lex.scores)), list(zip(sem.ids, sem.scores)),
                             table, index_neighbours(index, work), profile, request.mode, work)
        page = build_page(index, request, profile, ranked)
        page["work"]["records_examined"] = lex.matched + sem.scored
        page["work"]["embeddings_missing"] = len(index.records) - space.live_count()
    return page


def build_page(index, request: RescueRequest, profile: Mapping, ranked: Ranked) -> dict:
    """The page of docs/contracts.md plus the rescue fields (seeds, gate, bonus, rescue proofs)."""
    base_by_id = {hit.id: hit for hit in ranked.base}
    lane_by_id = {hit.id: hit for hit in ranked.lane}
    used: set[str] = set()
    hits = []
    for rank, (record_id, score, rescued) in enumerate(ranked.final[: request.limit], start=1):
        record = index.records[record_id]
        binding = index.live_binding(request.space_id, record_id)
        base_hit, lane_hit = base_by_id.get(record_id), lane_by_id.get(record_id)
        hit = {
            "rank": rank, "id": record_id, "revision": record.revision, "payload": record.payload,
            "score": float(score), "score_exact": exact(score), "rescued": rescued,
            "channels": _channels(base_hit, lane_hit, profile),
            "base": None if base_hit is None else _base_detail(base_hit, index),
            "embedding_receipt": None if binding is None else binding.receipt(),
            "proof": None if lane_hit is None else _rescue_proof(lane_hit, index),
        }
        for _, edges in (base_hit.bonus_seeds if base_hit else []):
            used.update(edge.relation_id for edge in edges)
        if lane_hit is not None:
            used.update(edge.relation_id for edge, _, _ in lane_hit.steps)
        hits.append(hit)
    rescued_ranks = [hit["rank"] for hit in hits if hit["rescued"]]
    graph_complete = not {"max_scan", "max_nodes"} & set(ranked.work.stop_reasons)
    embeddings = all(hit["embedding_receipt"] is not None for hit in hits)
    return {
        "method": "rescue", "profile": request.profile_name, "profile_digest": digest(profile),
        "parameters": {"limit": request.limit, "space_id": request.space_id, "graph_mode": request.mode},
        "query_receipt": {"space_id": request.space_id, "vector_sha256": vector_sha256(request.vector)},
        "hits": hits,
        "anchors": [{"id": h.id, "revision": index.records[h.id].revision, "rank": h.base_rank}
                    for h in sorted(ranked.base, key=lambda h: h.base_rank)[: profile["seeds"]["base_top"]]],
        "seeds": [{"id": s.id, "revision": index.records[s.id].revision, "origins": list(s.origins),
                   "base_rank": s.base_rank, "score": float(s.score), "score_exact": exact(s.score)}
                  for s in ranked.seeds],
        "gate": ranked.gate,
        "relations": [_relation(index.relations[rid]) for rid in sorted(used)],
        "rescue": {"base_size": len(ranked.base), "lane_size": len(ranked.lane),
                   "lane_before_cap": ranked.lane_before_cap,
                   "first_rescued_rank": rescued_ranks[0] if rescued_ranks else None},
        "coverage": {"source": True, "candidates": True, "graph": graph_complete, "embeddings": embeddings,
                     "complete": graph_complete and embeddings},
        "stop_reasons": list(ranked.work.stop_reasons),
        "work": {"records_examined": 0, "adjacency_examined": ranked.work.adjacency_examined,
                 "relations_examined": len(ranked.work.relations_seen),
                 "nodes_admitted": ranked.work.nodes_admitted, "affinity_lookups": 0, "affinity_reuses": 0,
                 "candidates_ranked": len(ranked.final), "stale_relations_skipped": ranked.work.stale_skipped,
                 "embeddings_missing": 0, "affinity_missing": 0},
    }


def _channels(base_hit: BaseHit | None, lane_hit: LaneHit | None, profile: Mapping) -> dict:
    spec, k = profile["base"]["channels"], profile["base"]["k"]
    out = {}
    for name in ("lexical", "semantic"):
        entry = None if base_hit is None else base_hit.channels.get(name)
        if entry is None:
            out[name] = {"rank": None, "raw_score": None, "contribution": 0.0, "contribution_exact": "0/1"}
        else:
            part = Fraction(str(spec[name]["weight"])) / (k + entry.rank)
            out[name] = {"rank": entry.rank, "raw_score": entry.raw_score, "contribution": float(part),
                         "contribution_exact": exact(part)}
    if profile["combine"] == "fuse":
        fusion = profile["fusion"]
        weight = Fraction(str(fusion["graph_weight"]))
        if lane_hit is None or weight == 0:
            out["graph"] = {"rank": None, "raw_score": None, "contribution": 0.0, "contribution_exact": "0/1"}
        else:
            part = weight / (fusion["k"] + lane_hit.lane_rank)
            out["graph"] = {"rank": lane_hit.lane_rank, "raw_score": float(lane_hit.score),
                            "contribution": float(part), "contribution_exact": exact(part)}
    return out


def _base_detail(hit: BaseHit, index) -> dict:
    bonus = hit.rescored - hit.normalized
    return {
        "rank": hit.base_rank, "fused_exact": exact(hit.fused),
        "normalized": float(hit.normalized), "normalized_exact": exact(hit.normalized),
        "bonus": float(bonus), "bonus_exact": exact(bonus),
        "rescored": float(hit.rescored), "rescored_exact": exact(hit.rescored),
        "bonus_seeds": [{"id": sid, "revision": index.records[sid].revision,
                         "relations": [{"relation_id": e.relation_id, "relation_revision": e.relation_revision,
                                        "kind": e.kind, "direction": e.direction(sid)} for e in edges]}
                        for sid, edges in hit.bonus_seeds],
    }


def _rescue_proof(hit: LaneHit, index) -> dict:
    seed = hit.seed
    return {
        "seed": {"id": seed.id, "revision": index.records[seed.id].revision, "origins": list(seed.origins),
                 "base_rank": seed.base_rank, "score": float(seed.score), "score_exact": exact(seed.score)},
        "hops": hit.hops, "lane_rank": hit.lane_rank,
        "lane_score": float(hit.score), "lane_score_exact": exact(hit.score),
        "steps": [{"relation_id": edge.relation_id, "relation_revision": edge.relation_revision,
                   "kind": edge.kind, "direction": edge.direction(start),
                   "from": {"id": start, "revision": index.records[start].revision},
                   "to": {"id": end, "revision": index.records[end].revision}}
                  for edge, start, end in hit.steps],
    }


def _relation(relation: dict) -> dict:
    return {key: relation[key] for key in ("id", "revision", "kind", "source", "target", "provenance")}
