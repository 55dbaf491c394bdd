"""The pseudo-relevance feedback family (route `prf`, protocol v5, docs/prf.md): every parameter.

Three profiles, each a second retrieval step without a graph: `bm25_rm3_v1` (RM3 over bm25_v1;
Anserini's formula, fewer feedback documents and more of the query than its defaults), `cosine_rocchio_v1` (the query vector moved toward its top-k documents) and
`prf_hybrid_v1` (the two fused exactly as weighted_rrf_v2 fuses bm25_v1 and cosine_exact_v1).
A derivation step copies them into the v5 protocols (protocols/registry.py). Frozen by name: a change to what one computes is a new name. Floats stay
floats and integers integers (the catalog is compared by digest).
"""

from __future__ import annotations

import copy
from typing import Any

from protocols.route import TEXT, VECTOR, Route

BM25_RM3 = {
    "family": "prf",
    "channel": "lexical",
    "first_pass": "bm25_v1",
    # designed on development rows (docs/prf.md): Anserini's defaults (fbDocs 10, fbTerms 10,
    # originalQueryWeight 0.5) lost 0.136 pooled nDCG@10 to bm25_v1 there; this named variant 0.040
    "fb_docs": 3,
    "fb_terms": 10,
    "original_query_weight": 0.7,
    "document_model": "tf_over_kept_length_times_first_pass_score",
    "term_filter": {"max_document_share": 0.1, "min_length": 2, "max_length": 20},
    "query_model": "deduplicated_terms_equal_weight",
    "expansion_order": ["weight_desc", "term_asc"],
    "normalization": "l1_before_interpolation",
    "second_pass": "weighted_sum_of_bm25_v1_term_scores",
    "depth": 100,
    "limit_max": 100,
    "tie_break": "record_id_asc",
}

COSINE_ROCCHIO = {
    "family": "prf",
    "channel": "semantic",
    "first_pass": "cosine_exact_v1",
    "fb_docs": 3,  # designed on development rows (docs/prf.md)
    "beta": 0.5,
    "moved_query": "normalize(unit(q) + beta * mean(unit(d) for the fb_docs best d))",
    "second_pass": "cosine_exact_v1",
    "min_score": -1.0,
    "depth": 100,
    "limit_max": 100,
    "tie_break": "record_id_asc",
}


def _hybrid() -> dict:
    """The two PRF channels fused as weighted_rrf_v2 fuses its two (weights 0.25 / 0.75, k 2)."""
    return {
        "family": "prf",
        "channel": "hybrid",
        "fusion": "weighted_reciprocal_rank",
        "channels": {
            "lexical": {"profile": "bm25_rm3_v1", "weight": 0.25, "depth": 100},
            "semantic": {"profile": "cosine_rocchio_v1", "weight": 0.75, "depth": 100},
        },
        "k": 2,
        "rank_base": 1,
        "arithmetic": "exact_rational",
        "limit_max": 100,
        "tie_break": "record_id_asc",
    }


PRF_PROFILES: dict[str, dict] = {
    "bm25_rm3_v1": copy.deepcopy(BM25_RM3),
    "cosine_rocchio_v1": copy.deepcopy(COSINE_ROCCHIO),
    "prf_hybrid_v1": _hybrid(),
}

ROUTES = (
    Route("prf", ("profile", TEXT, VECTOR, "limit"), PRF_PROFILES,
          does="retrieves once, expands the question from its own top passages (RM3 terms or a "
               "Rocchio vector), and retrieves again",
          page="docs/prf.md"),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

PRF_STEP: dict[str, Any] = dict(  # protocol v5 (docs/prf.md): parameters chosen on development rows only
    title_suffix=" (v5: plus pseudo-relevance feedback: RM3, Rocchio and their fusion)",
    methods={"bm25_rm3_v1": {"route": "prf", "profile": "bm25_rm3_v1", "limit": 10},
             "cosine_rocchio_v1": {"route": "prf", "profile": "cosine_rocchio_v1", "limit": 10},
             "prf_hybrid_v1": {"route": "prf", "profile": "prf_hybrid_v1", "limit": 10}},
    primary_contrast={"candidate": "graph_hybrid_balanced", "baseline": "prf_hybrid_v1", "label": "confirmatory"},
    requires={"graph_hybrid_balanced": "typed_path_balanced_v1", "weighted_rrf_v2": "weighted_rrf_v2",
              "lexical": "bm25_v1"},
)
