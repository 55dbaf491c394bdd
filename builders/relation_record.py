"""One relation as every graph builder writes it (relations.json, a fixture section's edges): its
id, kind and ends, and where it came from (origin, method and revision, the evidence, the model).
Each builder keeps its own id rule; the record's shape is the lab's contract (docs/design.md)."""

from __future__ import annotations


def relation_record(relation_id: str, kind: str, source: str, target: str, *, origin: str, method: str,
                    revision: str, evidence: str, model: str | None) -> dict:
    return {"id": relation_id, "kind": kind, "source": source, "target": target,
            "provenance": {"origin": origin, "method": method, "method_revision": revision,
                           "evidence_ref": evidence, "model": model}}
