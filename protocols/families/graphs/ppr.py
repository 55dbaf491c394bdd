"""The personalized-PageRank family (route `ppr`, docs/field-graphs.md): every parameter.

HippoRAG's retrieval with a named-entity recognizer in place of its OpenIE triples: reset mass on
the graph entities a question's entities match (normalized string match), weighted by node
specificity (1 / the number of passages holding the entity), damping 1/2, a fixed number of
iterations on a bounded subgraph, passages ranked by mass, ties by id. `ppr_entity_passages_v1`
is the declared HippoRAG 2 variant: passage nodes also seeded, by their fused base score, with
weight 1/20 (HippoRAG 2's 0.05). `ppr_names_v1` is the same PageRank over the v4 `shares_name`
relations. Rationals are strings ("1/2"), so the catalog's digest never depends on a float.
"""

from __future__ import annotations

import copy
from typing import Any

from protocols.families.graphs.walk import SEEDED_WALK
from protocols.route import ENTITIES, TEXT, VECTOR, Route

NER_KINDS = ["shares_entity"]  # document_ner_graph_v1 (builders/ner_graph.py)
NAME_KINDS = ["shares_name"]  # document_entity_graph_v1's, kept in document_ner_graph_v1
NER_BUILDER = "document_ner_graph_v1"

PPR_ENTITY = {
    "family": "ppr",
    "base": copy.deepcopy(SEEDED_WALK["base"]),  # weighted_rrf_v2 at depth 100, as the walks
    "graph": {
        "kinds": NER_KINDS,
        "relations": NER_BUILDER,
        "nodes": "passages and entities; an entity's passages are the endpoints of the eligible relations naming it",
        "entity_of_relation": "evidence_ref after its prefix",
    },
    "query_entities": {"source": "fixture", "match": "normalized_string_equal"},
    "reset": {
        "entity_weight": "1/passage_count",
        "passage_weight": "0",  # HippoRAG 2's passage seeds: off in the v1 default
        "passage_score": "fused_base_score",
    },
    "subgraph": {"radius": 3, "from": "reset_nodes"},  # entity -> passage -> entity -> passage
    "damping": "1/2",
    "iterations": 16,
    "arithmetic": {"grid_bits": 48, "reset": "floor(weight * 2^grid_bits / total weight)",
                   "step": "m'(v) = floor(r(v) / 2) + sum over neighbours u of floor(m(u) / (2 * degree(u)))"},
    "order": ["mass_desc", "record_id_asc"],
    "backfill": "base_order",  # passages without mass follow in the base's order
    "limit_max": 100,
    "tie_break": "record_id_asc",
}


def _variant(**changes) -> dict:
    profile: dict[str, Any] = copy.deepcopy(PPR_ENTITY)
    for path, value in changes.items():
        section, key = path.split("__")
        profile[section][key] = value
    return profile


PPR_PROFILES: dict[str, dict] = {
    "ppr_entity_v1": PPR_ENTITY,
    "ppr_entity_passages_v1": _variant(reset__passage_weight="1/20"),
    "ppr_names_v1": _variant(graph__kinds=NAME_KINDS),
}

ROUTES = (
    Route("ppr", ("profile", TEXT, VECTOR, ENTITIES, "limit"), PPR_PROFILES,
          does="runs personalized PageRank over the entity graph from the question's entities and "
               "ranks passages by the mass they receive",
          page="docs/field-graphs.md"),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

PPR_STEP: dict[str, Any] = dict(  # field-graphs v1 (docs/field-graphs.md): HippoRAG's published defaults, no tuning
    title_suffix=" (field-graphs v1: plus HippoRAG-style PPR over spaCy entities and over the v4 names)",
    methods={"graph_ppr": {"route": "ppr", "profile": "ppr_entity_v1", "limit": 10},
             "graph_ppr_passages": {"route": "ppr", "profile": "ppr_entity_passages_v1", "limit": 10},
             "graph_ppr_names": {"route": "ppr", "profile": "ppr_names_v1", "limit": 10}},
    primary_contrast={"candidate": "graph_ppr", "baseline": "graph_hybrid_balanced", "label": "confirmatory"},
    requires={"graph_hybrid_balanced": "typed_path_balanced_v1", "weighted_rrf_v2": "weighted_rrf_v2",
              "prf_hybrid_v1": "prf_hybrid_v1"},
    graph_builder="document_ner_graph_v1",
)

# the general protocol whose profiles join the server catalog (no PRF parent)
PPR_GENERAL_STEP: dict[str, Any] = {**PPR_STEP, "requires": {"graph_hybrid_balanced": "typed_path_balanced_v1",
                                                              "weighted_rrf_v2": "weighted_rrf_v2"}}
