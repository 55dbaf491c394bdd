"""The ANN family (route `ann`, docs/scale.md): its catalog entries, which a derivation step copies
into the ANN protocols (protocols/registry.py).

`cosine_hnsw_v1` freezes the engine and every parameter that changes which candidates come back:
the HNSW graph degree (m), the build beam (ef_construct), the search beam (hnsw_ef) and the
insertion order. Scores are never the engine's: each returned record is rescored with the exact
cosine of `cosine_exact_v1`, and the page is ordered by that score, then record id.
"""

from __future__ import annotations

from typing import Any

from protocols.families.lists.rescue import RESCUE_STEP
from protocols.route import VECTOR, Route, fixed_limit

ANN_PROFILES: dict[str, dict] = {
    "cosine_hnsw_v1": {
        "family": "ann",
        "engine": "faiss-cpu==1.15.1",
        "index": "IndexHNSWFlat",
        "distance": "inner_product_on_unit_float32_rows",
        "m": 16,
        "ef_construct": 128,
        "hnsw_ef": 128,
        "indexing_threads": 1,
        "insertion_order": "record_id_asc",
        "candidates": "engine_top_limit",
        "score": "cosine_exact_v1",
        "tie_break": "record_id_asc",
    },
}

ROUTES = (
    Route("ann", ("profile", VECTOR, "limit"), ANN_PROFILES,
          does="ranks passages by cosine through an approximate nearest-neighbour index (faiss HNSW)",
          page="docs/scale.md", optional=("profile",), limit=fixed_limit),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

ANN_STEP: dict[str, Any] = dict(  # the ANN protocols: v2 plus `semantic_ann`, compared with exact `semantic` (docs/scale.md)
    title_suffix=" (ANN: v2 plus the ANN lane)",
    replaces_title_suffix=RESCUE_STEP["title_suffix"],
    methods={"semantic_ann": {"route": "ann", "profile": "cosine_hnsw_v1", "limit": 10}},
    exploratory_analyses={"ann_agreement": {"methods": ["semantic_ann"], "exact_method": "semantic", "k": 10,
                                            "rbo_p": 0.9, "metrics": ["recall@10_against_exact", "rbo_ext@10"],
                                            "label": "exploratory"}},
    requires={"semantic": "cosine_exact_v1"},
)
