"""A protocol's pinned external graph (protocols/graph_file.py, docs/graph-import.md): required with
imported_triples_v1 and only with it, every field checked, and a profile over an imported graph
refused in a protocol that does not build one."""

from __future__ import annotations

import copy
import json

import pytest

from protocols.committed import DATASETS_DIR
from protocols.schema import ProtocolError, validate_protocol

OPENIE = json.loads((DATASETS_DIR / "hipporag-musique-openie-v1.json").read_text(encoding="utf-8"))


def refused(change) -> str:
    protocol = copy.deepcopy(OPENIE)
    change(protocol)
    with pytest.raises(ProtocolError) as info:
        validate_protocol(protocol)
    return str(info.value)


def test_the_committed_protocol_pins_the_shared_graph():
    pin = validate_protocol(copy.deepcopy(OPENIE))["graph_builder"]
    assert pin["method"] == "imported_triples_v1" and pin["graph_file"]["format"] == "hipporag_openie_v1"
    assert pin["passages"] == {"corpus_passages_without_triples": "allow"}
    assert "exploratory: development rows" in OPENIE["title"]
    assert OPENIE["evaluation"]["primary_contrast"]["label"] == "exploratory: development rows"


def test_every_field_of_the_pin_is_checked():
    assert "graph_file: missing field" in refused(lambda p: p["graph_builder"].pop("graph_file"))
    assert "'parquet' is not one of" in refused(lambda p: p["graph_builder"]["graph_file"].update(format="parquet"))
    assert "producer: must not be empty" in refused(lambda p: p["graph_builder"]["graph_file"].update(producer=""))
    assert "sha256" in refused(lambda p: p["graph_builder"]["graph_file"]["files"]["graph"].update(sha256="x"))
    assert "must be a plain file name" in refused(
        lambda p: p["graph_builder"]["graph_file"]["files"]["graph"].update(name="../g.json"))
    assert "'sometimes' is not one of" in refused(
        lambda p: p["graph_builder"]["passages"].update(graph_passages_repeated="sometimes"))
    assert "passages.everything: unexpected field" in refused(
        lambda p: p["graph_builder"]["passages"].update(everything="allow"))


def test_a_graph_file_without_the_imported_builder_and_a_profile_without_its_relations_are_refused():
    def title_graph(protocol):
        protocol["graph_builder"]["method"] = "document_title_graph_v1"
    assert "only imported_triples_v1 reads an external graph" in refused(title_graph)

    def bare(protocol):
        protocol["graph_builder"] = {"method": "document_title_graph_v1"}
    message = refused(bare)
    assert "follows the relations of 'imported_triples_v1'" in message
