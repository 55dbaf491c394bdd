"""Import an external knowledge graph a protocol pins into the lab's `imported` section (docs/graph-import.md).

Every format (importer/graph_formats/) hands over its passages with their raw triples; this module
does what is the same for all of them, in order, before anything is written:

1. each pinned file's size and SHA-256 are checked before a byte of it is parsed;
2. each triple is checked as HippoRAG's loader keeps triples: a list of exactly three elements is
   kept; any other length is left out and counted by its length; a kept triple whose element is
   not a string or is blank is refused (it names nothing); a triple repeated within a passage is
   kept once and counted;
3. each graph passage is matched to exactly one corpus passage (title and text, HippoRAG 2's chunk
   id, or the lab's document id); the four disagreements (protocols/graph_file.py
   `PASSAGE_RULES`) are counted and, where the protocol's policy is `refuse` (the default), refused
   with their counts and first five examples;
4. the section holds, per corpus passage with triples (id order), its triples as the file wrote
   them, with the format, the pinned files, the producer, the policy and every count.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ground.canonical import sha256_file
from importer.graph_formats import READERS, GraphPassage
from importer.graph_formats.base import BY_CHUNK_ID, BY_DOCUMENT_ID, BY_TITLE_TEXT, GraphFileError
from protocols.graph_file import GRAPH_FILE, PASSAGE_RULES, passage_policy

EXAMPLES = 5


def pinned_paths(builder: dict, graph_dir: str | Path) -> dict[str, Path]:
    """The pinned files in `graph_dir`, each checked by size and SHA-256 before anything reads it."""
    out = {}
    for role, entry in builder[GRAPH_FILE]["files"].items():
        path = Path(graph_dir) / entry["name"]
        if not path.is_file():
            what = "the graph file" if role == "graph" else f"the graph's {role} table"
            raise GraphFileError(f"{what} {entry['name']} is not in {graph_dir}: pass the folder that holds it "
                                 f"as --graph-dir DIR (the protocol pins {entry['bytes']:,} bytes, "
                                 f"sha256 {entry['sha256']})")
        size, sha = path.stat().st_size, sha256_file(path)
        if size != entry["bytes"] or sha != entry["sha256"]:
            raise GraphFileError(f"graph file {path} has {size:,} bytes and sha256 {sha}; the protocol pins "
                                 f"{entry['bytes']:,} bytes, sha256 {entry['sha256']}: not the pinned graph, "
                                 "refused before reading it")
        out[role] = path
    return out


def import_graph(builder: dict, paths: dict[str, Path], documents: list[dict]) -> dict:
    """The `imported` section for a protocol's `graph_builder`, its files (`pinned_paths`) and the
    corpus `documents` ({id, title, paragraph_text}); raises GraphFileError (refused input) on any fault."""
    pin = builder[GRAPH_FILE]
    passages = READERS[pin["format"]](paths)
    left_out: dict[str, int] = {}
    triples_in_file = 0
    for passage in passages:
        triples_in_file += len(passage.triples)
        passage.triples = kept_triples(passage, left_out)
    policy = passage_policy(builder)
    by_document, counts = match(passages, documents, policy)
    kept = sum(len(triples) for triples in by_document.values())
    counts.update({"triples_in_file": triples_in_file, "triples_kept": kept,
                   "triples_left_out": sum(left_out.values())})
    return {
        "format": pin["format"],
        "producer": pin["producer"],
        "files": pin["files"],
        "policy": policy,
        "counts": counts,
        "left_out": dict(sorted(left_out.items())),
        "documents": [{"id": doc_id, "triples": by_document[doc_id]} for doc_id in sorted(by_document)],
    }


ELEMENTS = ("subject", "predicate", "object")


def kept_triples(passage: GraphPassage, left_out: dict[str, int]) -> list[list[str]]:
    """A passage's triples as HippoRAG keeps them (module docstring, step 2), first occurrence first."""
    out: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for i, triple in enumerate(passage.triples):
        if not isinstance(triple, list):
            raise GraphFileError(f"graph: {passage.origin(i)}: expected a list, got {type(triple).__name__}")
        if len(triple) != 3:
            key = f"not_three_elements:{len(triple)}"
            left_out[key] = left_out.get(key, 0) + 1
            continue
        for j, part in enumerate(triple):
            if not isinstance(part, str) or not part.strip():
                shown = repr(part) if isinstance(part, str) else type(part).__name__
                raise GraphFileError(f"graph: {passage.origin(i)}, {ELEMENTS[j]}: {shown} is not a non-blank "
                                     "string (subject, predicate and object each name something)")
        kept = tuple(triple)
        if kept in seen:
            left_out["repeated_in_passage"] = left_out.get("repeated_in_passage", 0) + 1
            continue
        seen.add(kept)
        out.append(list(triple))
    return out


def match(passages: list[GraphPassage], documents: list[dict],
          policy: dict[str, str]) -> tuple[dict[str, list], dict[str, int]]:
    """document id -> its kept triples (repeated passages' triples joined, repeats dropped), and the
    counts; refuses every disagreement whose rule is `refuse`."""
    index = {
        BY_TITLE_TEXT: {(d["title"], d["paragraph_text"]): d["id"] for d in documents},
        BY_DOCUMENT_ID: {d["id"]: d["id"] for d in documents},
    }
    if any(p.by == BY_CHUNK_ID for p in passages):
        index[BY_CHUNK_ID] = {"chunk-" + hashlib.md5(f"{d['title']}\n{d['paragraph_text']}".encode()).hexdigest(): d["id"]
                              for d in documents}
    found: dict[str, list[str]] = {rule: [] for rule in PASSAGE_RULES}
    by_document: dict[str, list] = {}
    seen_at: dict[str, str] = {}
    graph_passages = 0
    for passage in passages:
        graph_passages += 1
        doc_id = index[passage.by].get(passage.key)
        if doc_id is None:
            found["graph_passages_not_in_corpus"].append(f"{passage.where} ({_shown(passage.key)})")
            continue
        if doc_id in seen_at:
            found["graph_passages_repeated"].append(f"{passage.where} repeats {seen_at[doc_id]} ({doc_id})")
            held = by_document[doc_id]
            held.extend(t for t in passage.triples if t not in held)
            continue
        seen_at[doc_id] = passage.where
        by_document[doc_id] = passage.triples
    for doc in sorted(documents, key=lambda d: d["id"]):
        if doc["id"] not in by_document:
            found["corpus_passages_not_in_graph"].append(f"{doc['id']} ({_shown(doc['title'])})")
        elif not by_document[doc["id"]]:
            found["corpus_passages_without_triples"].append(f"{doc['id']} ({_shown(doc['title'])})")
    refused = [f"{len(found[rule])} {rule.replace('_', ' ')} (first: {'; '.join(found[rule][:EXAMPLES])})"
               for rule in PASSAGE_RULES if found[rule] and policy[rule] == "refuse"]
    if refused:
        raise GraphFileError("graph: " + ", ".join(refused) + "; refused by the protocol's passage policy "
                             "(graph_builder.passages, docs/graph-import.md): nothing written")
    counts = {"graph_passages": graph_passages, "matched_passages": len(by_document)}
    counts.update({rule: len(found[rule]) for rule in PASSAGE_RULES})
    return {k: v for k, v in by_document.items() if v}, counts


def _shown(key: object) -> str:
    text = " / ".join(key) if isinstance(key, tuple) else str(key)
    return text if len(text) <= 60 else text[:57] + "..."
