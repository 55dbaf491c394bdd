"""The HippoRAG 2 family (routes `hipporag2` and `hipporag_ner`, docs/hipporag2.md): every parameter, declared once.

The values are HippoRAG 2's published defaults (`utils/config_utils.py` of OSU-NLP-Group/HippoRAG):
5 linked facts and phrases, passage node weight 0.05, damping 0.5, synonym edges at cosine >= 0.8
among the 2,047 nearest phrases, at most 101 per phrase. What their code leaves to floats and to
set order, the lab fixes here: integers on declared grids and ties by id, so a page's every number
can be recomputed bit for bit. Rationals are strings ("1/2"), so the digest never depends on a float.
"""

from __future__ import annotations

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

PASSAGE, PHRASE = "p:", "e:"  # node name prefixes of the graph

HIPPORAG2_GRAPH: dict[str, Any] = {
    "phrase": "lowercase, every character outside [A-Za-z0-9 ] replaced by a space, stripped; an empty phrase names nothing",
    "fact": "a kept triple with its three elements as phrases; facts are the distinct processed triples",
    "fact_text": "Python's repr of the processed triple as a tuple, the text HippoRAG 2 encodes",
    "nodes": "every phrase that is a fact's subject or object, and every passage",
    "edges": {
        "relation": "subject-object of each processed triple of each passage (self loops dropped); weight 2 x the "
                    "number of such triples, HippoRAG 2 adding each pair in both directions to an undirected graph",
        "context": "passage-phrase for each phrase of the passage's triples; weight 1",
        "synonym": "phrase-phrase for each neighbour found from either end; weight the sum of the cosines found",
    },
    "synonyms": {
        "threshold": "4/5",
        "nearest": 2047,  # synonymy_edge_topk, the phrase itself among them
        "max_per_phrase": 101,  # their loop stops once more than 100 were kept
        "min_alphanumeric": 3,  # a phrase with 2 or fewer [A-Za-z0-9] characters seeks no synonym
        "cosine": "float64 dot product of the float64-normalized float32 phrase vectors",
        "near_threshold": "1/500000",  # a pair whose cosine is this close to the threshold may be an edge or not
        "near_threshold_rule": "the fixture's builder decides; the evaluator accepts either reading and walks with "
                               "the fixture's edges",
        "order": ["cosine_desc", "phrase_asc"],
    },
}

HIPPORAG2: dict[str, Any] = {
    "family": "hipporag2",
    "graph": HIPPORAG2_GRAPH,
    "linking": {
        "facts": 5,  # linking_top_k
        "fact_score": "cosine of the query to the fact text, min-max normalized over every fact (1 when all are equal)",
        "fact_score_bits": 32,  # a fact's normalized score as floor(score * 2^32) / 2^32
        "phrase_weight": "mean over the linked facts naming the phrase (once per role) of fact score / the number "
                         "of passages holding the phrase",
        "phrases": 5,  # linking_top_k again: phrases kept by weight, ties by phrase
        "filter": "none (HippoRAG 2 without its recognition-memory filter)",
        "ties": "facts by record id, phrases by text",
    },
    "passages": {
        "node_weight": "1/20",  # passage_node_weight
        "dense": "cosine_exact_v1 of the query to every passage, min-max normalized",
        "dense_bits": 16,  # a passage's normalized dense score as floor(score * 2^16)
    },
    "pagerank": {
        "damping": "1/2",
        "seed_unit": "2^-16 / 20: a passage seed is its dense integer, a phrase seed floor(weight * 20 * 2^16)",
        "grid_bits": 36,  # reset r(v) = floor(seed(v) * 2^36 / total seed)
        "transition_bits": 26,  # t(u, v) = floor(w(u, v) * 2^26 / strength(u)), exact from the edge weights
        "step": "m'(v) = floor(r(v) / 2) + floor(sum over u of m(u) t(u, v) / 2^27)",
        "max_iterations": 40,
        "stop": "no mass changed, or max_iterations (the page prints the last step's change)",
        "dangling": "a node with no edge pushes nothing (igraph returns that mass to the reset vector, which scales "
                    "every node alike and leaves the order unchanged)",
    },
    "no_linked_fact": "the dense order",
    "order": ["mass_desc", "record_id_asc"],
    "limit_max": 100,
    "tie_break": "record_id_asc",
}

# The same PageRank over a graph without an LLM: the phrases are the entities the pinned spaCy NER
# found in each passage (document_ner_graph_v1's `ner` output), a question's own entities link to
# their nearest phrase by cosine (HippoRAG 1's `link_node_by_dpr`), and a linked phrase weighs 1 /
# its passage count (HippoRAG 1's node specificity). docs/hipporag2.md lists each rule's source.
HIPPORAG_NER_GRAPH = {
    "phrase": HIPPORAG2_GRAPH["phrase"],
    "source": "the relations file's pinned NER output (document_ner_graph_v1's `ner`): each entity text of a "
              "passage, as a phrase",
    "nodes": "every phrase of a passage's entities, and every passage",
    "edges": {
        "relation": "none: the NER output states no relation between two entities",
        "context": "passage-phrase for each phrase of the passage's entities; weight 1",
        "synonym": HIPPORAG2_GRAPH["edges"]["synonym"],
    },
    "synonyms": HIPPORAG2_GRAPH["synonyms"],
    "encoding": "node phrases and question phrases by the fixture's document encoder (phrase to phrase)",
}

HIPPORAG_NER = {
    "family": "hipporag_ner",
    "graph": HIPPORAG_NER_GRAPH,
    "linking": {
        "entities": "the question's entities of the fixture (query_entities) as phrases, distinct, ascending, "
                    "the empty one dropped",
        "max_entities": 64,  # the first 64 by phrase are sent (the route refuses more)
        "nearest": "each entity's phrase of highest cosine_exact_v1 among the graph's phrases, ties by phrase",
        "phrase_weight": "1 / the number of passages holding the phrase (HippoRAG 1's node_specificity), once "
                         "however many entities link it",
        "phrases": "every linked phrase (HippoRAG 1 keeps them all), weight desc, phrase asc",
        "filter": "none",
    },
    "passages": HIPPORAG2["passages"],
    "pagerank": HIPPORAG2["pagerank"],
    "no_linked_phrase": "the dense order",
    "order": HIPPORAG2["order"],
    "limit_max": HIPPORAG2["limit_max"],
    "tie_break": HIPPORAG2["tie_break"],
}


# How the graph reaches the lab (docs/hipporag2.md, "How the lab holds the graph"): its phrases and
# facts are node memories of the passages' scope (protocols/route.py), which no other method
# ranks; a fact's vector is a binding in the protocol's space; a passage `states` a fact (evidence
# "triples:N", the passage's processed triples equal to it) and a phrase is `synonym_of` another
# (evidence "cosine:C", the cosine's float repr), both as relations.
NODE_PHRASE, NODE_FACT = "phrase", "fact"
FACT_ENDS = ("subject", "object")  # metadata keys of a fact memory: its phrases
STATES, SYNONYM_OF = "states", "synonym_of"  # relation kinds
TRIPLES_REF, COSINE_REF = "triples:", "cosine:"  # evidence_ref prefixes of the two kinds
# The NER graph's context edges: a passage `mentions` a phrase (evidence "ner:" + the labels the
# recognizer gave the entities that process to it, comma-separated, ascending); its phrase vectors
# are bindings too, since a question's entities link to them.
MENTIONS, NER_REF = "mentions", "ner:"
FIXTURE_SECTION = "hipporag2_graph"  # the fixture's phrase and fact vectors and its synonym edges
SECTION_GRAPHS = ("imported_triples", "ner_entities")  # what a section's graph is built from (its `graph`)

PHRASE_NODE = NodeKind(NODE_PHRASE)
FACT_NODE = NodeKind(NODE_FACT, FACT_ENDS)
# A relation carries its weight in its evidence: a count of triples, or a cosine as Python writes a
# float, in (0, 2) (a float64 cosine of two unit vectors may exceed 1 by an ulp, and HippoRAG 2 weighs
# the edge with it unclamped); a mention names the recognizer's labels (its weight is 1).
STATES_RELATION = RelationKind(STATES, TRIPLES_REF, r"[1-9][0-9]{0,8}", "a count from 1")
SYNONYM_RELATION = RelationKind(SYNONYM_OF, COSINE_REF, r"[01]\.[0-9]+(e-[0-9]+)?", "a cosine in (0, 2)",
                                within=lambda text: 0.0 < float(text) < 2.0)
MENTIONS_RELATION = RelationKind(MENTIONS, NER_REF, r"[A-Z_]{1,32}(,[A-Z_]{1,32}){0,31}", "NER labels, comma-separated")


# HippoRAG 2 set its synonym threshold (synonymy_edge_sim_threshold 0.8) for NV-Embed-v2; the lab runs
# it as it is under all-MiniLM-L6-v2, and under multilingual-e5-small only as calibrated below
# (docs/embeddings.md, "Thresholds and their encoder")
NV_EMBED = "nvidia/NV-Embed-v2"
E5_SMALL = "intfloat/multilingual-e5-small"
SYNONYM_PATH = ("graph", "synonyms", "threshold")
SYNONYM_THRESHOLD = Threshold(SYNONYM_PATH, NV_EMBED, "HippoRAG 2's synonymy_edge_sim_threshold",
                              {DEFAULT_ENCODER: "as_is"})

# The same rule for E5: the cosine above which the same share of unrelated phrase pairs lies as lies
# at or above 0.8 under all-MiniLM-L6-v2 (`lab bench threshold-calibration`, development rows only;
# the share and the pairs are in the profile, so the rule is frozen with it)
E5_SYNONYM_VALUE = "0.938"
E5_CALIBRATION = {
    "rule": "the cosine above which the same share of unrelated phrase pairs lies as lies at or above 4/5 under "
            "all-MiniLM-L6-v2",
    "pairs": "every pair of distinct spaCy entity phrases (HippoRAG's phrase processing) of the judged paragraphs "
             "of two different development rows of the MuSiQue sample (25 rows, 798 phrases, 236,555 pairs)",
    "share": "37 of 236,555 pairs (0.000156) at or above 4/5 under all-MiniLM-L6-v2; multilingual-e5-small puts "
             "0.947 of them there",
    "measured": "0.937985 (lab bench threshold-calibration), rounded to 0.938",
}
E5_SYNONYMS = {**HIPPORAG2_GRAPH["synonyms"], "threshold": E5_SYNONYM_VALUE, "calibration": E5_CALIBRATION}
HIPPORAG2_E5 = {**HIPPORAG2, "graph": {**HIPPORAG2_GRAPH, "synonyms": E5_SYNONYMS}}
E5_SYNONYM_THRESHOLD = Threshold(SYNONYM_PATH, E5_SMALL, "calibrated from hipporag2_v1's 4/5 under all-MiniLM-L6-v2")
HIPPORAG2_PROFILES: dict[str, dict] = {"hipporag2_v1": HIPPORAG2, "hipporag2_e5_v1": HIPPORAG2_E5}

# The same rule for all-mpnet-base-v2 (LinearRAG's encoder, the third space of the LinearRAG suite),
# measured on the same pairs
MPNET_SYNONYM_VALUE = "0.819"
MPNET_CALIBRATION = {
    **E5_CALIBRATION,
    "share": "37 of 236,555 pairs (0.000156) at or above 4/5 under all-MiniLM-L6-v2; all-mpnet-base-v2 puts "
             "0.000224 of them there",
    "measured": "0.818931 (lab bench threshold-calibration), rounded to 0.819",
}
MPNET_SYNONYMS = {**HIPPORAG2_GRAPH["synonyms"], "threshold": MPNET_SYNONYM_VALUE, "calibration": MPNET_CALIBRATION}
HIPPORAG_NER_MPNET = {**HIPPORAG_NER, "graph": {**HIPPORAG_NER_GRAPH, "synonyms": MPNET_SYNONYMS}}
MPNET_SYNONYM_THRESHOLD = Threshold(SYNONYM_PATH, MPNET, "calibrated from hipporag_ner_v1's 4/5 under all-MiniLM-L6-v2")
HIPPORAG_NER_PROFILES: dict[str, dict] = {"hipporag_ner_v1": HIPPORAG_NER, "hipporag_ner_mpnet_v1": HIPPORAG_NER_MPNET}
SYNONYM_THRESHOLDS = {"hipporag2_v1": SYNONYM_THRESHOLD, "hipporag2_e5_v1": E5_SYNONYM_THRESHOLD,
                      "hipporag_ner_v1": SYNONYM_THRESHOLD, "hipporag_ner_mpnet_v1": MPNET_SYNONYM_THRESHOLD}


def synonym_rules(encoder: str) -> dict:
    """The synonym rules a fixture section of this encoder is built with: the profile's calibrated
    for that encoder, else HippoRAG 2's (which runs only where it carries over)."""
    for name, profile in {**HIPPORAG2_PROFILES, **HIPPORAG_NER_PROFILES}.items():
        if SYNONYM_THRESHOLDS[name].set_for == encoder:
            return profile["graph"]["synonyms"]
    return HIPPORAG2_GRAPH["synonyms"]


def _max_entities(profile: Mapping) -> int:
    return profile["linking"]["max_entities"]


ROUTES = (
    Route("hipporag2", ("profile", VECTOR, "limit"), HIPPORAG2_PROFILES,
          does="links the question to the graph's facts by cosine, seeds their phrases and every "
               "passage, and ranks passages by a personalized PageRank over the whole graph",
          page="docs/hipporag2.md",
          data=FamilyData(FIXTURE_SECTION, (PHRASE_NODE, FACT_NODE), (STATES_RELATION, SYNONYM_RELATION)),
          thresholds={name: (SYNONYM_THRESHOLDS[name],) for name in HIPPORAG2_PROFILES}),
    Route("hipporag_ner", ("profile", VECTOR, ENTITY_VECTORS, "limit"), HIPPORAG_NER_PROFILES,
          does="links each of the question's named entities to the graph's nearest entity by "
               "cosine, seeds those and every passage, and ranks passages by a personalized "
               "PageRank over the whole entity graph",
          page="docs/hipporag2.md",
          data=FamilyData(FIXTURE_SECTION, (PHRASE_NODE,), (MENTIONS_RELATION, SYNONYM_RELATION), _max_entities),
          thresholds={name: (SYNONYM_THRESHOLDS[name],) for name in HIPPORAG_NER_PROFILES},
          protocol_flag=ProtocolFlag(
              "ner-graph", "build the spaCy entity graph (document_ner_graph_v1) and add HippoRAG 2's PageRank over "
                           "it, hipporag_ner (docs/hipporag2.md); not with --graph",
              lambda dataset: {**NER_STEP, "title_suffix": " (NER graph)"})),
)


# ---------------------------------------------------------------- what adds the family to a protocol
# The fields of an "add a method family" step (protocols/derivations/method_family.py), as data;
# protocols/registry.py declares the committed protocols each one made.

# HippoRAG 2 without its recognition filter over an imported graph (docs/hipporag2.md): its published
# defaults, no tuning, beside its own dense retriever under parity (`semantic`)
HIPPORAG2_STEP: dict[str, Any] = dict(
    title_suffix=" (plus HippoRAG 2 without its recognition filter over the imported graph)",
    methods={"hipporag2": {"route": "hipporag2", "profile": "hipporag2_v1", "limit": 10}},
    requires={"semantic": "cosine_exact_v1"},
)


# The same PageRank over the spaCy entity graph of the three samples (docs/hipporag2.md): no LLM at
# build or query time, HippoRAG 1's entity linking, HippoRAG 2's passage nodes; defaults, no tuning
NER_STEP: dict[str, Any] = dict(
    title_suffix=" (hipporag2 v1: plus HippoRAG 2's whole-graph PageRank over the spaCy entities, entities linked "
                 "by cosine)",
    methods={"hipporag_ner": {"route": "hipporag_ner", "profile": "hipporag_ner_v1", "limit": 10}},
    primary_contrast={"candidate": "hipporag_ner", "baseline": "weighted_rrf_v2", "label": "confirmatory"},
    contrast_metrics=("recall@2", "recall@5"),
    requires={"weighted_rrf_v2": "weighted_rrf_v2", "graph_hybrid_balanced": "typed_path_balanced_v1",
              "graph_ppr": "ppr_entity_v1", "semantic": "cosine_exact_v1"},
    graph_builder="document_ner_graph_v1",
)
