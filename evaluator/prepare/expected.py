"""What the lab must hold for a prepared scope, recomputed here from the frozen inputs and the state.

Prepare writes it, the snapshots of evaluate compare the lab with it. Every value is built the
way the lab stores it (its canonical JSON bytes, docs/contracts.md), from the fixture's documents
and float32 vectors, the graph's edges and the ids and revisions the state recorded, never from
what the lab answers; its running digest (ground/running_digest.py) is then the lab's content
digest when, and only when, the lab holds exactly these values.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from evaluator.inputs import Frozen, vector_sha256
from ground.canonical import digest
from ground.fast_canonical import render
from ground.running_digest import RunningDigest


def memory_payload(doc: dict) -> dict:
    return {"content": doc["text"], "metadata": {"document_id": doc["id"], "title": doc["title"]}}


def stored_payload(frozen: Frozen, key: str, documents: dict) -> dict:
    """What the lab holds for a document or a node memory (a fixture section's, builders/embedding/sections/)."""
    doc = documents.get(key)
    return frozen.records.payloads[key] if doc is None else memory_payload(doc)


def relation_body(rel: Mapping, state: Mapping[str, Any]) -> dict:
    """What the lab holds for a graph edge: its kind, both endpoints at their prepared records and
    revisions, and its provenance (written by prepare, compared by read-back and by the snapshots)."""
    return {"kind": rel["kind"], "source": state["memories"][rel["source"]], "target": state["memories"][rel["target"]],
            "provenance": rel["provenance"]}


def binding_is_frozen(binding: dict | None, receipt: dict, frozen: Frozen, doc_id: str) -> bool:
    """A current binding read from the lab is the prepared one and holds the fixture's vector: the
    hash is recomputed from the vector the lab returned, not taken from its receipt."""
    want = frozen.lab_receipt(doc_id)
    return binding is not None and binding["binding_id"] == receipt["binding_id"] \
        and binding["vector_sha256"] == want \
        and vector_sha256(np.asarray(binding.get("vector") or [], dtype=np.float32)) == want


# ---------------------------------------------------------------- stored values


def memory_value(frozen: Frozen, state: Mapping[str, Any], doc_id: str, documents: dict) -> dict:
    record = state["memories"][doc_id]
    return {"id": record["id"], "revision": record["revision"], "payload": stored_payload(frozen, doc_id, documents)}


def binding_value(frozen: Frozen, state: Mapping[str, Any], doc_id: str) -> dict:
    """The binding as stored: the state's binding id on the state's record and revision, the
    fixture's space and the fixture's float32 vector (its bytes in base64, its SHA-256)."""
    record = state["memories"][doc_id]
    vector = np.ascontiguousarray(frozen.lab_vector(doc_id), dtype="<f4")
    return {"binding_id": state["bindings"][doc_id]["binding_id"], "record_id": record["id"],
            "revision": record["revision"], "space_id": frozen.space_id, "dimensions": frozen.space["dimensions"],
            "vector_sha256": frozen.lab_receipt(doc_id), "space": frozen.space,
            "vector_base64": base64.b64encode(vector.tobytes()).decode("ascii")}


def relation_value(state: Mapping[str, Any], edge: dict) -> dict:
    entry = state["relations"][edge["id"]]
    return {"id": entry["id"], "revision": entry["revision"], **relation_body(edge, state)}


def fold(running: RunningDigest, frozen: Frozen, state: Mapping[str, Any], *, memories: Iterable[str] = (),
         bindings: Iterable[str] = (), relations: Iterable[dict] = ()) -> RunningDigest:
    """Add to `running` the values of these documents' memories (current and revision 1), these
    documents' bindings and these graph edges, as the state records them."""
    documents = frozen.documents if memories else {}
    # the values are built from parsed files (their parser refuses NaN), so `render` gives their
    # `canonical` bytes (ground/fast_canonical.py) without a json.dumps call each: 128,712 at full scale
    raw = [render(memory_value(frozen, state, d, documents)) for d in memories]
    running.add("memories", raw)
    running.add("memory_revisions", raw)  # prepare writes revision 1 only: the one revision is the current one
    running.add("bindings", [render(binding_value(frozen, state, d)) for d in bindings])
    running.add("relations", [render(relation_value(state, edge)) for edge in relations])
    return running


def prepared_digest(frozen: Frozen, state: Mapping[str, Any]) -> RunningDigest | None:
    """The running digest of everything the state records, or None when it cannot be recomputed
    here (a memory past revision 1: its older payloads are not in the frozen inputs)."""
    if any(m["revision"] != 1 for m in state["memories"].values()):
        return None
    edges = [edge for edge in frozen.lab_edges if edge["id"] in state["relations"]]
    return fold(RunningDigest(), frozen, state, memories=list(state["memories"]), bindings=list(state["bindings"]),
                relations=edges)


def content_digest(frozen: Frozen, state: Mapping[str, Any]) -> str:
    """The digest of the content a full read of the prepared lab returns (records and relations in
    id order, current bindings as [binding id, vector SHA-256]), built from the expected values: the
    same value as `snapshot.read_everything` derives from what it reads, when the lab holds them."""
    documents = frozen.documents
    records = sorted((memory_value(frozen, state, d, documents) for d in state["memories"]), key=lambda r: r["id"])
    current = {m["id"]: m["revision"] for m in state["memories"].values()}
    relations = []
    for edge in frozen.lab_edges:
        value = relation_value(state, edge)
        value["eligible"] = all(current.get(value[end]["id"]) == value[end]["revision"] for end in ("source", "target"))
        relations.append(value)
    relations.sort(key=lambda r: r["id"])
    bindings = sorted([state["bindings"][d]["binding_id"], frozen.lab_receipt(d)] for d in state["bindings"])
    return digest({"records": records, "relations": relations, "bindings": bindings})
