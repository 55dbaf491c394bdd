"""The development cohort of the graph-v3 harness: an in-process index of one imported dataset
(fixture.json + relations.json), and the development queries only.

A design run may read a query's judgments only when its split is a development split; the test
rows of a design import are there as unlabelled distractors of the corpus, so `DevCorpus` never
holds them (their ids are kept only to prove they are left out). See docs/graph-v3.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from builders.embedding import decode_vector
from ground.errors import RefusedInput
from protocols.derivations.design_cohort import DEVELOPMENT_SPLITS  # the splits a design cohort adds
from server.retrieval.indexes import Indexes, ScopeIndex
from server.store.store import memory_id, relation_id

SCOPE = "lab"


@dataclass
class DevQuery:
    id: str
    question: str
    category: str
    vector: np.ndarray
    judgments: dict[str, int]  # record id -> grade


@dataclass
class DevCorpus:
    name: str
    index: ScopeIndex
    space_id: str
    queries: list[DevQuery]
    titles: dict[str, str]  # record id -> title
    texts: dict[str, str]  # record id -> document text
    neighbours: dict[str, set[str]] = field(default_factory=dict)  # record id -> linked record ids
    excluded_ids: frozenset[str] = frozenset()  # query ids of non-development splits, never loaded


def load_dev_corpus(name: str, run_dir: str | Path) -> DevCorpus:
    run_dir = Path(run_dir)
    fixture = json.loads((run_dir / "fixture.json").read_text(encoding="utf-8"))
    relations = json.loads((run_dir / "relations.json").read_text(encoding="utf-8"))
    source = fixture["source"]
    index = Indexes().scope(SCOPE)
    documents = {doc["id"]: doc for doc in source["documents"]}
    record = {doc_id: memory_id(SCOPE, doc_id) for doc_id in documents}
    for entry in fixture["documents"]:
        doc = documents[entry["id"]]
        payload = {"content": doc["text"], "metadata": {"document_id": doc["id"], "title": doc["title"]}}
        index.put_memory(record[doc["id"]], 1, doc["text"], payload)
    for entry in fixture["documents"]:
        index.put_binding(record[entry["id"]], 1, fixture["space_id"], decode_vector(entry["vector"]),
                          binding_id="emb-" + record[entry["id"]][4:])
    neighbours: dict[str, set[str]] = {}
    for rel in relations["relations"]:
        source_id, target_id = record[rel["source"]], record[rel["target"]]
        index.put_relation({"id": relation_id(SCOPE, rel["id"]), "revision": 1, "kind": rel["kind"],
                            "source": {"id": source_id, "revision": 1},
                            "target": {"id": target_id, "revision": 1}, "provenance": rel["provenance"]})
        neighbours.setdefault(source_id, set()).add(target_id)
        neighbours.setdefault(target_id, set()).add(source_id)
    vectors = {q["id"]: decode_vector(q["vector"]) for q in fixture["queries"]}
    queries, excluded = [], set()
    for query in source["queries"]:
        if query["split"] not in DEVELOPMENT_SPLITS:
            excluded.add(query["id"])  # a test row: its judgments are never read
            continue
        judgments = {record[doc_id]: grade for doc_id, grade in query["judgments"].items()}
        queries.append(DevQuery(query["id"], query["question"], query["category"], vectors[query["id"]],
                                judgments))
    if not queries:
        raise RefusedInput(f"{run_dir}: no development query (splits {', '.join(DEVELOPMENT_SPLITS)})")
    queries.sort(key=lambda q: q.id)
    return DevCorpus(name, index, fixture["space_id"], queries,
                     {record[d]: doc["title"] for d, doc in documents.items()},
                     {record[d]: doc["text"] for d, doc in documents.items()},
                     neighbours, frozenset(excluded))
