"""The seeded-walk family (route `walk`, protocol v3, docs/graph-v3.md; protocol v4, docs/graph-v4.md):
every parameter.

A derivation step copies these entries into protocols v3 and v4 (protocols/registry.py); the
server's catalog lists them from here. Frozen by name like every profile: a change to what one
computes is a new name. Floats stay floats and integers integers (the catalog is compared by digest).
The `*_imported_v1` walks are seeded_walk_v1 and entity_walk_v1 over an imported graph's
`shares_argument` relations (docs/graph-import.md), every other parameter their parent's.
"""

from __future__ import annotations

import copy
from typing import Any

from protocols.graph_file import IMPORTED_BUILDER
from protocols.route import TEXT, VECTOR, Route

WALK_KINDS = ["causal_claim", "same_entity", "semantic_related", "supports", "temporal_before"]
ENTITY_KINDS = ["shares_name"]  # document_entity_graph_v1's relations (builders/entity_graph.py)
ENTITY_BUILDER = "document_entity_graph_v1"

SEEDED_WALK = {
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
}


def _entity_walk() -> dict:
    """seeded_walk_v1 with one more kind of step: from the seeds (step 1 only), a quarter of a
    record's mass spreads over its shares_name neighbours that are not title-graph neighbours,
    evenly; everything else is seeded_walk_v1's (designed on development rows, docs/graph-v4.md)."""
    profile: dict = {}
    for key, value in SEEDED_WALK.items():
        profile[key] = copy.deepcopy(value)
        if key == "graph":
            profile["entity_step"] = {
                "kinds": ENTITY_KINDS,
                "relations": ENTITY_BUILDER,
                "alpha": 0.25,
                "up_to_step": 1,
                "directions": ["forward", "backward"],
                "neighbours": "distinct_other_endpoints_of_eligible_relations_not_graph_neighbours",
                "spread": "alpha_times_mass_over_neighbour_count",
                "step_relation": "smallest_relation_id",
            }
    return profile


WALK_PROFILES: dict[str, dict] = {
    "seeded_walk_v1": SEEDED_WALK,
    "entity_walk_v1": _entity_walk(),
}
IMPORTED_KINDS = ["shares_argument"]


def _seeded_walk_imported() -> dict:
    profile = copy.deepcopy(WALK_PROFILES["seeded_walk_v1"])
    profile["graph"]["kinds"] = list(IMPORTED_KINDS)
    profile["graph"]["relations"] = IMPORTED_BUILDER
    return profile


def _entity_walk_imported() -> dict:
    profile = copy.deepcopy(WALK_PROFILES["entity_walk_v1"])
    profile["entity_step"]["kinds"] = list(IMPORTED_KINDS)
    profile["entity_step"]["relations"] = IMPORTED_BUILDER
    return profile


IMPORTED_WALK_PROFILES: dict[str, dict] = {
    "seeded_walk_imported_v1": _seeded_walk_imported(),
    "entity_walk_imported_v1": _entity_walk_imported(),
}

ROUTES = (
    Route("walk", ("profile", TEXT, VECTOR, "limit"), {**WALK_PROFILES, **IMPORTED_WALK_PROFILES},
          does="starts from the fused ranking's top passages, walks the graph a few steps, and fuses "
               "the passages it reaches back into that ranking",
          page="docs/graph-v3.md"),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

WALK_STEP: dict[str, Any] = dict(  # protocol v3 (docs/graph-v3.md); every other contrast of the parent is kept
    title_suffix=" (v3: plus the seeded walk)",
    methods={"graph_walk": {"route": "walk", "profile": "seeded_walk_v1", "limit": 10}},
    primary_contrast={"candidate": "graph_walk", "baseline": "weighted_rrf_v2", "label": "confirmatory"},
    requires={"weighted_rrf_v2": "weighted_rrf_v2"},
)


ENTITY_WALK_STEP: dict[str, Any] = dict(  # protocol v4 (docs/graph-v4.md): frozen on development rows only
    title_suffix=" (v4: plus the entity walk over document_entity_graph_v1)",
    methods={"graph_entity_walk": {"route": "walk", "profile": "entity_walk_v1", "limit": 10}},
    primary_contrast={"candidate": "graph_entity_walk", "baseline": "graph_hybrid_balanced", "label": "confirmatory"},
    requires={"graph_hybrid_balanced": "typed_path_balanced_v1", "weighted_rrf_v2": "weighted_rrf_v2",
              "graph_walk": "seeded_walk_v1"},
    graph_builder="document_entity_graph_v1",
)
