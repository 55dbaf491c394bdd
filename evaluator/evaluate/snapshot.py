"""What the lab holds, proved equal to the fixture, the graph and the state, before and after a campaign.

Evaluate takes one snapshot before the first retrieval and one after the last; both must show the
prepared content exactly, and the two must be equal to each other (same fence, same store digest),
or the campaign did not measure one fixed state.

The proof (docs/design.md §6, the argument in docs/full-scale.md): the lab's fence and running
digest, read as one pair (`GET .../running-digest`), must equal the state's fence and the running
digest recomputed here from the frozen inputs and the state (`expected.prepared_digest`); the
lab's `/digest` of its stored bytes is recorded as before. Nothing is read back: a snapshot costs
two small requests and one server-side scan, where reading every memory, vector and relation over
HTTP cost about a tenth of a full-scale campaign. When the digests differ, or cannot be recomputed
(a memory past revision 1), every value is read and compared (`read_everything`, the former
snapshot), which names the first difference. The snapshot's fields keep their meaning and their
values: `content_digest` is the digest of what a full read returns, computed from the values the
running digest proved the lab holds (`expected.content_digest`).
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.connection.client import LabClient
from evaluator.inputs import Frozen
from evaluator.prepare.expected import binding_is_frozen, content_digest, prepared_digest, relation_body, stored_payload
from evaluator.state import record_map
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.running_digest import RunningDigest

PAGE = 500


class StoreMismatch(RefusedInput):
    """The lab's content is not the prepared fixture and graph."""


def list_all(fetch, key: str) -> list[dict]:
    out, after = [], None
    while True:
        answer = fetch(after=after, limit=PAGE)
        out.extend(answer[key])
        after = answer.get("next")
        if not after:
            return out


def read_everything(client: LabClient, frozen: Frozen, state: Mapping) -> dict:
    """Read every memory, binding and relation; refuse any difference; return the fence and digests."""
    fence = client.fence()
    _, doc_of = record_map(state)
    documents = frozen.documents
    records = list_all(client.list_memories, "records")
    ids = [r["id"] for r in records]
    if sorted(ids) != sorted(doc_of):
        extra, missing = sorted(set(ids) - set(doc_of)), sorted(set(doc_of) - set(ids))
        raise StoreMismatch(f"lab memories differ from the state: extra {extra[:3]}, missing {missing[:3]}")
    for record in records:
        doc = doc_of[record["id"]]
        if record["revision"] != state["memories"][doc]["revision"]:
            raise StoreMismatch(f"memory {record['id']} ({doc}) is at revision {record['revision']}, "
                                f"prepared {state['memories'][doc]['revision']}")
        if record["payload"] != stored_payload(frozen, doc, documents):
            raise StoreMismatch(f"memory {record['id']} ({doc}): payload differs from the fixture document")
    bindings = []
    ordered_ids = sorted(ids)
    for i in range(0, len(ordered_ids), PAGE):
        bindings.extend(client.read_embeddings(ordered_ids[i:i + PAGE], frozen.space_id))
    current = {b["record_id"]: b for b in bindings if b.get("current")}
    for record_id, doc in doc_of.items():
        if doc not in state["bindings"]:
            if record_id in current:
                raise StoreMismatch(f"memory {record_id} ({doc}) has an embedding none was prepared for")
            continue
        if not binding_is_frozen(current.get(record_id), state["bindings"][doc], frozen, doc):
            raise StoreMismatch(f"embedding of {record_id} ({doc}) is not the frozen vector")
    relations = list_all(client.list_relations, "relations")
    by_lab = {entry["id"]: edge for edge, entry in state["relations"].items()}
    graph = {r["id"]: r for r in frozen.lab_edges}
    if sorted(r["id"] for r in relations) != sorted(by_lab):
        raise StoreMismatch("lab relations differ from the prepared graph")
    for rel in relations:
        edge = graph[by_lab[rel["id"]]]
        want = relation_body(edge, state)
        if {k: rel.get(k) for k in want} != want:
            raise StoreMismatch(f"relation {rel['id']} ({edge['id']}) differs from the graph")
    return {
        "fence": fence,
        "store_digest": client.digest(),
        "content_digest": digest({"records": records, "relations": relations,
                                  "bindings": sorted([b["binding_id"], b["vector_sha256"]] for b in current.values())}),
        "counts": {"memories": len(records), "bindings": len(current), "relations": len(relations)},
    }


class Snapshots:
    """The snapshots of one campaign: what the lab must hold is recomputed once, for both."""

    def __init__(self, frozen: Frozen, state: Mapping):
        self.frozen, self.state = frozen, state
        self._expected: tuple[RunningDigest | None] | None = None  # None: not computed yet
        self._content_digest: str | None = None

    def expected(self) -> RunningDigest | None:
        if self._expected is None:
            self._expected = (prepared_digest(self.frozen, self.state),)
        return self._expected[0]

    def take(self, client: LabClient) -> dict:
        """The fence, store digest, content digest and counts; StoreMismatch when the lab differs."""
        answer = client.running_digest()
        expected = self.expected()
        if expected is None:
            return read_everything(client, self.frozen, self.state)
        if answer["running_digest"] != expected.summary():
            read_everything(client, self.frozen, self.state)  # names the first differing value, if it can
            raise StoreMismatch(
                f"the lab's running digest {answer['running_digest']} is not the digest of the prepared content "
                f"{expected.summary()}, although every memory, current binding and relation read back equal: "
                f"the scope holds other content (another revision, another space's binding)")
        state = self.state
        if self._content_digest is None:
            self._content_digest = content_digest(self.frozen, state)
        return {
            "fence": answer["fence"],
            "store_digest": client.digest(),
            "content_digest": self._content_digest,
            "counts": {"memories": len(state["memories"]), "bindings": len(state["bindings"]),
                       "relations": len(state["relations"])},
        }


def snapshot(client: LabClient, frozen: Frozen, state: Mapping) -> dict:
    """One snapshot (a campaign takes two with one `Snapshots`)."""
    return Snapshots(frozen, state).take(client)
