"""The ranking catalog of the v1 routes (docs/design.md §7): lexical, semantic, hybrid and graph.

Written out here, not loaded from a protocol file: the evaluator compares the lab's live catalog
with the protocol's frozen `ranking_profiles` copy by digest, and a catalog read from that same
file would prove nothing. Floats stay floats and integers stay integers exactly as the protocol
writes them, because `digest` distinguishes `1` from `1.0`. Beside the later families' entries
(rescue.py, walk.py, ann.py in this package), one home for every profile; the route table
(protocols/routes.py) binds each route's entries, and the server serves them from there.
"""

from __future__ import annotations

_GRAPH_COMMON = {
    "family": "graph",
    "seed_profiles": {"hybrid": "weighted_rrf_v2", "lexical": "bm25_v1"},
    "base_depth": 100,
    "anchors": 4,
    "expansion_defaults": {"max_depth": 2, "max_nodes": 128, "max_edges": 256, "max_scan": 1024},
    "directions": ["forward", "backward"],
    "anchor_strength": {"numerator": 1.0, "offset": 2},
    "step_factor": 0.5,
    "affinity": {
        "base": 0.5,
        "scale": 0.5,
        "similarity": "cosine_exact_v1",
        "negative_cosine": "clamped_to_0",
        "missing_embedding_cosine": 0.0,
        "lexical_seed_affinity": 1.0,
    },
    "path_preference": ["strength_desc", "hops_asc", "anchor_rank_asc", "step_sequence_asc"],
    "graph_order": ["strength_desc", "hops_asc", "anchor_rank_asc", "record_id_asc"],
    "final_score": {
        "base_weight": 0.25,
        "graph_weight": 0.75,
        "offset": 2,
        "arithmetic": "exact_rational",
        "missing_side": 0.0,
    },
    "tie_break": "record_id_asc",
}


def _graph(kind_weights: dict[str, float]) -> dict:
    profile = {key: value for key, value in _GRAPH_COMMON.items()}
    profile["kind_weights"] = kind_weights
    return profile


def _rrf(lexical_weight: float, semantic_weight: float, k: int) -> dict:
    return {
        "family": "hybrid",
        "fusion": "weighted_reciprocal_rank",
        "channels": {
            "lexical": {"profile": "bm25_v1", "weight": lexical_weight, "depth": 100},
            "semantic": {"profile": "cosine_exact_v1", "weight": semantic_weight, "depth": 100},
        },
        "k": k,
        "rank_base": 1,
        "arithmetic": "exact_rational",
        "tie_break": "record_id_asc",
    }


V1_PROFILES: dict[str, dict] = {
    "bm25_v1": {
        "family": "lexical",
        "tokenizer": "maximal_unicode_letter_digit_runs_lowercased",
        "stemming": None,
        "stopwords": None,
        "query_terms": "deduplicated",
        "k1": 1.2,
        "b": 0.75,
        "idf": "ln(1+(N-df+0.5)/(df+0.5))",
        "returns": "documents_matching_at_least_one_query_term",
        "tie_break": "record_id_asc",
    },
    "cosine_exact_v1": {
        "family": "semantic",
        "similarity": "cosine",
        "search": "exact_all_current_bindings",
        "clamp": [-1.0, 1.0],
        "tie_break": "record_id_asc",
    },
    "weighted_rrf_v1": _rrf(0.5, 0.5, 60),
    "weighted_rrf_v2": _rrf(0.25, 0.75, 2),
    "typed_path_balanced_v1": _graph({
        "same_entity": 1.0,
        "semantic_related": 1.0,
        "supports": 1.0,
        "temporal_before": 0.5,
        "causal_claim": 0.5,
        "contradicts": 0.0,
    }),
    "typed_path_entity_v1": _graph({
        "same_entity": 1.0,
        "semantic_related": 0.5,
        "supports": 0.5,
        "temporal_before": 0.25,
        "causal_claim": 0.25,
        "contradicts": 0.0,
    }),
}

# each v1 route's profiles, its default first (a request without `profile` ranks with it)
V1_ROUTE_PROFILES: dict[str, tuple[str, ...]] = {
    "lexical": ("bm25_v1",),
    "semantic": ("cosine_exact_v1",),
    "hybrid": ("weighted_rrf_v1", "weighted_rrf_v2"),
    "graph": ("typed_path_balanced_v1", "typed_path_entity_v1"),
}


def v1_route(route: str) -> dict[str, dict]:
    """The catalog entries of one v1 route, in its order."""
    return {name: V1_PROFILES[name] for name in V1_ROUTE_PROFILES[route]}
