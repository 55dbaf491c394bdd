"""The search routes: validate the body (422 via ApiError), rank, and build the page.

`search(index, route, body)` is the whole interface with the app (docs/contracts.md, "Inside the
server"): the app has already authenticated, parsed JSON and admitted the request; it adds `fence`
and the timing header. The page layout is the one of docs/contracts.md; decisions the design
leaves open are written in docs/retrieval.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from server.retrieval import exact
from server import validation
from server.errors import ApiError
from server.retrieval.fusion import Fused, fuse
from server.retrieval.graph import Anchor, Limits, affinities, expand, final_scores, graph_ranks, strongest_paths
from server.retrieval.indexes import ScopeIndex, vector_sha256
from server.retrieval.lexical import bm25
from server.retrieval.profiles import PROFILE_DIGESTS, PROFILES, ROUTE_PROFILES
from server.rescue.page import search_rescue
from server.walk.page import search_walk
from server.retrieval.semantic import Query, cosine, prepare_query
from server.validation import LIMITS

# One source for the limits: server/validation.py's LIMITS, which health reports.
SEARCH_LIMIT = tuple(LIMITS["search_limit"])  # (1, 100)
MAX_DEPTH = tuple(LIMITS["max_depth"])  # (0, 3)
MAX_NODES = LIMITS["max_nodes"]  # 1024
MAX_EDGES = LIMITS["max_edges"]  # 4096
MAX_SCAN = LIMITS["max_scan"]  # 16384
SEMANTIC_DEPTH_MIN_SCORE = -1.0  # channels of fusion and graph seeds keep every cosine

_FIELDS = {
    "lexical": ({"query", "limit"}, {"profile"}),
    "semantic": ({"query_vector", "space_id", "limit"}, {"min_score", "profile"}),
    "hybrid": ({"profile", "query", "query_vector", "space_id", "limit"}, set()),
    "graph": ({"profile", "seed", "query", "limit"}, {"query_vector", "space_id", "expansion"}),
    "rescue": ({"profile", "query", "query_vector", "space_id", "limit", "graph_mode"}, set()),
    "ann": ({"query_vector", "space_id", "limit"}, {"profile"}),
    "walk": ({"profile", "query", "query_vector", "space_id", "limit"}, set()),
}
PAGE_OPTIONS = {"include_payload"}  # optional on every route: what the page carries, never the ranking
_EXPANSION_BOUNDS = {
    "max_depth": MAX_DEPTH,
    "max_nodes": (4, MAX_NODES),  # at least the 4 anchors
    "max_edges": (0, MAX_EDGES),
    "max_scan": (0, MAX_SCAN),
}


def _invalid(message: str, code: str = "wrong_type") -> ApiError:
    return ApiError(422, code, message)


# ---------------------------------------------------------------------------- validation


def _check_fields(body: object, route: str) -> dict:
    required, optional = _FIELDS[route]
    return validation.fields(body, f"{route} search body", tuple(sorted(required)),
                             tuple(sorted(optional | PAGE_OPTIONS)))


def _include_payload(body: dict) -> bool:
    value = body.get("include_payload", True)
    if not isinstance(value, bool):
        raise _invalid(f"include_payload must be true or false, got {validation.shown(value)}")
    return value


def _number(value: object, name: str, low: float, high: float) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _invalid(f"{name} must be a number, got {type(value).__name__}")
    try:
        value = float(value)
    except OverflowError:  # an integer literal beyond float64
        value = math.inf
    if not math.isfinite(value) or not low <= value <= high:
        raise _invalid(f"{name} must be a finite number within [{low}, {high}], got {value}", "out_of_range")
    return value


def _profile(body: dict, route: str) -> str:
    allowed = ROUTE_PROFILES[route]
    name = body.get("profile", allowed[0])
    if not isinstance(name, str) or name not in allowed:
        raise _invalid(f"unknown profile {validation.shown(name)} for the {route} route; "
                       f"expected one of {', '.join(allowed)}", "unknown_profile")
    return name


@dataclass(frozen=True)
class VectorQuery:
    query: Query
    receipt: dict


def _vector_query(index: ScopeIndex, body: dict) -> VectorQuery:
    space_id = body["space_id"]
    space = validation.bound_space(space_id, index.spaces)
    # The same rule as a stored vector (finite in float32, not all zero, the space's dimension).
    v32 = validation.query_vector(body["query_vector"], "query_vector", space.dimensions)
    return VectorQuery(prepare_query(space, v32), {"space_id": space_id, "vector_sha256": vector_sha256(v32)})


# ---------------------------------------------------------------------------- page parts


def _coverage(graph: bool = True, embeddings: bool = True) -> dict:
    return {"source": True, "candidates": True, "graph": graph, "embeddings": embeddings,
            "complete": graph and embeddings}


def _work(**counts: int) -> dict:
    work = {"records_examined": 0, "adjacency_examined": 0, "relations_examined": 0, "nodes_admitted": 0,
            "affinity_lookups": 0, "affinity_reuses": 0, "candidates_ranked": 0,
            "stale_relations_skipped": 0, "embeddings_missing": 0, "affinity_missing": 0}
    work.update(counts)
    return work


def _receipt(index: ScopeIndex, vq: VectorQuery | None, record_id: str) -> dict | None:
    if vq is None:
        return None
    binding = index.live_binding(vq.query.space.space_id, record_id)
    return None if binding is None else binding.receipt()


def _hit(index: ScopeIndex, rank: int, record_id: str, score: float, score_exact: str | None,
         channels: dict, receipt: dict | None, proof: dict | None = None) -> dict:
    record = index.records[record_id]
    return {"rank": rank, "id": record_id, "revision": record.revision, "payload": record.payload,
            "score": score, "score_exact": score_exact, "channels": channels,
            "embedding_receipt": receipt, "proof": proof}


def _ref(index: ScopeIndex, record_id: str) -> dict:
    return {"id": record_id, "revision": index.records[record_id].revision}


def _missing_embeddings(index: ScopeIndex, vq: VectorQuery) -> int:
    return len(index.records) - vq.query.space.live_count()


def _page(route: str, profile: str, parameters: dict, vq: VectorQuery | None, hits: list[dict],
          coverage: dict, work: dict, anchors: list | None = None, relations: list | None = None,
          stop_reasons: list | None = None) -> dict:
    return {"method": route, "profile": profile, "profile_digest": PROFILE_DIGESTS[profile],
            "parameters": parameters, "query_receipt": None if vq is None else vq.receipt, "hits": hits,
            "anchors": anchors or [], "relations": relations or [], "coverage": coverage,
            "stop_reasons": stop_reasons or [], "work": work}


def _rational_channel(rank: int | None, raw: float | None, part: tuple[int, int]) -> dict:
    return {"rank": rank, "raw_score": raw, "contribution": exact.to_float(part),
            "contribution_exact": exact.to_text(part)}


# ---------------------------------------------------------------------------- routes


def _lexical(index: ScopeIndex, body: dict) -> dict:
    profile = _profile(body, "lexical")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    ranking = bm25(index, query, limit)
    hits = [_hit(index, rank, rid, score, None,
                 {"lexical": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                 None)
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    work = _work(records_examined=ranking.matched, candidates_ranked=ranking.matched)
    return _page("lexical", profile, {"limit": limit}, None, hits, _coverage(), work)


def _semantic(index: ScopeIndex, body: dict) -> dict:
    profile = _profile(body, "semantic")
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    min_score = _number(body.get("min_score", -1.0), "min_score", -1.0, 1.0)
    vq = _vector_query(index, body)
    ranking = cosine(index, vq.query, limit, min_score)
    hits = [_hit(index, rank, rid, score, None,
                 {"semantic": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                 _receipt(index, vq, rid))
            for rank, (rid, score) in enumerate(zip(ranking.ids, ranking.scores), start=1)]
    missing = _missing_embeddings(index, vq)
    work = _work(records_examined=ranking.scored, candidates_ranked=ranking.scored, embeddings_missing=missing)
    parameters = {"limit": limit, "min_score": min_score, "space_id": vq.receipt["space_id"]}
    return _page("semantic", profile, parameters, vq, hits, _coverage(embeddings=missing == 0), work)


def _fused(index: ScopeIndex, profile_name: str, query: str, vq: VectorQuery) -> tuple[list[Fused], int]:
    profile = PROFILES[profile_name]
    lexical = bm25(index, query, profile["channels"]["lexical"]["depth"])
    semantic = cosine(index, vq.query, profile["channels"]["semantic"]["depth"], SEMANTIC_DEPTH_MIN_SCORE)
    fused = fuse(profile, {"lexical": (lexical.ids, lexical.scores), "semantic": (semantic.ids, semantic.scores)})
    return fused, lexical.matched + semantic.scored


def _fused_channels(entry: Fused) -> dict:
    channels = {}
    for channel in ("lexical", "semantic"):
        part = entry.channels.get(channel)
        channels[channel] = (_rational_channel(part.rank, part.raw_score, part.contribution) if part
                             else _rational_channel(None, None, (0, 1)))
    return channels


def _hybrid(index: ScopeIndex, body: dict) -> dict:
    profile = _profile(body, "hybrid")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    vq = _vector_query(index, body)
    fused, examined = _fused(index, profile, query, vq)
    hits = [_hit(index, rank, entry.id, exact.to_float(entry.score), exact.to_text(entry.score),
                 _fused_channels(entry), _receipt(index, vq, entry.id))
            for rank, entry in enumerate(fused[:limit], start=1)]
    missing = _missing_embeddings(index, vq)
    work = _work(records_examined=examined, candidates_ranked=len(fused), embeddings_missing=missing)
    parameters = {"limit": limit, "space_id": vq.receipt["space_id"]}
    return _page("hybrid", profile, parameters, vq, hits, _coverage(embeddings=missing == 0), work)


def _expansion_limits(body: dict, profile: dict) -> Limits:
    given = validation.fields(body.get("expansion", {}), "expansion", (), tuple(_EXPANSION_BOUNDS))
    defaults = profile["expansion_defaults"]
    values = {name: validation.integer(given.get(name, defaults[name]), f"expansion.{name}", *bounds)
              for name, bounds in _EXPANSION_BOUNDS.items()}
    return Limits(**values)


def _graph(index: ScopeIndex, body: dict) -> dict:
    profile_name = _profile(body, "graph")
    profile = PROFILES[profile_name]
    seed = body["seed"]
    if not isinstance(seed, str) or seed not in profile["seed_profiles"]:
        raise _invalid(f"seed must be one of {', '.join(profile['seed_profiles'])}, got {validation.shown(seed)}",
                       "unknown_profile")
    query = validation.query_text(body["query"])
    limit = validation.integer(body["limit"], "limit", *SEARCH_LIMIT)
    limits = _expansion_limits(body, profile)
    has_vector = "query_vector" in body or "space_id" in body
    if seed == "hybrid" and not has_vector:
        raise _invalid("a hybrid seed needs query_vector and space_id", "missing_field")
    if has_vector and not ("query_vector" in body and "space_id" in body):
        raise _invalid("query_vector and space_id go together", "missing_field")
    vq = _vector_query(index, body) if has_vector else None

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
    parts = final_scores(base_rank, graph_rank, profile)
    ordered = exact.exact_order(list(parts.items()), lambda item: exact.add(*item[1]), lambda item: item[0])

    hits, used = [], {}
    for rank, (rid, (base_part, graph_part)) in enumerate(ordered[:limit], start=1):
        path = search.paths.get(rid)
        channels = {
            "base": _rational_channel(base_rank.get(rid), base_raw.get(rid), base_part),
            "graph": _rational_channel(graph_rank.get(rid), None if path is None else exact.to_float(path.strength),
                                       graph_part),
        }
        proof = None if path is None else _proof(index, path)
        if path is not None:
            for step in path.steps:
                used[step.edge.relation["id"]] = step.edge.relation
        total = exact.add(base_part, graph_part)
        hits.append(_hit(index, rank, rid, exact.to_float(total), exact.to_text(total), channels,
                         _receipt(index, vq, rid), proof))

    affinity_missing = sum(1 for node in search.paths if affinity_query is not None and affinity[node].cosine is None)
    missing = 0 if vq is None else _missing_embeddings(index, vq)
    budget_cut = any(reason != "depth_limit" for reason in expansion.stop_reasons)
    embeddings_ok = affinity_missing == 0 and (seed == "lexical" or missing == 0)
    work = _work(records_examined=examined, adjacency_examined=expansion.adjacency_examined,
                 relations_examined=len(expansion.relations_examined), nodes_admitted=len(expansion.depth_of),
                 affinity_lookups=search.affinity_lookups, affinity_reuses=search.affinity_reuses,
                 candidates_ranked=len(parts), stale_relations_skipped=expansion.stale_skipped,
                 embeddings_missing=missing, affinity_missing=affinity_missing)
    parameters = {"limit": limit, "seed": seed, "space_id": None if vq is None else vq.receipt["space_id"],
                  "expansion": {"max_depth": limits.max_depth, "max_nodes": limits.max_nodes,
                                "max_edges": limits.max_edges, "max_scan": limits.max_scan}}
    relations = [_relation_view(used[rid]) for rid in sorted(used)]
    anchor_view = [{**_ref(index, a.id), "rank": a.rank} for a in anchors]
    return _page("graph", profile_name, parameters, vq, hits,
                 _coverage(graph=not budget_cut, embeddings=embeddings_ok), work,
                 anchor_view, relations, list(expansion.stop_reasons))


def _relation_view(relation: dict) -> dict:
    return {key: relation[key] for key in ("id", "revision", "kind", "source", "target", "provenance")}


def _proof(index: ScopeIndex, path) -> dict:
    steps = []
    for step in path.steps:
        relation = step.edge.relation
        steps.append({
            "relation_id": relation["id"], "relation_revision": relation["revision"], "kind": relation["kind"],
            "direction": step.direction, "from": _ref(index, step.source), "to": _ref(index, step.target),
            "weight": step.edge.weight,
            "affinity": {"cosine": step.affinity.cosine, "value": exact.to_float(step.affinity.value),
                         "embedding_receipt": step.affinity.receipt()},
            "factor": exact.to_float(step.factor),
        })
    return {"anchor": {**_ref(index, path.anchor.id), "rank": path.anchor.rank}, "hops": path.hops,
            "strength": exact.to_float(path.strength), "strength_exact": exact.to_text(path.strength),
            "steps": steps}


def _search_ann(index: ScopeIndex, body: dict) -> dict:
    from server.ann.page import search_ann  # the ANN family (server/ann, docs/scale.md); imports this module
    return search_ann(index, body)


_ROUTES = {"lexical": _lexical, "semantic": _semantic, "hybrid": _hybrid, "graph": _graph,
           "rescue": search_rescue,  # the rescue family: server/rescue/method.py, server/rescue/page.py (docs/rescue.md)
           "ann": _search_ann,
           "walk": search_walk}  # the seeded-walk family: server/walk/method.py, server/walk/page.py (docs/graph-v3.md)


def search(index: ScopeIndex, route: str, body: dict) -> dict:
    """The page of one search (without `fence`); ApiError 404 for an unknown route, 422 for a bad body."""
    handler = _ROUTES.get(route)
    if handler is None:
        raise ApiError(404, "unknown_route", f"no search route {route!r}; routes: {', '.join(_ROUTES)}")
    body = _check_fields(body, route)
    include_payload = _include_payload(body)
    if "include_payload" in body:
        body = {k: v for k, v in body.items() if k not in PAGE_OPTIONS}
    with index.lock:
        page = handler(index, body)
    if not include_payload:  # a thinner page for callers that keep their own texts; same ranking
        for hit in page["hits"]:
            hit["payload"] = None
    return page
