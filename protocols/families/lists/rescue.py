"""The rescue family (route `rescue`, protocol v2, docs/rescue.md): every parameter, as plain data.

A derivation step copies these entries into protocol v2 (protocols/registry.py), and the server's
catalog lists them from here without importing the search code. A change to any value here is a
new method version: new profile name, new protocol (`lab protocol regenerate --check` fails on the
frozen v2 files otherwise).
"""

from __future__ import annotations

from typing import Any

from ground.fields import Fields, join
from protocols.route import TEXT, VECTOR, Route

GRAPH_KINDS = ("causal_claim", "same_entity", "semantic_related", "supports", "temporal_before")
RELATION_CUES = (
    "author", "birthplace", "born", "brother", "capital", "child", "children", "city", "composer",
    "country", "county", "created", "creator", "daughter", "died", "director", "father", "founded",
    "founder", "headquarters", "husband", "located", "member", "mother", "owned", "owner", "parent",
    "performer", "produced", "producer", "sibling", "sister", "son", "spouse", "successor", "wife",
    "wrote",
)

_BASE: dict[str, Any] = {
    "channels": {
        "lexical": {"profile": "bm25_v1", "weight": 0.5, "depth": 100},
        "semantic": {"profile": "cosine_exact_v1", "weight": 0.5, "depth": 100, "min_score": -1.0},
    },
    "fusion": "weighted_reciprocal_rank",
    "k": 60,
    "rank_base": 1,
    "depth": 100,
    "normalization": "divide_by_set_maximum",
    "arithmetic": "exact_rational",
    "tie_break": "record_id_asc",
}
_SEEDS = {
    "query_titles": {
        "title": "content_first_line",
        "normalization": "nfkc_casefold_word_runs_space_joined",
        "eligibility": "non_empty_not_all_digits_several_tokens_or_at_least_4_chars",
        "match": "space_delimited_in_normalized_query",
        "order": ["title_tokens_desc", "title_asc", "record_id_asc"],
        "seed_score": 1.0,
    },
    "base_top": 5,
    "base_seed_score": "normalized_base_score",
    "order": "query_titles_then_base_rank",
    "duplicates": "first_position_max_score",
    "cap": 32,
}
_LANE: dict[str, Any] = {
    "max_hops": 2,
    "hop_decay": 0.5,
    "score": "seed_score_times_decay_pow_hops_at_closest_hop",
    "seed_choice": ["seed_score_desc", "seed_position_asc"],
    "parent_choice": ["parent_id_asc", "relation_id_asc"],
    "include_hop_zero": True,
    "drop": "base_candidates",
    "order": ["lane_score_desc", "hops_asc", "record_id_asc"],
    "cap": 50,
    "max_nodes": 1024,
    "max_scan": 8192,
    "directions": ["forward", "backward"],
    "kinds": list(GRAPH_KINDS),
}
_GATE = {
    "modes": ["auto", "off", "force"],
    "tokens": "nfkc_casefold_word_runs",
    "relation_cues": list(RELATION_CUES),
    "entity_heavy_min_titles": 2,
    "agreement": {"top": 10, "measure": "jaccard_of_id_sets", "empty": 0, "low_below": 0.2},
    "confidence": {"measure": "normalized_base_gap_rank1_rank2", "missing": 0, "low_below": 0.01},
    "veto": {"max_tokens": 5, "min_agreement": 0.5, "requires_no_relation_cue": True},
    "fires": "not_vetoed_and_any_reason",
}


def _rescue_profile(combine: str, graph_weight: float | None) -> dict:
    profile = {
        "family": "rescue",
        "combine": combine,
        "base": _BASE,
        "seeds": _SEEDS,
        "lane": _LANE,
        "gate": _GATE,
        "limit_max": _BASE["depth"] + _LANE["cap"],
        "tie_break": "record_id_asc",
    }
    if combine == "append":
        profile["expander"] = {"hop_weight": 0.05, "seeds": "base_top_5", "hops": 1,
                               "directions": ["forward", "backward"], "kinds": list(GRAPH_KINDS),
                               "counts": "distinct_seeds", "adds_to": "normalized_base_score",
                               "order": ["rescored_desc", "record_id_asc"]}
        profile["final_score"] = {"form": "1/(offset+rank)", "offset": 60, "arithmetic": "exact_rational"}
    else:
        profile["expander"] = None
        profile["fusion"] = {"graph_weight": graph_weight, "graph_rank": "lane_rank", "k": 60,
                             "zero_weight": "channel_skipped", "candidates": "base_and_lane",
                             "arithmetic": "exact_rational"}
    return profile


RESCUE_PROFILES: dict[str, dict] = {
    "graph_rescue_v1": _rescue_profile("append", None),
    "graph_rescue_fuse_025_v1": _rescue_profile("fuse", 0.25),
    "graph_rescue_fuse_100_v1": _rescue_profile("fuse", 1.0),
}


def _check_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    f.string(method["graph_mode"], join(path, "graph_mode"), allowed=("auto", "force", "off"))


ROUTES = (
    Route("rescue", ("profile", TEXT, VECTOR, "limit", "graph_mode"), RESCUE_PROFILES,
          does="keeps a fused BM25 and cosine ranking and appends passages linked to its top "
               "passages below it, never above",
          page="docs/rescue.md", check=_check_method),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

RESCUE_STEP: dict[str, Any] = dict(  # protocol v2 (docs/rescue.md)
    title_suffix=" (v2: plus the rescue family)",
    # limit 150: base depth 100 + lane cap 50, the whole appended list in one retrieval per query
    methods={
        "graph_rescue": {"route": "rescue", "profile": "graph_rescue_v1", "limit": 150, "graph_mode": "auto"},
        "graph_rescue_fuse_025": {"route": "rescue", "profile": "graph_rescue_fuse_025_v1", "limit": 150,
                                  "graph_mode": "auto"},
        "graph_rescue_fuse_100": {"route": "rescue", "profile": "graph_rescue_fuse_100_v1", "limit": 150,
                                  "graph_mode": "auto"},
    },
    primary_contrast={"candidate": "graph_rescue", "baseline": "weighted_rrf_v1", "label": "confirmatory"},
    exploratory_analyses={
        "oracle_bound": {
            "methods": ["graph_rescue"],
            "rule": "every_rescued_judged_supporting_document_moved_to_the_front_in_rank_order",
            "uses_labels": True,
            "label": "upper_bound_not_a_retrieval_method",
        },
        "budget_curve": {
            "methods": ["graph_rescue", "graph_rescue_fuse_025", "graph_rescue_fuse_100"],
            "variants": ["whole_page", "base_block_only"],
            "budgets": [2000, 4000, 8000, 16000],
            "token_count": "bm25_v1_tokens_of_document_text",
            "selections": {
                "none": {"rule": "ranked_prefix_stop_at_first_document_that_does_not_fit"},
                "packed": {
                    "value": "1/log2(rank+1)",
                    "redundancy": "max_jaccard_of_bm25_token_sets_to_selected",
                    "marginal_value": "value*(1-redundancy)",
                    "skip_redundancy_at_least": 0.5,
                    "order": ["marginal_value_per_token_desc", "record_id_asc"],
                    "backfill": "skipped_documents_in_rank_order_that_fit",
                },
            },
            "metrics": ["tokens_spent", "evidence_recall", "chain_coverage"],
        },
        "rescue_diagnostics": ["first_rescued_rank", "rescued_judged_supports", "gate_hit_rate_with_reasons"],
    },
    # the rescue question is about reaching chain evidence, so its contrast reports chain coverage too
    contrast_metrics=("chain_coverage@10",),
)
