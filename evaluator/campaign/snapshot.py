"""What the lab holds, read in full and compared with the fixture, the graph and the state.

Evaluate takes one snapshot before the first retrieval and one after the last; both must equal the
prepared content exactly, and the two must be equal to each other (same fence, same store digest),
or the campaign did not measure one fixed state.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.campaign.client import LabClient
from evaluator.inputs import Frozen
from evaluator.campaign.prepare import binding_is_frozen, memory_payload, relation_body
from evaluator.state import record_map
from protocols.canonical import digest
from protocols.errors import RefusedInput

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


def snapshot(client: LabClient, frozen: Frozen, state: Mapping) -> dict:
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
        if record["payload"] != memory_payload(documents[doc]):
            raise StoreMismatch(f"memory {record['id']} ({doc}): payload differs from the fixture document")
    bindings = []
    ordered_ids = sorted(ids)
    for i in range(0, len(ordered_ids), PAGE):
        bindings.extend(client.read_embeddings(ordered_ids[i:i + PAGE], frozen.space_id))
    current = {b["record_id"]: b for b in bindings if b.get("current")}
    for record_id, doc in doc_of.items():
        if not binding_is_frozen(current.get(record_id), state["bindings"][doc], frozen, doc):
            raise StoreMismatch(f"embedding of {record_id} ({doc}) is not the frozen vector")
    relations = list_all(client.list_relations, "relations")
    by_lab = {entry["id"]: edge for edge, entry in state["relations"].items()}
    graph = {r["id"]: r for r in frozen.relations["relations"]}
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
