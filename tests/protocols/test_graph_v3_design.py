"""The graph-v3 design rules (docs/graph-v3.md): the design protocols are their sample protocols
with the test selection replicated and every other row as development; the development rows they
select are disjoint from every test split of every protocol of the dataset; and the harness loads
development queries only (it never holds a test query's judgments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.design.graph_v3_data import load_dev_corpus
from importer.formats import reader_for
from importer.pipeline import select_cohort
from importer.reading import pinned_files
from protocols.committed import FROZEN_DIR
from protocols.derivations.design_cohort import DEVELOPMENT_SPLITS
from protocols.schema import load_protocol
from tests.conftest import SHARED_DATA, require_shared
from tests.evaluation_fixtures import built_inputs

REPO = Path(__file__).resolve().parents[2]
PROTOCOLS = FROZEN_DIR
SAMPLES = {"musique": "musique-sample", "hotpotqa": "hotpotqa-sample", "2wikimultihopqa": "2wikimultihopqa-sample"}


def test_design_protocols_are_derived_from_the_sample_protocols():
    for dataset in SAMPLES:
        design = load_protocol(PROTOCOLS / "design" / f"{dataset}-design-v3.json")
        sample = load_protocol(PROTOCOLS / "datasets" / f"{dataset}-sample-v1.json")
        # derived byte for byte by the design-cohort step: tests/protocols/test_protocol_registry.py
        assert design["selection"]["splits"]["test"] == sample["selection"]["splits"]["test"]
        assert set(design["selection"]["splits"]) - {"test"} <= set(DEVELOPMENT_SPLITS)


@pytest.mark.parametrize("dataset", list(SAMPLES))
def test_design_rows_are_disjoint_from_every_test_split(dataset):
    data = require_shared(SHARED_DATA / SAMPLES[dataset])
    design = load_protocol(PROTOCOLS / "design" / f"{dataset}-design-v3.json")
    chosen, _ = select_cohort(design, pinned_files(design, data), reader_for(design))
    development = {row_id(row) for split in DEVELOPMENT_SPLITS for row in chosen.get(split, [])}
    assert development
    protocols = sorted((PROTOCOLS / "datasets").glob(f"{dataset}-sample-v*.json"))
    assert len(protocols) >= 3  # v1, v2 (rescue) and v3 (walk)
    for path in protocols:
        protocol = load_protocol(path)
        selected, _ = select_cohort(protocol, pinned_files(protocol, data), reader_for(protocol))
        test = {row_id(row) for row in selected["test"]}
        assert test and development.isdisjoint(test), path.name
        # the design cohort's own test split is exactly the sample's: that is what keeps it out
        assert test == {row_id(row) for row in chosen["test"]}, path.name


def row_id(row: dict) -> str:
    return row["id"] if "id" in row else row["_id"]


@pytest.mark.heavy  # builds the session's generated, imported and embedded inputs
def test_the_harness_loads_development_queries_only(tmp_path_factory):
    inputs = built_inputs(tmp_path_factory)
    corpus = load_dev_corpus("synthetic", inputs.root)
    source = json.loads(inputs.source.read_text())
    development = {q["id"] for q in source["queries"] if q["split"] in DEVELOPMENT_SPLITS}
    test = {q["id"] for q in source["queries"] if q["split"] == "test"}
    assert {q.id for q in corpus.queries} == development and test
    assert corpus.excluded_ids == test and test.isdisjoint(q.id for q in corpus.queries)
