"""The frozen inputs of a campaign, loaded once and cross-checked before any request is sent.

Protocol, fixture (with its embedded source), relations and generation are bound to each other by
digests; a campaign that mixes files of two imports, or a file edited by hand, is refused here with
the name of the file and the link that does not hold.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from protocols.canonical import digest
from protocols.errors import RefusedInput
from protocols.files import load_json


class InputMismatch(RefusedInput):
    """Two frozen inputs that do not belong together, or one that does not hold to itself."""


@dataclass
class Frozen:
    protocol: dict
    fixture: dict
    relations: dict
    generation: dict | None = None
    digests: dict[str, str] = field(default_factory=dict)
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

    @property
    def queries(self) -> dict[str, dict]:
        return {q["id"]: q for q in self.source["queries"]}

    @property
    def space(self) -> dict:
        return self.fixture["space"]

    @property
    def space_id(self) -> str:
        return self.fixture["space_id"]

    def split_queries(self, split: str) -> list[dict]:
        return sorted((q for q in self.source["queries"] if q["split"] == split), key=lambda q: q["id"])


def decode(b64: str, dimensions: int, where: str) -> np.ndarray:
    """A fixture vector: base64 of little-endian float32, exactly `dimensions` long."""
    try:
        raw = base64.b64decode(b64, validate=True)
    except (ValueError, TypeError):
        raise InputMismatch(f"{where}: vector is not valid base64") from None
    if len(raw) != 4 * dimensions:
        raise InputMismatch(f"{where}: vector holds {len(raw) // 4} floats, space has {dimensions}")
    return np.frombuffer(raw, dtype="<f4").copy()


def vector_sha256(vector: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(vector, dtype="<f4").tobytes()).hexdigest()


def load_protocol_file(path: str | Path) -> dict:
    from protocols.schema import load_protocol

    return load_protocol(path)


def load_frozen(protocol_path, fixture_path, relations_path, generation_path=None) -> Frozen:
    """Load and cross-check every frozen input; raises InputMismatch naming the broken link."""
    protocol = load_protocol_file(protocol_path)
    fixture = load_json(fixture_path, "fixture")
    relations = load_json(relations_path, "relations file")
    generation = load_json(generation_path, "generation file") if generation_path else None
    frozen = Frozen(protocol=protocol, fixture=fixture, relations=relations, generation=generation)
    verify(frozen)
    return frozen


def verify(frozen: Frozen) -> None:
    fixture, relations, protocol = frozen.fixture, frozen.relations, frozen.protocol
    if not isinstance(fixture, dict) or fixture.get("format") != "embedding_fixture_v1":
        raise InputMismatch("fixture: format is not embedding_fixture_v1")
    from protocols.artifacts import validate_source

    source = validate_source(fixture.get("source"))
    digests = {
        "protocol": digest(protocol),
        "source": digest(source),
        "fixture": digest(fixture),
        "relations": digest(relations),
    }
    if fixture.get("source_digest") != digests["source"]:
        raise InputMismatch("fixture: source_digest is not the digest of the embedded source (source edited?)")
    if source["protocol"]["digest"] != digests["protocol"]:
        raise InputMismatch(
            f"protocol: digest {digests['protocol']} is not the protocol the source was imported with "
            f"({source['protocol']['digest']}, version {source['protocol']['version']})")
    if fixture.get("space_id") != "space-" + digest(fixture.get("space")):
        raise InputMismatch("fixture: space_id is not space- + digest(space)")
    _decode_vectors(frozen)
    _verify_relations(relations, source, digests["source"])
    if protocol["graph_builder"]["method"] != relations.get("method"):
        raise InputMismatch(f"relations: method {relations.get('method')!r} is not the protocol's graph builder")
    if frozen.generation is not None:
        generation = frozen.generation
        digests["generation"] = digest(generation)
        if generation.get("fixture_digest") != digests["fixture"]:
            raise InputMismatch("generation: fixture_digest is not the digest of the fixture")
        timed = {q["id"] for q in generation.get("queries", [])}
        missing = sorted(set(frozen.queries) - timed)
        if missing:
            raise InputMismatch(f"generation: no encode time for query {missing[0]}")
    frozen.digests = digests


def _decode_vectors(frozen: Frozen) -> None:
    fixture = frozen.fixture
    dims = fixture["space"]["dimensions"]
    for kind, expected, vectors, receipts in (
        ("documents", frozen.documents, frozen.doc_vectors, frozen.doc_receipts),
        ("queries", frozen.queries, frozen.query_vectors, frozen.query_receipts),
    ):
        entries = fixture.get(kind)
        if not isinstance(entries, list):
            raise InputMismatch(f"fixture.{kind}: missing")
        ids = [e.get("id") for e in entries]
        if ids != list(expected):
            raise InputMismatch(f"fixture.{kind}: ids are not the source's {kind} in source order")
        for i, entry in enumerate(entries):
            where = f"fixture.{kind}[{i}] ({entry['id']})"
            vec = decode(entry.get("vector"), dims, where)
            if not np.all(np.isfinite(vec)) or not np.any(vec):
                raise InputMismatch(f"{where}: vector is not finite and non-zero")
            if vector_sha256(vec) != entry.get("vector_sha256"):
                raise InputMismatch(f"{where}: vector_sha256 does not match the vector")
            vectors[entry["id"]] = vec
            receipts[entry["id"]] = entry["vector_sha256"]


def _verify_relations(relations: dict, source: dict, source_digest: str) -> None:
    """Rebuild the graph from the relations file's own projection; it must match exactly."""
    from builders.graph import build_relations, project

    if not isinstance(relations, dict) or "projection" not in relations:
        raise InputMismatch("relations: no projection to rebuild from")
    if relations.get("source_digest") != source_digest:
        raise InputMismatch("relations: source_digest is not the digest of the fixture's source")
    if relations["projection"] != project(source):
        raise InputMismatch("relations: projection is not the projection of the fixture's source")
    rebuilt = build_relations(relations["projection"], relations["source_digest"])
    if digest(rebuilt) != digest(relations):
        differing = sorted(k for k in set(rebuilt) | set(relations) if rebuilt.get(k) != relations.get(k))
        raise InputMismatch(f"relations: differs from the graph rebuilt from its projection (fields: {', '.join(differing)})")
