"""The seeded-walk family's catalog entry (protocol v3, docs/graph-v3.md): every parameter.

Held in protocols/ because a derivation step copies it into protocol v3 (protocols/registry.py);
the server's catalog lists it from here. Frozen by name like every profile: a change to what it
computes is a new name. Floats stay
floats and integers integers (the catalog is compared by digest).
"""

from __future__ import annotations

WALK_KINDS = ["causal_claim", "same_entity", "semantic_related", "supports", "temporal_before"]

WALK_PROFILES: dict[str, dict] = {
    "seeded_walk_v1": {
        "family": "walk",
        "base": {
            "profile": "weighted_rrf_v2",
            "channels": {
                "lexical": {"profile": "bm25_v1", "weight": 0.25, "depth": 100},
                "semantic": {"profile": "cosine_exact_v1", "weight": 0.75, "depth": 100, "min_score": -1.0},
            },
            "k": 2,
            "depth": 100,
        },
        "seeds": 4,
        "seed_mass": "fused_base_score",
        "steps": 2,
        "alpha": 0.5,
        "graph": {
            "kinds": WALK_KINDS,
            "directions": ["forward", "backward"],
            "neighbours": "distinct_other_endpoints_of_eligible_relations",
            "spread": "alpha_times_mass_over_neighbour_count",
            "step_relation": "smallest_relation_id",
        },
        "walk_order": ["visit_mass_desc", "record_id_asc"],
        "walk_depth": 100,
        "fusion": {"base": "fused_base_score", "walk_weight": 0.75, "walk_k": 2, "missing_side": 0.0},
        "limit_max": 100,
        "arithmetic": "exact_rational",
        "tie_break": "record_id_asc",
    },
}
