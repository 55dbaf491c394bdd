"""The frozen inputs of a campaign, loaded once and cross-checked before any request is sent.

Protocol, fixture (with its embedded source), relations and generation are bound to each other by
digests; a campaign that mixes files of two imports, or a file edited by hand, is refused here with
the name of the file and the link that does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from builders.embedding import FixtureError, decode_vector, validate_fixture, vector_sha256
from builders.embedding.sections import SECTIONS, LabRecords
from builders.graph_builders import rebuild
from builders.title_graph import GraphInputError, project
from evaluator.entity_relations import entity_failures
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.fast_canonical import digest_finite
from ground.files import load_json
from protocols.embedding_space import FIELD as EMBEDDING_SPACE
from protocols.embedding_space import space_mismatches
from protocols.graph_file import GRAPH_FILE, passage_policy
from protocols.schema import load_protocol

__all__ = ["Frozen", "InputMismatch", "frozen_received", "frozen_view", "load_frozen", "vector_sha256"]


class InputMismatch(RefusedInput):
    """Two frozen inputs that do not belong together, or one that does not hold to itself."""


@dataclass
class Frozen:
    protocol: dict
    fixture: dict
    relations: dict
    generation: dict | None = None
    digests: dict[str, Any] = field(default_factory=dict)  # each input's digest (the source's may be absent)
    doc_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    query_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    doc_receipts: dict[str, str] = field(default_factory=dict)
    query_receipts: dict[str, str] = field(default_factory=dict)

    @property
    def source(self) -> dict:
        return self.fixture["source"]

    @property
    def documents(self) -> dict[str, dict]:
        return {doc["id"]: doc for doc in self.source["documents"]}

    @cached_property
    def records(self) -> LabRecords:
        """What the lab holds beyond documents: the node memories, vectors and relations of every
        fixture section a method family brings (builders/embedding/sections/)."""
        held = LabRecords()
        for name, section in SECTIONS.items():
            if name in self.fixture:
                held.add(section.records(self.fixture, self.relations))
        return held

    def lab_vector(self, key: str) -> np.ndarray:
        """The vector the lab binds to a document or a node memory."""
        vector = self.doc_vectors.get(key)
        return self.records.vectors[key] if vector is None else vector

    def lab_receipt(self, key: str) -> str:
        receipt = self.doc_receipts.get(key)
        return self.records.receipts[key] if receipt is None else receipt

    @property
    def lab_edges(self) -> list[dict]:
        """Every relation the lab holds: the graph file's, then the fixture sections'."""
        return self.relations["relations"] + self.records.edges

    @property
    def queries(self) -> dict[str, dict]:
        return {q["id"]: q for q in self.source["queries"]}

    @property
    def space(self) -> dict:
        return self.fixture["space"]

    @property
    def space_id(self) -> str:
        return self.fixture["space_id"]

    def query_entities(self, query_id: str) -> list[str]:
        """The query's entity texts from the fixture (builders/ner.py), distinct, sorted; refused when
        the fixture was built without them (`lab embed --query-entities`)."""
        table = self.fixture.get("query_entities")
        if table is None:
            raise InputMismatch("fixture: no query_entities (build it with lab embed --query-entities)")
        for entry in table["queries"]:
            if entry["id"] == query_id:
                return sorted({text for text, _ in entry["entities"]})
        raise InputMismatch(f"fixture: query_entities has no query {query_id}")

    def entity_phrases(self, section: str | None, query_id: str, most: int) -> list[tuple[str, np.ndarray]]:
        """The query's entity phrases with their vectors, the first `most`, from the fixture section
        a route's family names (its requests' `entity_vectors`, protocols/route.py)."""
        if section is None:
            raise InputMismatch("a route whose requests carry entity phrases names no fixture section for them")
        if section not in self.fixture:
            raise InputMismatch(f"fixture: no {section} section (build it with lab embed build "
                                f"--{section.replace('_', '-')})")
        phrases = SECTIONS[section].query_phrases
        if phrases is None:
            raise InputMismatch(f"fixture: the {section} section holds no question phrases")
        try:
            return phrases(self.fixture, self.records, query_id, most)
        except RefusedInput as exc:
            raise InputMismatch(str(exc)) from None

    def split_queries(self, split: str) -> list[dict]:
        return sorted((q for q in self.source["queries"] if q["split"] == split), key=lambda q: q["id"])


def load_frozen(protocol_path, fixture_path, relations_path, generation_path=None) -> Frozen:
    """Load and cross-check every frozen input; raises InputMismatch naming the broken link."""
    protocol = load_protocol(protocol_path)
    fixture = load_json(fixture_path, "fixture")
    relations = load_json(relations_path, "relations file")
    generation = load_json(generation_path, "generation file") if generation_path else None
    frozen = Frozen(protocol=protocol, fixture=fixture, relations=relations, generation=generation)
    verify(frozen)
    return frozen


def frozen_received(protocol: dict, fixture: dict, relations: dict, digests: Mapping[str, Any]) -> Frozen:
    """Inputs `load_frozen` has loaded and cross-checked elsewhere, received by a validation worker:
    refused unless their digests are `digests` (the ones that were checked), so the worker holds
    the same inputs without rebuilding the graph again."""
    frozen = Frozen(protocol=protocol, fixture=fixture, relations=relations)
    frozen.digests = {"protocol": digest(protocol), "source": fixture.get("source_digest"), "fixture": digest(fixture),
                      "relations": digest(relations)}
    differing = sorted(k for k in ("protocol", "fixture", "relations") if frozen.digests[k] != digests.get(k))
    if differing:
        raise InputMismatch(f"received inputs differ from the checked ones ({', '.join(differing)} digest)")
    _decode_vectors(frozen)
    return frozen


def frozen_view(protocol: dict, fixture: dict, relations: dict, digests: Mapping[str, Any]) -> Frozen:
    """What a validation worker reads from the files its caller shared
    (evaluator/verification/worker_inputs.py): the fixture without its document vectors (their matrix is
    mapped beside it), the relations without their projection. Their digests cannot be recomputed
    from a part, so they are the caller's, bound to the files by the files' SHA-256."""
    frozen = Frozen(protocol=protocol, fixture=fixture, relations=relations, digests=dict(digests))
    for entry in fixture["documents"]:
        frozen.doc_receipts[entry["id"]] = entry["vector_sha256"]
    for entry in fixture["queries"]:
        frozen.query_vectors[entry["id"]] = decode_vector(entry["vector"])
        frozen.query_receipts[entry["id"]] = entry["vector_sha256"]
    return frozen


def verify(frozen: Frozen) -> None:
    fixture, relations, protocol = frozen.fixture, frozen.relations, frozen.protocol
    # The fixture's own contract (source, space identity, every vector's hash and norm) has one
    # home, builders.embedding; what is checked here is how the inputs bind to each other.
    try:
        validate_fixture(fixture)
    except FixtureError as exc:
        raise InputMismatch(f"fixture.{exc}") from None
    mismatches = space_mismatches(protocol.get(EMBEDDING_SPACE), fixture["space"], fixture["provenance"])
    if mismatches:
        raise InputMismatch(f"fixture: its embedding space is not the one protocol {protocol['protocol_version']} "
                            f"pins ({EMBEDDING_SPACE}): " + "; ".join(mismatches))
    source = fixture["source"]
    # digest_finite: the same bytes as digest for values load_json read (it refuses NaN and
    # Infinity), at orjson's speed (ground/fast_canonical.py)
    digests = {
        "protocol": digest_finite(protocol),
        "source": fixture["source_digest"],
        "fixture": digest_finite(fixture),
        "relations": digest_finite(relations),
    }
    if source["protocol"]["digest"] != digests["protocol"]:
        raise InputMismatch(
            f"protocol: digest {digests['protocol']} is not the protocol the source was imported with "
            f"({source['protocol']['digest']}, version {source['protocol']['version']})")
    _decode_vectors(frozen)
    _verify_relations(relations, source, digests["source"])
    if protocol["graph_builder"]["method"] != relations.get("method"):
        raise InputMismatch(f"relations: method {relations.get('method')!r} is not the protocol's graph builder")
    _verify_imported_pin(protocol["graph_builder"], relations)
    for name, section in SECTIONS.items():
        faults = section.failures(fixture, relations) if name in fixture else []
        if faults:
            raise InputMismatch(f"fixture: its {name} section does not hold: " + "; ".join(faults))
    if frozen.generation is not None:
        generation = frozen.generation
        digests["generation"] = digest_finite(generation)
        if generation.get("fixture_digest") != digests["fixture"]:
            raise InputMismatch("generation: fixture_digest is not the digest of the fixture")
        timed = {q["id"] for q in generation.get("queries", [])}
        missing = sorted(set(frozen.queries) - timed)
        if missing:
            raise InputMismatch(f"generation: no encode time for query {missing[0]}")
    frozen.digests = digests


def _verify_imported_pin(builder: dict, relations: dict) -> None:
    """An imported graph is the one the protocol pins: its files (names, sizes, SHA-256), format,
    producer and passage policy, as the section in the relations file records them."""
    if GRAPH_FILE not in builder:
        return
    imported, pin = relations.get("imported") or {}, builder[GRAPH_FILE]
    held = {"format": imported.get("format"), "producer": imported.get("producer"),
            "files": imported.get("files"), "policy": imported.get("policy")}
    want = {"format": pin["format"], "producer": pin["producer"], "files": pin["files"],
            "policy": passage_policy(builder)}
    differing = [key for key in want if held[key] != want[key]]
    if differing:
        raise InputMismatch(f"relations: the imported graph is not the one protocol graph_builder pins "
                            f"(fields: {', '.join(differing)})")


def _decode_vectors(frozen: Frozen) -> None:
    """Index the (already validated) fixture vectors and receipts by document and query id."""
    for kind, vectors, receipts in (("documents", frozen.doc_vectors, frozen.doc_receipts),
                                    ("queries", frozen.query_vectors, frozen.query_receipts)):
        for entry in frozen.fixture[kind]:
            vectors[entry["id"]] = decode_vector(entry["vector"])
            receipts[entry["id"]] = entry["vector_sha256"]


def _verify_relations(relations: dict, source: dict, source_digest: str) -> None:
    """The graph must be this source's, its own projection must rebuild it exactly (with the builder
    it names), and its entity relations, if any, must be the evaluator's own recomputation."""
    if not isinstance(relations, dict) or "projection" not in relations:
        raise InputMismatch("relations: no projection to rebuild from")
    if relations.get("source_digest") != source_digest:
        raise InputMismatch("relations: source_digest is not the digest of the fixture's source")
    try:
        rebuilt = rebuild(relations)
    except GraphInputError as exc:
        raise InputMismatch(f"relations: projection cannot be rebuilt: {exc}") from None
    if relations["projection"] != project(source):
        raise InputMismatch("relations: projection is not the projection of the fixture's source")
    if digest(rebuilt) != digest(relations):
        differing = sorted(k for k in set(rebuilt) | set(relations) if rebuilt.get(k) != relations.get(k))
        raise InputMismatch(f"relations: differs from the graph rebuilt from its projection (fields: {', '.join(differing)})")
    failures = entity_failures(relations)  # the entity relations once more, by the evaluator's own code
    if failures:
        raise InputMismatch(f"relations: the evaluator's own reading of the names disagrees: {failures[0]} "
                            f"({len(failures)} difference(s))")
