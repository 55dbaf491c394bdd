"""Generate the store-route examples of docs/api.md by calling a real, fresh lab.

Prints Markdown to stdout (each request and the server's actual answer); tokens are replaced by
`<token>`. The search routes' section of docs/api.md is maintained separately.

    lab bench api-examples > /tmp/api-examples.md
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from evaluator.connection.client import LabClient
from evaluator.connection.lab_process import start_lab

SPACE = {"provider": "sentence-transformers", "model": "all-MiniLM-L6-v2", "revision": "sha256:example",
         "dimensions": 4}
PROVENANCE = {"origin": "tool_observation", "method": "document_title_graph_v1", "method_revision": "policy-digest",
              "evidence_ref": "title-sha256:example", "model": None}


def _show(value, tokens: list[str]) -> str:
    text = value.decode() if isinstance(value, bytes) else json.dumps(value, indent=2, ensure_ascii=False)
    for token in tokens:
        text = text.replace(token, "<token>")
    return text


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="lab bench api-examples", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        lab = start_lab(Path(tmp) / "db", Path(tmp) / "access.json")
        client = LabClient(lab.access)
        tokens = [lab.access["token"]]

        def call(title: str, method: str, path: str, body=None, params=None, auth: bool = True) -> dict:
            response = client.request(method, path, body, params) if auth else \
                client.http.request(method, path, headers={"Authorization": ""})
            shown_path = path + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
            out.append(f"### {title}\n\n```http\n{method} {shown_path}\n"
                       + ("Authorization: Bearer <token>\n" if auth else "")
                       + (f"\n{_show(body, tokens)}\n" if body is not None else "") + "```\n")
            answer = response.json()
            if "token" in answer:
                tokens.append(answer["token"])
            out.append(f"`{response.status_code}`\n\n```json\n{_show(answer, tokens)}\n```\n")
            return answer

        s = f"/api/v1/scopes/{client.scope}"
        call("Health (no token)", "GET", "/health", auth=False)
        call("Identity", "GET", "/api/v1/identity")
        call("Mint a credential for another scope", "POST", "/api/v1/credentials", {"scope": "other", "ttl_seconds": 600})
        created = call("Create memories", "POST", f"{s}/memories", {"items": [
            {"idempotency_key": "doc-1", "external_id": "doc-1", "payload": {"content": "Ada Lovelace\nAda Lovelace wrote the first program.",
                                                     "metadata": {"title": "Ada Lovelace"}}},
            {"idempotency_key": "doc-2", "external_id": "doc-2", "payload": {"content": "Analytical Engine\nA machine designed by Babbage.",
                                                     "metadata": {"title": "Analytical Engine"}}}]})
        a, b = (r["id"] for r in created["receipts"])
        call("Replay (same key, same body)", "POST", f"{s}/memories", {"items": [
            {"idempotency_key": "doc-1", "external_id": "doc-1", "payload": {"content": "Ada Lovelace\nAda Lovelace wrote the first program.",
                                                     "metadata": {"title": "Ada Lovelace"}}}]})
        call("Replay with a different body (409)", "POST", f"{s}/memories", {"items": [
            {"idempotency_key": "doc-1", "external_id": "doc-1", "payload": {"content": "something else"}}]})
        call("Read memories", "POST", f"{s}/memories/read", {"ids": [a]})
        call("List memories (id order)", "GET", f"{s}/memories", params={"limit": 1})
        emb = call("Attach embeddings", "POST", f"{s}/embeddings", {"items": [
            {"idempotency_key": "emb-doc-1", "record_id": a, "revision": 1, "space": SPACE,
             "vector": [0.5, 0.25, -0.125, 0.75]},
            {"idempotency_key": "emb-doc-2", "record_id": b, "revision": 1, "space": SPACE,
             "vector": [0.25, 0.5, 0.125, -0.75]}]})
        call("Attach a NaN vector (422)", "POST", f"{s}/embeddings",
             b'{"items":[{"idempotency_key":"x","record_id":"' + a.encode() + b'","revision":1,"space":'
             + json.dumps(SPACE).encode() + b',"vector":[NaN,1,1,1]}]}')
        rel = call("Assert relations", "POST", f"{s}/relations", {"items": [
            {"idempotency_key": "edge-1", "external_id": "edge-1", "kind": "semantic_related", "source": {"id": a, "revision": 1},
             "target": {"id": b, "revision": 1}, "provenance": PROVENANCE}]})
        call("Self-relation (422)", "POST", f"{s}/relations", {"items": [
            {"idempotency_key": "edge-x", "external_id": "edge-x", "kind": "same_entity", "source": {"id": a, "revision": 1},
             "target": {"id": a, "revision": 1}, "provenance": PROVENANCE}]})
        call("Update a memory (revision + 1)", "POST", f"{s}/memories/update", {"items": [
            {"idempotency_key": "doc-2-v2", "id": b, "revision": 1,
             "payload": {"content": "Analytical Engine\nA general-purpose machine designed by Charles Babbage.",
                         "metadata": {"title": "Analytical Engine"}}}]})
        call("Relation at a stale revision (409)", "POST", f"{s}/relations", {"items": [
            {"idempotency_key": "edge-2", "external_id": "edge-2", "kind": "supports", "source": {"id": a, "revision": 1},
             "target": {"id": b, "revision": 1}, "provenance": PROVENANCE}]})
        call("Read embeddings (the old revision's binding is no longer current)", "POST", f"{s}/embeddings/read",
             {"record_ids": [b], "space_id": emb["receipts"][0]["space_id"]})
        call("Read relations (pinned to the old revision: kept, not eligible)", "POST", f"{s}/relations/read",
             {"ids": [rel["receipts"][0]["id"]]})
        call("List relations", "GET", f"{s}/relations", params={"limit": 10})
        call("Journal", "GET", f"{s}/journal", params={"after": 3, "limit": 2})
        call("Fence", "GET", f"{s}/fence")
        call("Digest of the stored state", "GET", f"{s}/digest")
        call("Running digest, with its fence", "GET", f"{s}/running-digest")
        call("Another scope's path (403)", "GET", "/api/v1/scopes/other/fence")
        call("Unknown route (404)", "GET", "/api/v1/nothing")
        client.close()
        lab.stop()
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
