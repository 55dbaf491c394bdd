"""The v1 search routes: lexical, semantic, hybrid and graph (docs/retrieval.md).

Each handler takes the scope's index and a body whose fields the route table (server/routes.py)
has already checked, validates the values (422 via ApiError), ranks, and builds the page from the
public parts of server/retrieval/page_parts.py. The page layout is the one of docs/contracts.md;
decisions the design leaves open are written in docs/retrieval.md.
"""

from __future__ import annotations

from ground.canonical import digest
from protocols.profiles.v1 import V1_ROUTE_PROFILES
from protocols.routes import ROUTES
from server import validation
from server.retrieval import exact
from server.retrieval import page_parts as parts
from server.retrieval.fusion import Fused, fuse
from server.retrieval.graph import Anchor, Limits, affinities, expand, final_scores, graph_ranks, strongest_paths
from server.retrieval.indexes import ScopeIndex
from server.retrieval.lexical import bm25
from server.retrieval.request import SEARCH_LIMIT, VectorQuery, invalid, number, profile_name, vector_query
from server.retrieval.semantic import cosine
from server.validation import LIMITS

MAX_DEPTH = tuple(LIMITS["max_depth"])  # (0, 3)
MAX_NODES = LIMITS["max_nodes"]  # 1024
MAX_EDGES = LIMITS["max_edges"]  # 4096
MAX_SCAN = LIMITS["max_scan"]  # 16384
SEMANTIC_DEPTH_MIN_SCORE = -1.0  # channels of fusion and graph seeds keep every cosine

# the four first routes' catalog entries as the route table declares them (the graph route's include
# the typed paths over an imported graph, protocols/profiles/imported.py)
ROUTE_PROFILES = {route: tuple(ROUTES[route].profiles) for route in V1_ROUTE_PROFILES}
PROFILES = {name: profile for route in V1_ROUTE_PROFILES for name, profile in ROUTES[route].profiles.items()}
PROFILE_DIGESTS = {name: digest(profile) for name, profile in PROFILES.items()}  # a page carries its profile's digest

_EXPANSION_BOUNDS = {
    "max_depth": MAX_DEPTH,
    "max_nodes": (4, MAX_NODES),  # at least the 4 anchors
    "max_edges": (0, MAX_EDGES),
    "max_scan": (0, MAX_SCAN),
}


def _profile(body: dict, route: str) -> str:
    return profile_name(body, route, ROUTE_PROFILES[route])


def _page(route: str, profile: str, *args, **named) -> dict:
    """A v1 route's page: its profile's digest comes from the v1 catalog."""
    return parts.page(route, profile, PROFILE_DIGESTS[profile], *args, **named)


def search_lexical(index: ScopeIndex, body: dict) -> dict:
    profile = _profile(body, "lexical")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    ranking = bm25(index, query, limit)
    hits = [parts.hit(index, rank, rid, score, None,
                      {"lexical": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      None)
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    work = parts.work(records_examined=ranking.matched, candidates_ranked=ranking.matched)
    return _page("lexical", profile, {"limit": limit}, None, hits, parts.coverage(), work)


def search_semantic(index: ScopeIndex, body: dict) -> dict:
    profile = _profile(body, "semantic")
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    min_score = number(body.get("min_score", -1.0), "min_score", -1.0, 1.0)
    vq = vector_query(index, body)
    ranking = cosine(index, vq.query, limit, min_score)
    hits = [parts.hit(index, rank, rid, score, None,
                      {"semantic": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      parts.receipt(index, vq, rid))
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=ranking.scored, candidates_ranked=ranking.scored, embeddings_missing=missing)
    parameters = {"limit": limit, "min_score": min_score, "space_id": vq.receipt["space_id"]}
    return _page("semantic", profile, parameters, vq, hits, parts.coverage(embeddings=missing == 0), work)


def _fused(index: ScopeIndex, profile_name: str, query: str, vq: VectorQuery) -> tuple[list[Fused], int]:
    profile = PROFILES[profile_name]
    lexical = bm25(index, query, profile["channels"]["lexical"]["depth"])
    semantic = cosine(index, vq.query, profile["channels"]["semantic"]["depth"], SEMANTIC_DEPTH_MIN_SCORE)
    lists = {"lexical": (lexical.ids, lexical.scores), "semantic": (semantic.ids, semantic.scores)}
    fused = fuse(profile["fusion"], profile, lists)
    return fused, lexical.matched + semantic.scored


def _fused_channels(entry: Fused) -> dict:
    channels = {}
    for channel in ("lexical", "semantic"):
        part = entry.channels.get(channel)
        channels[channel] = (parts.rational_channel(part.rank, part.raw_score, part.contribution) if part
                             else parts.rational_channel(None, None, (0, 1)))
    return channels


def search_hybrid(index: ScopeIndex, body: dict) -> dict:
    profile = _profile(body, "hybrid")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    vq = vector_query(index, body)
    fused, examined = _fused(index, profile, query, vq)
    hits = [parts.hit(index, rank, entry.id, exact.to_float(entry.score), exact.to_text(entry.score),
                      _fused_channels(entry), parts.receipt(index, vq, entry.id))
            for rank, entry in enumerate(fused[:limit], start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=examined, candidates_ranked=len(fused), embeddings_missing=missing)
    parameters = {"limit": limit, "space_id": vq.receipt["space_id"]}
    return _page("hybrid", profile, parameters, vq, hits, parts.coverage(embeddings=missing == 0), work)


def _expansion_limits(body: dict, profile: dict) -> Limits:
    given = validation.fields(body.get("expansion", {}), "expansion", (), tuple(_EXPANSION_BOUNDS))
    defaults = profile["expansion_defaults"]
    values = {name: validation.integer(given.get(name, defaults[name]), f"expansion.{name}", *bounds)
              for name, bounds in _EXPANSION_BOUNDS.items()}
    return Limits(**values)


def search_graph(index: ScopeIndex, body: dict) -> dict:
    profile_name = _profile(body, "graph")
    profile = PROFILES[profile_name]
    seed = body["seed"]
    if not isinstance(seed, str) or seed not in profile["seed_profiles"]:
        raise invalid(f"seed must be one of {', '.join(profile['seed_profiles'])}, got {validation.shown(seed)}",
                       "unknown_profile")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    limits = _expansion_limits(body, profile)
    has_vector = "query_vector" in body or "space_id" in body
    if seed == "hybrid" and not has_vector:
        raise invalid("a hybrid seed needs query_vector and space_id", "missing_field")
    if has_vector and not ("query_vector" in body and "space_id" in body):
        raise invalid("query_vector and space_id go together", "missing_field")
    vq = vector_query(index, body) if has_vector else None

    depth = profile["base_depth"]
    if seed == "hybrid":
        fused, examined = _fused(index, profile["seed_profiles"]["hybrid"], query, vq)
        base = [(entry.id, exact.to_float(entry.score)) for entry in fused[:depth]]
    else:
        ranking = bm25(index, query, depth)
        base, examined = list(zip(ranking.ids, ranking.scores)), ranking.matched
    base_rank = {rid: rank for rank, (rid, _) in enumerate(base, start=1)}
    base_raw = dict(base)
    anchors = [Anchor(rid, rank) for rank, (rid, _) in enumerate(base[: profile["anchors"]], start=1)]

    expansion = expand(index, anchors, profile["kind_weights"], limits)
    affinity_query = vq.query if seed == "hybrid" else None
    affinity = affinities(index, list(expansion.depth_of), affinity_query, profile)
    search = strongest_paths(anchors, expansion, affinity, profile, limits.max_depth)
    graph_rank = graph_ranks(search.paths)
    final = final_scores(base_rank, graph_rank, profile)
    ordered = exact.exact_order(list(final.items()), lambda item: exact.add(*item[1]), lambda item: item[0])

    hits, used = [], {}
    for rank, (rid, (base_part, graph_part)) in enumerate(ordered[:limit], start=1):
        path = search.paths.get(rid)
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

    affinity_missing = sum(1 for node in search.paths if affinity_query is not None and affinity[node].cosine is None)
    missing = 0 if vq is None else parts.missing_embeddings(index, vq)
    budget_cut = any(reason != "depth_limit" for reason in expansion.stop_reasons)
    embeddings_ok = affinity_missing == 0 and (seed == "lexical" or missing == 0)
    work = parts.work(records_examined=examined, adjacency_examined=expansion.adjacency_examined,
                 relations_examined=len(expansion.relations_examined), nodes_admitted=len(expansion.depth_of),
                 affinity_lookups=search.affinity_lookups, affinity_reuses=search.affinity_reuses,
                 candidates_ranked=len(final), stale_relations_skipped=expansion.stale_skipped,
                 embeddings_missing=missing, affinity_missing=affinity_missing)
    parameters = {"limit": limit, "seed": seed, "space_id": None if vq is None else vq.receipt["space_id"],
                  "expansion": {"max_depth": limits.max_depth, "max_nodes": limits.max_nodes,
                                "max_edges": limits.max_edges, "max_scan": limits.max_scan}}
    relations = [_relation_view(used[rid]) for rid in sorted(used)]
    anchor_view = [{**parts.ref(index, a.id), "rank": a.rank} for a in anchors]
    return _page("graph", profile_name, parameters, vq, hits,
                 parts.coverage(graph=not budget_cut, embeddings=embeddings_ok), work,
                 anchor_view, relations, list(expansion.stop_reasons))


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
