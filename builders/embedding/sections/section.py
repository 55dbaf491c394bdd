"""A fixture section: the data a method family brings beyond documents, built in the fixture stage.

A family that needs more than passages and their vectors (protocols/route.py: node memories,
relation kinds, question phrases) gets them from a section of the fixture, encoded by the
fixture's own encoder, so the lab never runs a model and the evaluator finds every vector in the
frozen inputs. A section module declares, in one `Section`:

- `build(inputs)`: the section from the source, the relations file and the encoder (`lab embed
  build --<section name with dashes>`);
- `check_shape(f, value, dimensions)`: its shape, order and vectors (the fixture contract);
- `records(fixture, relations)`: what the lab holds of it (`LabRecords`: node memories keyed like
  documents, their vectors, the relations between them and the passages), written by prepare and
  compared by evaluate's snapshots and the audit as the corpus is;
- `failures(fixture, relations)`: why the section does not belong to these inputs (none: it does),
  recomputed from the inputs, run whenever the evaluator loads them;
- `query_phrases(fixture, records, query_id, most)`: the question's entity phrases with their
  vectors, the `entity_vectors` a request carries (protocols/route.py), when the family sends them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from builders.relation_record import relation_record
from ground.errors import RefusedInput
from ground.fields import Fields

# (texts, what they are, for the progress line) -> one row per text, the encoder's raw output
Encode = Callable[[list[str], str], np.ndarray]


@dataclass(frozen=True)
class SectionInputs:
    source: Mapping  # the fixture's source (documents and queries)
    relations: Mapping | None  # the relations file `--relations` names (None without one)
    encode: Encode
    query_entities: Mapping | None  # the fixture's query_entities (None without --query-entities)
    encoder: str = ""  # the encoder's model, as a threshold names it (protocols/embedding_space.py)

    def graph(self) -> Mapping:
        """The relations a graph section reads, refused when the build was given none."""
        if self.relations is None:
            raise RefusedInput("this fixture section reads the graph: build the fixture with --relations FILE")
        return self.relations

    @property
    def passage_ids(self) -> list[str]:
        return [d["id"] for d in self.source["documents"]]


def node_key(prefix: str, text: str) -> str:
    """The state key and external id of a graph node: `~`, the family's prefix for the node's kind,
    and the text's digest (no document id starts with '~', so a node never takes a document's id)."""
    return f"~{prefix}:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def node_edge(kind: str, source: str, target: str, *, origin: str, method: str, evidence: str,
              model: str | None) -> dict:
    """A relation between two nodes (or a passage and a node) of a family's section, its id the
    kind and the digest of its ends (one edge per ordered pair of a kind)."""
    relation_id = f"{kind}:" + hashlib.sha256(f"{source}\x00{target}".encode("utf-8")).hexdigest()[:40]
    return relation_record(relation_id, kind, source, target, origin=origin, method=method, revision="1",
                           evidence=evidence, model=model)


@dataclass
class LabRecords:
    """What the lab holds beyond documents: node memories, their vectors and relations, keyed by
    state key (a node key starts with '~', which no document id does)."""

    payloads: dict[str, dict] = field(default_factory=dict)  # node key -> memory payload
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # node key -> float32 vector
    receipts: dict[str, str] = field(default_factory=dict)
    edges: list[dict] = field(default_factory=list)  # relations.json-shaped, endpoints by key
    phrases: dict[str, np.ndarray] = field(default_factory=dict)  # question phrase -> vector

    def add(self, other: "LabRecords") -> None:
        self.payloads.update(other.payloads)
        self.vectors.update(other.vectors)
        self.receipts.update(other.receipts)
        self.edges = sorted(self.edges + other.edges, key=lambda edge: edge["id"])
        self.phrases.update(other.phrases)


@dataclass(frozen=True)
class Section:
    name: str
    help: str  # the `lab embed build` flag's help
    build: Callable[[SectionInputs], dict]
    check_shape: Callable[[Fields, Any, int], None]
    records: Callable[[Mapping, Mapping], LabRecords]
    failures: Callable[[Mapping, Mapping], list[str]]
    query_phrases: Callable[[Mapping, LabRecords, str, int], list[tuple[str, np.ndarray]]] | None = None
    needs: Sequence[str] = ()  # what the build reads besides the source: "relations", "query_entities"
