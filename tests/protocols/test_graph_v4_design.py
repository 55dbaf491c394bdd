"""The graph-v4 design harness (docs/graph-v4.md): it loads the development queries of a design
import only, the entity relations it builds in process are the builder's (what an import under a
v4 protocol writes), the frozen method served by the lab's code ranks exactly as its prototype, and
`lab bench graph-v4-dev` runs end to end and prints the development table."""

from __future__ import annotations

import json

import pytest

from bench.design.graph_v4_candidates import candidate
from bench.design.graph_v4_data import load_v4_corpus
from bench.design.graph_v4_dev import main as harness
from builders import entity_graph
from protocols.derivations.design_cohort import DEVELOPMENT_SPLITS
from tests.evaluation_fixtures import built_inputs

# heavy: reads the session's generated, imported and embedded inputs
pytestmark = pytest.mark.heavy

FROZEN_PROTOTYPE = "twalk(entity_alpha=1/4,names=3,titles=0,entity_steps=1)"


def test_the_harness_loads_development_queries_and_the_builders_relations(tmp_path_factory):
    inputs = built_inputs(tmp_path_factory)
    corpus = load_v4_corpus("synthetic", inputs.root)
    source = json.loads(inputs.source.read_text())
    development = {q["id"] for q in source["queries"] if q["split"] in DEVELOPMENT_SPLITS}
    test = {q["id"] for q in source["queries"] if q["split"] == "test"}
    assert {q.id for q in corpus.dev.queries} == development and corpus.dev.excluded_ids == test
    built = entity_graph.build_relations(corpus.projection, json.loads(inputs.fixture.read_text())["source_digest"])
    pairs = {(corpus.record[r["source"]], corpus.record[r["target"]]) for r in built["relations"]
             if r["kind"] == entity_graph.KIND}
    assert pairs and {(a, b) for a in corpus.entity for b in corpus.entity[a] if a < b} == \
        {tuple(sorted(p)) for p in pairs}
    assert corpus.counts == built["counts"]


def test_the_frozen_method_ranks_as_its_prototype(tmp_path_factory):
    corpus = load_v4_corpus("synthetic", built_inputs(tmp_path_factory).root)
    served, prototype = candidate("entity_walk_v1"), candidate(FROZEN_PROTOTYPE)
    for query in corpus.dev.queries:
        assert served(corpus, query).ranking == prototype(corpus, query).ranking


def test_the_harness_prints_the_development_table(tmp_path_factory, tmp_path, capsys):
    inputs = built_inputs(tmp_path_factory)
    out = tmp_path / "table.json"
    assert harness(["--runs", f"synthetic={inputs.root}", "--candidates", "graph_hybrid_balanced", "entity_walk_v1",
                    "ewalk(names=2)", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "paired against graph_hybrid_balanced" in printed and "one hop from the top 4 anchors" in printed
    table = json.loads(out.read_text())
    assert set(table["pooled"]) == {"weighted_rrf_v2", "graph_hybrid_balanced", "entity_walk_v1", "ewalk(names=2)"}
    assert table["graphs"]["synthetic"]["counts"]["shares_name"] == sum(
        len(v) for v in load_v4_corpus("synthetic", inputs.root).entity.values()) // 2
