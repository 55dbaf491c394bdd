"""prepare: write the fixture's memories, embeddings and relations into the lab, resumably.

Order of work:
1. load and cross-check the frozen inputs (the graph is rebuilt from its projection and must match);
2. take the exclusive lock on `<state>.lock`, load the state if one exists (it must be bound to the
   same lab, scope and input digests) and re-verify every write it records by reading it back;
3. write the remaining batches; every batch is proved stored as written before the state file
   records it (saved every few seconds and at the end of each stage: `StateSaver`): the lab's
   running digest must equal the digest of every value the state records, recomputed here
   (`BatchProof`); a batch that does not prove so (a resumed run whose lab holds batches the saved
   state had not recorded yet) is read back and compared value by value instead;
4. check the whole scope's running digest once more and mark the state complete with the fence.

Idempotency keys are `memory:` + digest([fixture digest, document id]),
`embedding:` + digest([fixture digest, space id, document id]) and
`relation:` + digest([relations digest, edge id]) (the lab caps keys at 200 characters):
a batch replayed after a crash returns its original receipts instead of writing twice, and a key
can never be reused by a different fixture or graph.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluator.connection.client import LabClient
from evaluator.inputs import Frozen, load_frozen
from evaluator.prepare.expected import binding_is_frozen, fold, prepared_digest, relation_body, stored_payload
from evaluator.state import State, StateError, StateLock, load_state, new_state, save_state
from ground.canonical import digest
from ground.command import Progress
from ground.errors import RefusedInput
from ground.running_digest import RunningDigest

BATCH_SIZES = {"memories": 200, "embeddings": 100, "relations": 500}
SAVE_EVERY_SECONDS = 5.0
SAVE_COST_FACTOR = 10.0


class ReadBackMismatch(RefusedInput):
    """What the lab returns is not what was written."""


@dataclass
class Batch:
    stage: str
    number: int
    keys: list[str]  # document ids or edge ids, in write order


def memory_key(frozen: Frozen, doc_id: str) -> str:
    return "memory:" + digest([frozen.digests["fixture"], doc_id])


def embedding_key(frozen: Frozen, doc_id: str) -> str:
    return "embedding:" + digest([frozen.digests["fixture"], frozen.space_id, doc_id])


def relation_key(frozen: Frozen, edge_id: str) -> str:
    return "relation:" + digest([frozen.digests["relations"], edge_id])


def batches(stage: str, keys: Sequence[str]) -> list[Batch]:
    size = BATCH_SIZES[stage]
    return [Batch(stage, i // size, list(keys[i:i + size])) for i in range(0, len(keys), size)]


def prepare(fixture_path, relations_path, protocol_path, access: dict, state_path,
            log: Callable[[str], None] = lambda line: print(line, file=sys.stderr)) -> State:
    frozen = load_frozen(protocol_path, fixture_path, relations_path)
    state_path = Path(state_path)
    with StateLock(state_path), LabClient(access) as client:
        identity = client.identity()
        lab = {"lab_id": identity["lab_id"], "scope": access["scope"], "journal_id": identity["journal_id"]}
        inputs = {k: frozen.digests[k] for k in ("protocol", "fixture", "relations")}
        if state_path.exists() or state_path.is_symlink():
            state = load_state(state_path)
            bound(state, lab, inputs, frozen)
            log(f"prepare: resuming {state_path}: re-verifying {len(state['memories'])} memories, "
                f"{len(state['bindings'])} embeddings, {len(state['relations'])} relations")
            reverify(client, frozen, state)
        else:
            state = new_state(lab, inputs, frozen.space, frozen.space_id)
            save_state(state_path, state)
        proof = BatchProof(frozen, state)
        run_batches(client, frozen, state, state_path, proof)
        answer = client.running_digest()
        if proof.running is not None and answer["running_digest"] != proof.running.summary():
            raise ReadBackMismatch(f"scope {access['scope']}: the lab's running digest {answer['running_digest']} is not "
                                   f"the digest of the prepared content {proof.running.summary()}: the scope holds "
                                   f"content this prepare did not write (use a fresh scope)")
        state["fence"] = answer["fence"]
        state["status"] = "complete"
        save_state(state_path, state)
    return state


def bound(state: State, lab: dict, inputs: dict, frozen: Frozen) -> None:
    """An existing state must describe this lab, scope and these inputs, or resuming would mix them."""
    if state["lab"] != lab:
        raise StateError(f"state is bound to lab {state['lab']}, the credential is for {lab}")
    if state["inputs"] != inputs:
        changed = sorted(k for k in inputs if state["inputs"].get(k) != inputs[k])
        raise StateError(f"state was prepared from other inputs ({', '.join(changed)} digest differs)")
    if state["space_id"] != frozen.space_id:
        raise StateError("state is bound to another embedding space")


class BatchProof:
    """The running digest of every value the state records, kept up to date batch by batch: when
    the lab's equals it after a batch, the lab holds exactly those values (the batch included) and
    nothing else in the scope, without reading anything back."""

    def __init__(self, frozen: Frozen, state: State):
        self.frozen, self.state = frozen, state
        self.running: RunningDigest | None = prepared_digest(frozen, state)
        self.edges = {r["id"]: r for r in frozen.lab_edges}

    def holds_after(self, client: LabClient, batch: Batch) -> bool:
        """Fold the batch the state has just recorded in; whether the lab's digest is the same."""
        if self.running is None:
            return False
        keys = batch.keys
        if batch.stage == "memories":
            fold(self.running, self.frozen, self.state, memories=keys)
        elif batch.stage == "embeddings":
            fold(self.running, self.frozen, self.state, bindings=keys)
        else:
            fold(self.running, self.frozen, self.state, relations=[self.edges[e] for e in keys])
        return client.running_digest()["running_digest"] == self.running.summary()


def run_batches(client: LabClient, frozen: Frozen, state: State, state_path: Path, proof: BatchProof) -> None:
    # the documents, then HippoRAG 2's nodes and fact vectors when the fixture has them (docs/hipporag2.md)
    docs = list(frozen.documents)
    edges = [r["id"] for r in frozen.lab_edges]
    plan = batches("memories", docs + list(frozen.records.payloads)) + \
        batches("embeddings", docs + list(frozen.records.vectors)) + batches("relations", edges)
    # counted in items (memories + embeddings + relations), batches already done count as done
    progress = Progress("prepare", sum(len(b.keys) for b in plan), unit="items")
    saver = StateSaver(state_path)
    for i, batch in enumerate(plan):
        if batch.number < state["batches"][batch.stage]:
            progress.advance(len(batch.keys))
            continue
        WRITERS[batch.stage](client, frozen, state, batch.keys)
        if not proof.holds_after(client, batch):
            CHECKS[batch.stage](client, frozen, state, batch.keys)
        state["batches"][batch.stage] = batch.number + 1
        stage_ends = i + 1 == len(plan) or plan[i + 1].stage != batch.stage
        saver.maybe_save(state, force=stage_ends)
        progress.advance(len(batch.keys))


class StateSaver:
    """Saves the state after a batch when SAVE_EVERY_SECONDS have passed, or ten times as long as
    the last save took, and at the end of every stage. The state rewrites every receipt so far, so
    saving after each of the ~1,300 batches of a full-scale corpus made prepare quadratic. A crash
    loses only the records of the batches since the last save: resuming sends those batches again
    under the same idempotency keys, and the lab replays their original receipts."""

    def __init__(self, path: Path):
        self.path = path
        self.last = time.monotonic()
        self.interval = SAVE_EVERY_SECONDS

    def maybe_save(self, state: State, force: bool = False) -> None:
        if not force and time.monotonic() - self.last < self.interval:
            return
        started = time.monotonic()
        save_state(self.path, state)
        self.last = time.monotonic()
        self.interval = max(SAVE_EVERY_SECONDS, SAVE_COST_FACTOR * (self.last - started))


def write_memories(client: LabClient, frozen: Frozen, state: State, doc_ids: list[str]) -> None:
    documents = frozen.documents
    items = [{"idempotency_key": memory_key(frozen, d), "external_id": d,
              "payload": stored_payload(frozen, d, documents)} for d in doc_ids]
    answer = client.create_memories(items)
    for doc_id, receipt in zip(doc_ids, answer["receipts"], strict=True):
        state["memories"][doc_id] = {"id": receipt["id"], "revision": receipt["revision"]}


def write_embeddings(client: LabClient, frozen: Frozen, state: State, doc_ids: list[str]) -> None:
    items = []
    for doc_id in doc_ids:
        record = state["memories"][doc_id]
        items.append({"idempotency_key": embedding_key(frozen, doc_id), "record_id": record["id"],
                      "revision": record["revision"], "space": frozen.space,
                      "vector": [float(x) for x in frozen.lab_vector(doc_id)]})
    answer = client.attach_embeddings(items)
    for doc_id, receipt in zip(doc_ids, answer["receipts"], strict=True):
        state["bindings"][doc_id] = receipt


def write_relations(client: LabClient, frozen: Frozen, state: State, edge_ids: list[str]) -> None:
    by_id = {r["id"]: r for r in frozen.lab_edges}
    items = []
    for edge_id in edge_ids:
        rel = by_id[edge_id]
        items.append({"idempotency_key": relation_key(frozen, edge_id), "external_id": edge_id,
                      **relation_body(rel, state)})
    answer = client.assert_relations(items)
    for edge_id, receipt in zip(edge_ids, answer["receipts"], strict=True):
        state["relations"][edge_id] = {"id": receipt["id"], "revision": receipt["revision"]}


WRITERS = {"memories": write_memories, "embeddings": write_embeddings, "relations": write_relations}


def check_memories(client: LabClient, frozen: Frozen, state: State, doc_ids: Sequence[str]) -> None:
    documents = frozen.documents
    records = client.read_memories([state["memories"][d]["id"] for d in doc_ids])
    for doc_id, record in zip(doc_ids, records, strict=True):
        expected = state["memories"][doc_id]
        if record["id"] != expected["id"] or record["revision"] != expected["revision"]:
            raise ReadBackMismatch(f"memory of {doc_id}: read back {record['id']} rev {record['revision']}")
        if record["payload"] != stored_payload(frozen, doc_id, documents):
            raise ReadBackMismatch(f"memory {record['id']} ({doc_id}): payload differs from the fixture document")


def check_embeddings(client: LabClient, frozen: Frozen, state: State, doc_ids: Sequence[str]) -> None:
    record_ids = [state["memories"][d]["id"] for d in doc_ids]
    bindings = client.read_embeddings(record_ids, frozen.space_id)
    current = {b["record_id"]: b for b in bindings if b.get("current")}
    for doc_id, record_id in zip(doc_ids, record_ids):
        binding = current.get(record_id)
        receipt = state["bindings"][doc_id]
        if binding is None:
            raise ReadBackMismatch(f"embedding of {doc_id} ({record_id}): no current binding in {frozen.space_id}")
        if not binding_is_frozen(binding, receipt, frozen, doc_id):
            raise ReadBackMismatch(f"embedding of {doc_id}: binding or vector_sha256 differs from the fixture")
        if [float(x) for x in frozen.lab_vector(doc_id)] != binding["vector"]:
            raise ReadBackMismatch(f"embedding of {doc_id}: stored vector differs from the fixture vector")


def check_relations(client: LabClient, frozen: Frozen, state: State, edge_ids: Sequence[str]) -> None:
    by_id = {r["id"]: r for r in frozen.lab_edges}
    stored = client.read_relations([state["relations"][e]["id"] for e in edge_ids])
    for edge_id, got in zip(edge_ids, stored, strict=True):
        rel = by_id[edge_id]
        want = {"id": state["relations"][edge_id]["id"], **relation_body(rel, state)}
        have = {k: got.get(k) for k in want}
        if have != want:
            field_names = sorted(k for k in want if have[k] != want[k])
            raise ReadBackMismatch(f"relation {edge_id} ({want['id']}): {', '.join(field_names)} differ from the graph")


CHECKS = {"memories": check_memories, "embeddings": check_embeddings, "relations": check_relations}


def reverify(client: LabClient, frozen: Frozen, state: State) -> None:
    """Before resuming, every write the state records must still be stored as written: proved by
    the running digest when the lab holds exactly those writes, else read back."""
    expected = prepared_digest(frozen, state)
    if expected is not None and client.running_digest()["running_digest"] == expected.summary():
        return
    for ids, check in ((list(state["memories"]), check_memories), (list(state["bindings"]), check_embeddings),
                       (list(state["relations"]), check_relations)):
        for i in range(0, len(ids), 500):
            check(client, frozen, state, ids[i:i + 500])
