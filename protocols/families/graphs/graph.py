"""The graph family (route `graph`): typed paths from the base list's top passages along the
graph's relations, each hit with the proof the evaluator walks again (docs/retrieval.md,
docs/design.md §7). Its profiles weigh the title graph's relation kinds; `typed_path_imported_v1`
is typed_path_balanced_v1 over an imported graph's `shares_argument` relations instead
(docs/graph-import.md): every other parameter its parent's.

`relations` names the builder whose relations a profile follows; a protocol that does not build
them is refused (protocols/schema.py).
"""

from __future__ import annotations

import copy
from typing import Any

from ground.fields import Fields, join
from protocols.graph_file import IMPORTED_BUILDER
from protocols.route import TEXT, VECTOR_IF_HYBRID_SEED, Route, fixed_limit

# the title graph's kinds every typed-path profile weighs, and the imported graph's it may weigh
RELATION_KINDS = ("same_entity", "semantic_related", "supports", "temporal_before", "causal_claim",
                  "contradicts")
OPTIONAL_RELATION_KINDS = ("shares_argument",)
IMPORTED_KINDS = ["shares_argument"]
EXPANSION_KEYS = ("max_depth", "max_nodes", "max_edges", "max_scan")

_COMMON = {
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


def _typed_path(kind_weights: dict[str, float]) -> dict:
    profile = {key: value for key, value in _COMMON.items()}
    profile["kind_weights"] = kind_weights
    return profile


def _imported(parent: dict) -> dict:
    profile = copy.deepcopy(parent)
    profile["kind_weights"] = {kind: 0.0 for kind in profile["kind_weights"]} | {kind: 1.0 for kind in IMPORTED_KINDS}
    profile["relations"] = IMPORTED_BUILDER
    return profile


TYPED_PATH_BALANCED = _typed_path({
    "same_entity": 1.0,
    "semantic_related": 1.0,
    "supports": 1.0,
    "temporal_before": 0.5,
    "causal_claim": 0.5,
    "contradicts": 0.0,
})
GRAPH_PROFILES: dict[str, dict] = {
    "typed_path_balanced_v1": TYPED_PATH_BALANCED,
    "typed_path_entity_v1": _typed_path({
        "same_entity": 1.0,
        "semantic_related": 0.5,
        "supports": 0.5,
        "temporal_before": 0.25,
        "causal_claim": 0.25,
        "contradicts": 0.0,
    }),
    "typed_path_imported_v1": _imported(TYPED_PATH_BALANCED),
}


def check_expansion(f: Fields, expansion: Any, path: str) -> None:
    """A graph expansion budget (a graph method's `expansion`, a graph profile's defaults)."""
    f.obj(expansion, path, EXPANSION_KEYS)
    f.integer(expansion["max_depth"], join(path, "max_depth"), minimum=0)
    for key in EXPANSION_KEYS[1:]:
        f.integer(expansion[key], join(path, key), minimum=1)


def _check_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    seeds = profiles[method["profile"]].get("seed_profiles", {})
    f.string(method["seed"], join(path, "seed"), allowed=sorted(seeds))
    check_expansion(f, method["expansion"], join(path, "expansion"))


def check_profile(f: Fields, profile: dict, path: str, profiles: dict) -> None:
    f.obj(profile, path, ("seed_profiles", "base_depth", "anchors", "expansion_defaults",
                          "kind_weights"), extra=True)
    seeds = f.mapping(profile["seed_profiles"], join(path, "seed_profiles"))
    for seed, target in seeds.items():
        f.string(target, join(join(path, "seed_profiles"), seed), allowed=sorted(profiles))
    f.integer(profile["base_depth"], join(path, "base_depth"), minimum=1)
    f.integer(profile["anchors"], join(path, "anchors"), minimum=1)
    check_expansion(f, profile["expansion_defaults"], join(path, "expansion_defaults"))
    weights = f.obj(profile["kind_weights"], join(path, "kind_weights"), RELATION_KINDS,
                    optional=OPTIONAL_RELATION_KINDS)
    for kind in weights:
        f.number(weights[kind], join(join(path, "kind_weights"), kind), low=0.0)


ROUTES = (
    Route("graph", ("profile", "seed", TEXT, "limit", "expansion", VECTOR_IF_HYBRID_SEED), GRAPH_PROFILES,
          does="finds seed passages, follows typed links between passages up to the declared depth, "
               "and fuses what the paths reach with the seeds' ranking",
          page="docs/retrieval.md", check=_check_method, check_profile=check_profile, optional=("expansion",),
          limit=fixed_limit),
)
