"""Generate the examples of docs/api.md by calling a real, fresh lab.

Prints Markdown to stdout (each request and the server's actual answer); tokens are replaced by
`<token>`. With `--search`, a page of every search route instead ("A page of every route"): one
scope holds five passages with 3-d vectors, two title-graph relations, two entity relations, and a
small HippoRAG 2 graph (three phrase nodes, two fact nodes, their vectors, `states` and `mentions`
relations) and a small LinearRAG graph (three entity and three sentence nodes, their vectors,
`holds_entity` and `names_entity` relations); each route of the registry (protocols/routes.py) is then asked once with limit 2 and
`include_payload: false`.

    lab bench api-examples > /tmp/api-examples.md
    lab bench api-examples --search --write docs/api.md

`--write PAGE` puts the page of every route between its markers in PAGE, as `lab protocol routes
--write` does the route table: a family's example appears without a hand edit.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from evaluator.connection.client import LabClient
from evaluator.connection.lab_process import start_lab
from ground.marked_block import check_writable, write_block
from protocols.route import ENTITIES, ENTITY_VECTORS, TEXT, VECTOR, VECTOR_IF_HYBRID_SEED
from protocols.routes import ROUTES

BEGIN = "<!-- a page of every route: made by `lab bench api-examples --search --write docs/api.md` -->"
END = "<!-- end of the page of every route -->"
WHAT = "page of every route"
SPACE = {"provider": "sentence-transformers", "model": "all-MiniLM-L6-v2", "revision": "sha256:example",
         "dimensions": 4}
PROVENANCE = {"origin": "tool_observation", "method": "document_title_graph_v1", "method_revision": "policy-digest",
              "evidence_ref": "title-sha256:example", "model": None}


def _show(value, tokens: list[str]) -> str:
    text = value.decode() if isinstance(value, bytes) else json.dumps(value, indent=2, ensure_ascii=False)
    for token in tokens:
        text = text.replace(token, "<token>")
    return text


SEARCH_SPACE = {**SPACE, "dimensions": 3}
TOOL = {"origin": "tool_observation", "method": "example", "method_revision": "1", "model": None}
PASSAGES = {
    "seine": ("Seine\nThe Seine flows through Paris.", [0.9, 0.3, 0.1]),
    "paris": ("Paris\nParis is the capital of France.", [0.7, 0.6, 0.2]),
    "france": ("France\nFrance is a country in Europe.", [0.2, 0.9, 0.3]),
    "loire": ("Loire\nThe Loire is the longest river in France.", [0.8, 0.1, 0.5]),
    "lyon": ("Lyon\nLyon lies on the Rhone.", [0.3, 0.2, 0.9]),
}
PHRASES = {"seine": [0.9, 0.2, 0.1], "paris": [0.6, 0.7, 0.1], "france": [0.1, 0.9, 0.4]}
FACTS = {("seine", "flows through", "paris"): ("seine", [0.8, 0.5, 0.1]),
         ("paris", "capital of", "france"): ("paris", [0.4, 0.8, 0.2])}
LINEAR_ENTITIES = {"Seine": [0.9, 0.25, 0.1], "Paris": [0.65, 0.65, 0.1], "France": [0.15, 0.9, 0.35]}
LINEAR_SENTENCES = {"The Seine flows through Paris.": ([0.85, 0.45, 0.1], ("Paris", "Seine")),
                    "Paris is the capital of France.": ([0.6, 0.7, 0.25], ("France", "Paris")),
                    "France is a country in Europe.": ([0.2, 0.85, 0.4], ("France",))}
QUESTION = ("Which river flows through the capital of France?", [0.8, 0.5, 0.2])
METHOD_FIELDS = {"seed": "hybrid", "expansion": {"max_depth": 2}, "graph_mode": "force", "min_score": -1.0}


def _items(values: list[dict]) -> dict:
    return {"items": values}


def build_world(client: LabClient) -> dict:
    """The scope's records; returns the space id."""
    s = f"/api/v1/scopes/{client.scope}"
    docs = [{"idempotency_key": key, "external_id": key,
             "payload": {"content": text, "metadata": {"title": text.split(chr(10))[0]}}}
            for key, (text, _) in PASSAGES.items()]
    nodes = [{"idempotency_key": f"phrase-{p}", "external_id": f"~e:{p}",
              "payload": {"content": p, "metadata": {"graph_node": "phrase"}}} for p in PHRASES]
    nodes += [{"idempotency_key": f"fact-{s_}-{o}", "external_id": f"~f:{s_}-{o}",
               "payload": {"content": str((s_, r, o)), "metadata": {"graph_node": "fact", "subject": s_, "object": o}}}
              for s_, r, o in FACTS]
    nodes += [{"idempotency_key": f"entity-{e}", "external_id": f"~le:{e}",
               "payload": {"content": e, "metadata": {"graph_node": "entity"}}} for e in LINEAR_ENTITIES]
    nodes += [{"idempotency_key": f"sentence-{i}", "external_id": f"~ls:{i}",
               "payload": {"content": text, "metadata": {"graph_node": "sentence"}}}
              for i, text in enumerate(LINEAR_SENTENCES)]
    made = client.request("POST", f"{s}/memories", _items(docs + nodes)).json()["receipts"]
    ids = {item["external_id"]: receipt["id"] for item, receipt in zip(docs + nodes, made)}
    vectors = [(ids[key], vector) for key, (_, vector) in PASSAGES.items()]
    vectors += [(ids[f"~e:{p}"], vector) for p, vector in PHRASES.items()]
    vectors += [(ids[f"~f:{s_}-{o}"], vector) for (s_, _, o), (_, vector) in FACTS.items()]
    vectors += [(ids[f"~le:{e}"], vector) for e, vector in LINEAR_ENTITIES.items()]
    vectors += [(ids[f"~ls:{i}"], vector) for i, (vector, _) in enumerate(LINEAR_SENTENCES.values())]
    bound = client.request("POST", f"{s}/embeddings", _items([
        {"idempotency_key": f"emb-{rid}", "record_id": rid, "revision": 1, "space": SEARCH_SPACE, "vector": vector}
        for rid, vector in vectors])).json()["receipts"]

    def relation(key: str, kind: str, source: str, target: str, evidence: str) -> dict:
        return {"idempotency_key": key, "external_id": key, "kind": kind, "source": {"id": ids[source], "revision": 1},
                "target": {"id": ids[target], "revision": 1}, "provenance": {**TOOL, "evidence_ref": evidence}}

    relations = [relation("r1", "semantic_related", "seine", "paris", "title:Paris"),
                 relation("r2", "semantic_related", "paris", "france", "title:France"),
                 relation("r3", "shares_entity", "seine", "paris", "entity:Paris"),
                 relation("r4", "shares_entity", "paris", "france", "entity:France")]
    relations += [relation(f"states-{s_}-{o}", "states", passage, f"~f:{s_}-{o}", "triples:1")
                  for (s_, _, o), (passage, _) in FACTS.items()]
    relations += [relation(f"mentions-{p}", "mentions", p, f"~e:{p}", "ner:GPE") for p in PHRASES]
    relations += [relation(f"holds-{p}-{e}", "holds_entity", p, f"~le:{e}", f"count:{PASSAGES[p][0].count(e)}")
                  for p in PASSAGES for e in LINEAR_ENTITIES if e in PASSAGES[p][0]]
    relations += [relation(f"names-{i}-{e}", "names_entity", f"~ls:{i}", f"~le:{e}", "ner:GPE")
                  for i, (_, named) in enumerate(LINEAR_SENTENCES.values()) for e in named]
    client.request("POST", f"{s}/relations", _items(relations))
    return {"space_id": bound[0]["space_id"]}


def body(route: str, space_id: str) -> dict:
    """The request of the route's first profile for the example question, in wire order."""
    declared = ROUTES[route]
    text, vector = QUESTION
    out: dict = {}
    for name in declared.request:
        if name == TEXT:
            out["query"] = text
        elif name in (VECTOR, VECTOR_IF_HYBRID_SEED):
            out.update(query_vector=vector, space_id=space_id)
        elif name == ENTITIES:
            out["query_entities"] = ["France", "Paris"]
        elif name == ENTITY_VECTORS:
            out["entity_vectors"] = [{"phrase": "france", "vector": PHRASES["france"]},
                                     {"phrase": "paris", "vector": PHRASES["paris"]}]
        elif name == "profile":
            out["profile"] = next(iter(declared.profiles))
        elif name == "limit":
            out["limit"] = 2
        else:
            out[name] = METHOD_FIELDS[name]
    return {**out, "include_payload": False}


def _dumps(value) -> str:
    """Indented JSON with each short list of numbers or strings on one line."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return re.sub(r"\[\n\s+((?:(?:-?[0-9.e+-]+|\"[^\"\n]*\"),\n\s+){0,7}(?:-?[0-9.e+-]+|\"[^\"\n]*\"))\n\s+\]",
                  lambda m: "[" + re.sub(r",\n\s+", ", ", m.group(1)) + "]", text)


def search_examples(tmp: Path) -> list[str]:
    lab = start_lab(tmp / "db", tmp / "access.json")
    client = LabClient(lab.access)
    out = []
    try:
        space_id = build_world(client)["space_id"]
        for route in ROUTES:
            request = body(route, space_id)
            response = client.request("POST", f"/api/v1/scopes/{client.scope}/search/{route}", request)
            out.append(f"#### Search: {route}\n\n```http\nPOST /api/v1/scopes/{client.scope}/search/{route}\n"
                       f"Authorization: Bearer <token>\n\n{_dumps(request)}\n```\n")
            out.append(f"`{response.status_code}`\n\n```json\n{_dumps(response.json())}\n```\n")
    finally:
        client.close()
        lab.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench api-examples", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--search", action="store_true", help="a page of every search route instead")
    parser.add_argument("--write", type=Path, metavar="PAGE",
                        help="with --search: put it between its markers in PAGE (docs/api.md) instead of printing it")
    args = parser.parse_args(argv)
    if args.write is not None and not args.search:
        parser.error("--write goes with --search")
    if args.search:
        if args.write is not None:
            check_writable(args.write, BEGIN, END, WHAT)  # before a lab is started for nothing
        with tempfile.TemporaryDirectory() as tmp:
            examples = "\n".join(search_examples(Path(tmp)))
        if args.write is None:
            print(examples)
        else:
            print(write_block(args.write, BEGIN, END, f"{BEGIN}\n\n{examples}\n{END}", WHAT))
        return 0
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
