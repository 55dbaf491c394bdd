"""The development cohort of the graph-v4 harness: a graph-v3 design import (bench/design/graph_v3_data.py:
development queries only, the test rows' judgments never loaded) with the entity relations of
`document_entity_graph_v1` built in process from the import's own documents.

The design imports of v3 (protocols/frozen/design/*-design-v3.json) hold the title graph; v4 adds the
entity relations. Building them here from the import's projection gives the same relations an
import under the entity builder writes (the relations depend on the documents alone), so the v3
design imports serve v4 without another embedding. The frozen builder's relations are put into the
in-memory index (the served methods read them there); design variants of the entity policy (and the
rejected `title_part` signal) only feed the prototype candidates' neighbour tables
(bench/design/graph_v4_candidates.py), cached per variant.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.design.graph_v3_data import SCOPE, DevCorpus, load_dev_corpus
from builders import entity_graph
from builders.embedding import decode_vector
from builders.names import name_runs, run_keys
from builders.normalize import normalize_text
from builders.title_graph import project
from server.store.store import memory_id, relation_id


@dataclass
class V4Corpus:
    dev: DevCorpus
    projection: list[dict]  # the import's {id, title, paragraph_text}, sorted by id
    record: dict[str, str]  # document id -> record id
    entity: dict[str, set[str]]  # record id -> entity-linked record ids, under the frozen policy
    counts: dict[str, int]  # relations per kind under the frozen policy (title graph + entity)
    vectors: dict[str, np.ndarray]  # record id -> unit document vector (the fixture's)
    variants: dict[str, dict[str, set[str]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.dev.name


def variant_policy(max_documents: int | None = None, max_titles: int | None = None,
                   max_key_words: int | None = None) -> dict:
    """The frozen entity policy with some of its numbers changed, plus the rejected `title_part`
    signal (prototype, below) when max_titles > 0. max_documents 0 switches shared names off."""
    policy: dict[str, Any] = copy.deepcopy(entity_graph.ENTITY_POLICY)
    if max_documents is not None:
        policy["shared_name"]["documents"] = [2, max_documents]
    if max_key_words is not None:
        policy["names"]["max_key_words"] = max_key_words
    policy["title_part"] = {"max_titles": max_titles or 0}
    return policy


def title_part_links(projection: list[dict], policy: dict) -> set[tuple[str, str]]:
    """The `title_part` signal, tried on the design cohort and not frozen (docs/graph-v4.md): a
    paragraph whose text holds a name key that is a proper part of another document's title
    ("indiana" of "Alcohol laws of Indiana", "henry edwards" of "Henry Edwards (actor)"), when at
    most max_titles titles hold it. Pairs (smaller id, larger id)."""
    max_titles = policy["title_part"]["max_titles"]
    if not max_titles:
        return set()
    words = policy["names"]["max_key_words"]
    titled: dict[str, list[str]] = {}
    for doc in projection:
        whole = normalize_text(doc["title"])
        parts = set()
        for run in name_runs(doc["title"]):
            parts |= run_keys(run, words)
        for key in parts - {whole}:
            titled.setdefault(key, []).append(doc["id"])
    pairs: set[tuple[str, str]] = set()
    for doc_id, keys in entity_graph.text_keys(projection, policy).items():
        for key in keys:
            targets = titled.get(key, ())
            if len(targets) <= max_titles:
                pairs.update((min(doc_id, t), max(doc_id, t)) for t in targets if t != doc_id)
    return pairs


def load_v4_corpus(name: str, run_dir: str | Path) -> V4Corpus:
    dev = load_dev_corpus(name, run_dir)
    fixture = json.loads((Path(run_dir) / "fixture.json").read_text(encoding="utf-8"))
    projection = project(fixture["source"])
    record = {doc["id"]: memory_id(SCOPE, doc["id"]) for doc in projection}
    relations = entity_graph.build_relations(projection, fixture["source_digest"])
    entity: dict[str, set[str]] = {}
    for rel in relations["relations"]:
        if rel["kind"] != entity_graph.KIND:
            continue  # the title graph's relations are the v3 import's, already in the index
        source, target = record[rel["source"]], record[rel["target"]]
        dev.index.put_relation({"id": relation_id(SCOPE, rel["id"]), "revision": 1, "kind": rel["kind"],
                                "source": {"id": source, "revision": 1},
                                "target": {"id": target, "revision": 1}, "provenance": rel["provenance"]})
        entity.setdefault(source, set()).add(target)
        entity.setdefault(target, set()).add(source)
    vectors = {record[entry["id"]]: decode_vector(entry["vector"]).astype(np.float64)
               for entry in fixture["documents"]}
    return V4Corpus(dev, projection, record, entity, relations["counts"], vectors)


def entity_table(corpus: V4Corpus, policy: dict) -> dict[str, set[str]]:
    """record id -> entity-linked record ids under a design variant of the entity policy."""
    key = json.dumps(policy, sort_keys=True)
    if key not in corpus.variants:
        table: dict[str, set[str]] = {}
        pairs = set(entity_graph.entity_links(corpus.projection, policy)) | title_part_links(corpus.projection, policy)
        for (a, b) in sorted(pairs):
            ra, rb = corpus.record[a], corpus.record[b]
            table.setdefault(ra, set()).add(rb)
            table.setdefault(rb, set()).add(ra)
        corpus.variants[key] = table
    return corpus.variants[key]
