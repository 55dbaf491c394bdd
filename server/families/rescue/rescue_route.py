"""The rescue route: admitted search -> ranking -> page.

The method itself is `server.families.rescue.rescue_method.rank_rescue` (pure, explicit inputs); this module reads the
live index (channels, title table, eligible relations) and lays out the page of docs/rescue.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from server import validation
from server.errors import ApiError
from server.families.rescue import titles as title_rules
from server.families.rescue.rescue_method import BaseHit, Edge, LaneHit, Neighbours, Ranked, Work, rank_rescue
from server.retrieval import page_parts as parts
from server.retrieval.exact import to_text
from server.retrieval.fusion import channel_rankings
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, VectorQuery

MODES = ("auto", "off", "force")


def graph_mode(search: Search) -> str:
    mode = search.field("graph_mode")
    if not isinstance(mode, str) or mode not in MODES:
        raise ApiError(422, "out_of_range", f"graph_mode must be one of {list(MODES)}, got {validation.shown(mode)}")
    return mode


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


def search_rescue(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/rescue: rank on the live index and build the page (no fence)."""
    query = search.text(min_chars=1)
    vq = search.vector(index)
    mode = graph_mode(search)
    profile = search.profile
    lex, sem = channel_rankings(index, profile["base"], query, vq.query)
    table = index.lexical.derived("rescue_title_table", lambda: title_rules.title_table(
        (rid, record.content) for rid, record in index.records.items()))
    work = Work()
    ranked = rank_rescue(query, list(zip(lex.ids, lex.scores)), list(zip(sem.ids, sem.scores)),
                         table, index_neighbours(index, work), profile, mode, work)
    return build_page(index, search, vq, mode, ranked, lex.matched + sem.scored)


def build_page(index, search: Search, vq: VectorQuery, mode: str, ranked: Ranked, examined: int) -> dict:
    """The page of docs/contracts.md plus the rescue fields (seeds, gate, bonus, rescue proofs)."""
    profile = search.profile
    base_by_id = {hit.id: hit for hit in ranked.base}
    lane_by_id = {hit.id: hit for hit in ranked.lane}
    used: set[str] = set()
    hits = []
    for rank, (record_id, score, rescued) in enumerate(ranked.final[: search.limit], start=1):
        base_hit, lane_hit = base_by_id.get(record_id), lane_by_id.get(record_id)
        hit = parts.hit(index, rank, record_id, float(score), to_text(score), _channels(base_hit, lane_hit, profile),
                        parts.receipt(index, vq, record_id),
                        None if lane_hit is None else _rescue_proof(lane_hit, index),
                        rescued=rescued, base=None if base_hit is None else _base_detail(base_hit, index))
        for _, edges in (base_hit.bonus_seeds if base_hit else []):
            used.update(edge.relation_id for edge in edges)
        if lane_hit is not None:
            used.update(edge.relation_id for edge, _, _ in lane_hit.steps)
        hits.append(hit)
    rescued_ranks = [hit["rank"] for hit in hits if hit["rescued"]]
    graph_complete = not {"max_scan", "max_nodes"} & set(ranked.work.stop_reasons)
    embeddings = all(hit["embedding_receipt"] is not None for hit in hits)
    work = parts.work(records_examined=examined, adjacency_examined=ranked.work.adjacency_examined,
                      relations_examined=len(ranked.work.relations_seen), nodes_admitted=ranked.work.nodes_admitted,
                      candidates_ranked=len(ranked.final), stale_relations_skipped=ranked.work.stale_skipped,
                      embeddings_missing=parts.missing_embeddings(index, vq))
    anchors = [{**parts.ref(index, h.id), "rank": h.base_rank}
               for h in sorted(ranked.base, key=lambda h: h.base_rank)[: profile["seeds"]["base_top"]]]
    seeds = [{**parts.ref(index, s.id), "origins": list(s.origins), "base_rank": s.base_rank, "score": float(s.score),
              "score_exact": to_text(s.score)} for s in ranked.seeds]
    rescue = {"base_size": len(ranked.base), "lane_size": len(ranked.lane), "lane_before_cap": ranked.lane_before_cap,
              "first_rescued_rank": rescued_ranks[0] if rescued_ranks else None}
    parameters = {"limit": search.limit, "space_id": vq.receipt["space_id"], "graph_mode": mode}
    return parts.page(search, parameters, vq.receipt, hits, parts.coverage(graph=graph_complete, embeddings=embeddings),
                      work, ranked.work.stop_reasons, anchors=anchors, seeds=seeds, gate=ranked.gate,
                      relations=[_relation(index.relations[rid]) for rid in sorted(used)], rescue=rescue)


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
                         "contribution_exact": to_text(part)}
    if profile["combine"] == "fuse":
        fusion = profile["fusion"]
        weight = Fraction(str(fusion["graph_weight"]))
        if lane_hit is None or weight == 0:
            out["graph"] = {"rank": None, "raw_score": None, "contribution": 0.0, "contribution_exact": "0/1"}
        else:
            part = weight / (fusion["k"] + lane_hit.lane_rank)
            out["graph"] = {"rank": lane_hit.lane_rank, "raw_score": float(lane_hit.score),
                            "contribution": float(part), "contribution_exact": to_text(part)}
    return out


def _base_detail(hit: BaseHit, index) -> dict:
    bonus = hit.rescored - hit.normalized
    return {
        "rank": hit.base_rank, "fused_exact": to_text(hit.fused),
        "normalized": float(hit.normalized), "normalized_exact": to_text(hit.normalized),
        "bonus": float(bonus), "bonus_exact": to_text(bonus),
        "rescored": float(hit.rescored), "rescored_exact": to_text(hit.rescored),
        "bonus_seeds": [{"id": sid, "revision": index.records[sid].revision,
                         "relations": [{"relation_id": e.relation_id, "relation_revision": e.relation_revision,
                                        "kind": e.kind, "direction": e.direction(sid)} for e in edges]}
                        for sid, edges in hit.bonus_seeds],
    }


def _rescue_proof(hit: LaneHit, index) -> dict:
    seed = hit.seed
    return {
        "seed": {"id": seed.id, "revision": index.records[seed.id].revision, "origins": list(seed.origins),
                 "base_rank": seed.base_rank, "score": float(seed.score), "score_exact": to_text(seed.score)},
        "hops": hit.hops, "lane_rank": hit.lane_rank,
        "lane_score": float(hit.score), "lane_score_exact": to_text(hit.score),
        "steps": [{"relation_id": edge.relation_id, "relation_revision": edge.relation_revision,
                   "kind": edge.kind, "direction": edge.direction(start),
                   "from": {"id": start, "revision": index.records[start].revision},
                   "to": {"id": end, "revision": index.records[end].revision}}
                  for edge, start, end in hit.steps],
    }


def _relation(relation: dict) -> dict:
    return {key: relation[key] for key in ("id", "revision", "kind", "source", "target", "provenance")}
