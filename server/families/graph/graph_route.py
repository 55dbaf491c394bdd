"""The graph route: admitted search -> typed paths from the base list's anchors -> page with a proof
per graph hit (docs/retrieval.md).

Like every family's, the handler takes the scope's index and a search the route table
(server/routes.py) has admitted, validates the route's own values (422 via ApiError), ranks, and
builds the page from server/retrieval/page_parts.py.
"""

from __future__ import annotations

from protocols.routes import PROFILES
from server import validation
from server.families.graph.typed_paths import (
    Anchor,
    Limits,
    affinities,
    expand,
    final_scores,
    graph_ranks,
    strongest_paths,
)
from server.retrieval import exact
from server.retrieval import page_parts as parts
from server.retrieval.bm25 import bm25
from server.retrieval.fusion import fused_base
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search, invalid
from server.validation import LIMITS

MAX_DEPTH = tuple(LIMITS["max_depth"])  # (0, 3)
MAX_NODES = LIMITS["max_nodes"]  # 1024
MAX_EDGES = LIMITS["max_edges"]  # 4096
MAX_SCAN = LIMITS["max_scan"]  # 16384


_EXPANSION_BOUNDS = {
    "max_depth": MAX_DEPTH,
    "max_nodes": (4, MAX_NODES),  # at least the 4 anchors
    "max_edges": (0, MAX_EDGES),
    "max_scan": (0, MAX_SCAN),
}


def _expansion_limits(search: Search, profile: dict) -> Limits:
    given = validation.fields(search.field("expansion", {}), "expansion", (), tuple(_EXPANSION_BOUNDS))
    defaults = profile["expansion_defaults"]
    values = {name: validation.integer(given.get(name, defaults[name]), f"expansion.{name}", *bounds)
              for name, bounds in _EXPANSION_BOUNDS.items()}
    return Limits(**values)


def search_graph(index: ScopeIndex, search: Search) -> dict:
    profile, limit = search.profile, search.limit
    seed = search.field("seed")
    if not isinstance(seed, str) or seed not in profile["seed_profiles"]:
        raise invalid(f"seed must be one of {', '.join(profile['seed_profiles'])}, got {validation.shown(seed)}",
                       "unknown_profile")
    query = search.text()
    limits = _expansion_limits(search, profile)
    has_vector = search.has("query_vector") or search.has("space_id")
    if seed == "hybrid" and not has_vector:
        raise invalid("a hybrid seed needs query_vector and space_id", "missing_field")
    if has_vector and not (search.has("query_vector") and search.has("space_id")):
        raise invalid("query_vector and space_id go together", "missing_field")
    vq = search.vector(index) if has_vector else None

    depth = profile["base_depth"]
    if seed == "hybrid":
        assert vq is not None, "a hybrid seed without a vector is refused above"
        fused = fused_base(index, PROFILES[profile["seed_profiles"]["hybrid"]], query, vq.query)
        base, examined = [(entry.id, exact.to_float(entry.score)) for entry in fused.fused[:depth]], fused.examined
    else:
        ranking = bm25(index, query, depth)
        base, examined = list(zip(ranking.ids, ranking.scores)), ranking.matched
    base_rank = {rid: rank for rank, (rid, _) in enumerate(base, start=1)}
    base_raw = dict(base)
    anchors = [Anchor(rid, rank) for rank, (rid, _) in enumerate(base[: profile["anchors"]], start=1)]

    expansion = expand(index, anchors, profile["kind_weights"], limits)
    affinity_query = vq.query if seed == "hybrid" and vq is not None else None
    affinity = affinities(index, list(expansion.depth_of), affinity_query, profile)
    found = strongest_paths(anchors, expansion, affinity, profile, limits.max_depth)
    graph_rank = graph_ranks(found.paths)
    final = final_scores(base_rank, graph_rank, profile)
    ordered = exact.exact_order(list(final.items()), lambda item: exact.add(*item[1]), lambda item: item[0])

    hits, used = [], {}
    for rank, (rid, (base_part, graph_part)) in enumerate(ordered[:limit], start=1):
        path = found.paths.get(rid)
        channels = {
            "base": parts.rational_channel(base_rank.get(rid), base_raw.get(rid), base_part),
            "graph": parts.rational_channel(graph_rank.get(rid),
                                            None if path is None else exact.to_float(path.strength), graph_part),
        }
        proof = None if path is None else _proof(index, path)
        if path is not None:
            for step in path.steps:
                used[step.edge.relation["id"]] = step.edge.relation
        total = exact.add(base_part, graph_part)
        hits.append(parts.hit(index, rank, rid, exact.to_float(total), exact.to_text(total), channels,
                              parts.receipt(index, vq, rid), proof))

    affinity_missing = sum(1 for node in found.paths if affinity_query is not None and affinity[node].cosine is None)
    missing = 0 if vq is None else parts.missing_embeddings(index, vq)
    budget_cut = any(reason != "depth_limit" for reason in expansion.stop_reasons)
    embeddings_ok = affinity_missing == 0 and (seed == "lexical" or missing == 0)
    work = parts.work(records_examined=examined, adjacency_examined=expansion.adjacency_examined,
                 relations_examined=len(expansion.relations_examined), nodes_admitted=len(expansion.depth_of),
                 affinity_lookups=found.affinity_lookups, affinity_reuses=found.affinity_reuses,
                 candidates_ranked=len(final), stale_relations_skipped=expansion.stale_skipped,
                 embeddings_missing=missing, affinity_missing=affinity_missing)
    parameters = {"limit": limit, "seed": seed, "space_id": None if vq is None else vq.receipt["space_id"],
                  "expansion": {"max_depth": limits.max_depth, "max_nodes": limits.max_nodes,
                                "max_edges": limits.max_edges, "max_scan": limits.max_scan}}
    relations = [_relation_view(used[rid]) for rid in sorted(used)]
    anchor_view = [{**parts.ref(index, a.id), "rank": a.rank} for a in anchors]
    return parts.page(search, parameters, None if vq is None else vq.receipt, hits,
                      parts.coverage(graph=not budget_cut, embeddings=embeddings_ok), work, expansion.stop_reasons,
                      anchors=anchor_view, relations=relations)


def _relation_view(relation: dict) -> dict:
    return {key: relation[key] for key in ("id", "revision", "kind", "source", "target", "provenance")}


def _proof(index: ScopeIndex, path) -> dict:
    steps = []
    for step in path.steps:
        relation = step.edge.relation
        steps.append({
            "relation_id": relation["id"], "relation_revision": relation["revision"], "kind": relation["kind"],
            "direction": step.direction, "from": parts.ref(index, step.source), "to": parts.ref(index, step.target),
            "weight": step.edge.weight,
            "affinity": {"cosine": step.affinity.cosine, "value": exact.to_float(step.affinity.value),
                         "embedding_receipt": step.affinity.receipt()},
            "factor": exact.to_float(step.factor),
        })
    return {"anchor": {**parts.ref(index, path.anchor.id), "rank": path.anchor.rank}, "hops": path.hops,
            "strength": exact.to_float(path.strength), "strength_exact": exact.to_text(path.strength),
            "steps": steps}
