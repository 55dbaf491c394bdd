"""What an outside retrieval system needs to produce a run for a finished campaign: the evaluated
questions (`queries.tsv`, `queries.jsonl`) and, on request, the corpus (`corpus.jsonl`), with the
dataset's licence and attribution beside them (docs/external.md).

These files hold the dataset's text, so they are kept apart from the text-free public report: export
writes them into their own folder, `PUBLIC.text/`, which `public.json` does not bind and the audit
does not read. The text is the fixture's embedded source (the user's own source files, hash-checked
by the importer; `hash_chain.source` of the report names it), and `manifest.json` in the folder
records that digest and the SHA-256 of every file beside it.

- `queries.tsv`: `query_id<TAB>question`, one line per query of the evaluated split in sorted id
  order, no header; a tab, carriage return or newline inside a question becomes one space (the
  JSONL keeps the exact text).
- `queries.jsonl`: `{"id": ..., "text": ...}` per line, same order.
- `corpus.jsonl` (`lab export --with-corpus`): `{"id": ..., "title": ..., "text": ...}` per document,
  sorted by id; `text` is exactly what the lab's methods index (for MuSiQue-format sources: the title,
  a newline, the paragraph).
- `LICENSE.md`: the dataset's name, licence and attribution as the source records them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ground.canonical import digest, sha256_bytes

MANIFEST_FORMAT = "graph_evaluation_text_v1"


def text_dir(public: Path) -> Path:
    """`DIR/public.json` -> `DIR/public.text` (the folder of the text-bearing files)."""
    stem = public.with_suffix("") if public.suffix == ".json" else public
    return Path(f"{stem}.text")


def _line(value: Mapping) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False) + "\n"


def _tsv_field(text: str) -> str:
    return " ".join(text.replace("\r", " ").replace("\n", " ").replace("\t", " ").split(" "))


def evaluated_queries(query_ids: Sequence[str], source: Mapping) -> list[dict]:
    """`{id, text}` of every evaluated query, in sorted id order."""
    by_id = {q["id"]: q for q in source["queries"]}
    return [{"id": q, "text": by_id[q]["question"]} for q in sorted(query_ids)]


def queries_tsv(queries: Sequence[Mapping]) -> bytes:
    return "".join(f"{q['id']}\t{_tsv_field(q['text'])}\n" for q in queries).encode("utf-8")


def queries_jsonl(queries: Sequence[Mapping]) -> bytes:
    return "".join(_line({"id": q["id"], "text": q["text"]}) for q in queries).encode("utf-8")


def corpus_jsonl(source: Mapping) -> bytes:
    documents = sorted(source["documents"], key=lambda d: d["id"])
    return "".join(_line({"id": d["id"], "title": d["title"], "text": d["text"]}) for d in documents).encode("utf-8")


def licence_text(source: Mapping) -> str:
    dataset = source.get("dataset") or {}
    return "\n".join([
        "# Dataset licence and attribution", "",
        "The files in this folder hold text of the dataset below, taken from the source files the campaign",
        "imported. Their use is governed by the dataset's licence, not by this project's.", "",
        f"- dataset: {dataset.get('name', 'not recorded in the source')}",
        f"- licence: {dataset.get('license', 'not recorded in the source')}",
        f"- attribution: {dataset.get('attribution', 'not recorded in the source')}",
        "",
    ])


def text_files(query_ids: Sequence[str], source: Mapping, folder: Path, *, with_corpus: bool,
               extra: Mapping[str, bytes] | None = None) -> dict[Path, bytes]:
    """Every file of the text folder, with `manifest.json` last (`extra`: more named files, such as
    the readable questions of the report)."""
    queries = evaluated_queries(query_ids, source)
    files = {"queries.tsv": queries_tsv(queries), "queries.jsonl": queries_jsonl(queries),
             "LICENSE.md": licence_text(source).encode("utf-8")}
    if with_corpus:
        files["corpus.jsonl"] = corpus_jsonl(source)
    files.update(extra or {})
    manifest = {"format": MANIFEST_FORMAT, "source_digest": digest(source),
                "queries": len(queries), "documents": len(source["documents"]) if with_corpus else None,
                "files": {name: sha256_bytes(data) for name, data in sorted(files.items())}}
    files["manifest.json"] = (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
    return {folder / name: data for name, data in files.items()}
