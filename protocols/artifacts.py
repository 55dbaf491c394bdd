"""Validators of the artifacts the stages hand each other (docs/contracts.md).

`validate_source` checks a `source.json` value completely (shape, ids recomputed from text, sorted
orders, references), so any stage that reads one can trust it without re-deriving anything.
"""

from __future__ import annotations

from typing import Any

from protocols.canonical import digest
from protocols.errors import RefusedInput
from protocols.fields import Fields, join

SOURCE_FORMAT = "musique_source_v1"
DOCUMENT_PREFIX = "musique-"
# MuSiQue-Ans id prefixes (before "__"); the hop stratum is the first character.
CATEGORIES = ("2hop", "3hop1", "3hop2", "4hop1", "4hop2", "4hop3")
HOPS = (2, 3, 4)
HOP_KEYS = tuple(str(h) for h in HOPS)  # JSON object keys: the hop strata as strings
ALL_ROWS = "all"  # a split's counts may be "all": every eligible row of its file


class SourceError(RefusedInput):
    """A source.json value that does not hold to its contract."""


def hop_category(query_id: str) -> tuple[int, str] | None:
    """(hop, category) of a MuSiQue id such as `3hop1__1_2_3`, or None for an unknown prefix."""
    category, sep, _ = query_id.partition("__")
    if not sep or category not in CATEGORIES:
        return None
    return int(category[0]), category


def document_id(title: str, paragraph_text: str) -> str:
    return DOCUMENT_PREFIX + digest({"title": title, "paragraph_text": paragraph_text})


def document_text(title: str, paragraph_text: str) -> str:
    return title + "\n" + paragraph_text


SOURCE_KEYS = ("format", "protocol", "dataset", "source_files", "selection", "corpus_policy",
               "judgment_policy", "documents", "queries", "counts")
DOCUMENT_KEYS = ("id", "title", "paragraph_text", "text")
QUERY_KEYS = ("id", "split", "hop", "category", "question", "answer", "answer_aliases",
              "judgments", "evidence_chain")


def validate_source(value: Any) -> dict:
    """Return `value` unchanged when it is a valid source.json value; else raise SourceError."""
    f = Fields(SourceError)
    f.obj(value, "", SOURCE_KEYS)
    f.string(value["format"], "format", allowed=[SOURCE_FORMAT])
    protocol = f.obj(value["protocol"], "protocol", ("version", "digest"))
    f.string(protocol["version"], "protocol.version")
    f.hex64(protocol["digest"], "protocol.digest")
    check_dataset(f, value["dataset"])
    files = f.mapping(value["source_files"], "source_files")
    for name, entry in files.items():
        path = join("source_files", name)
        f.obj(entry, path, ("name", "sha256", "rows"))
        f.string(entry["name"], join(path, "name"))
        f.hex64(entry["sha256"], join(path, "sha256"))
        f.integer(entry["rows"], join(path, "rows"), minimum=0)
    selection = _check_selection(f, value["selection"], files)
    f.mapping(value["corpus_policy"], "corpus_policy")
    judgment = f.obj(value["judgment_policy"], "judgment_policy", ("grade", "relevant", "judgments_complete"))
    f.integer(judgment["grade"], "judgment_policy.grade", minimum=1)
    f.string(judgment["relevant"], "judgment_policy.relevant")
    if judgment["judgments_complete"] is not False:
        f.fail("judgment_policy.judgments_complete", "must be false (only supporting paragraphs are judged)")
    documents = _check_documents(f, value["documents"])
    queries = _check_queries(f, value["queries"], set(documents), selection, judgment["grade"])
    _check_counts(f, value["counts"], len(documents), queries, selection)
    return value


def _check_selection(f: Fields, selection: Any, files: dict) -> dict:
    f.obj(selection, "selection", ("version", "seed", "order", "splits", "selected_ids"))
    f.string(selection["version"], "selection.version")
    f.string(selection["seed"], "selection.seed")
    splits = check_splits(f, selection, files)
    selected = f.obj(selection["selected_ids"], "selection.selected_ids", sorted(splits))
    for name, ids in selected.items():
        path = join("selection.selected_ids", name)
        f.strings(ids, path)
        f.ascending(ids, path, "id")
    return selection


def check_dataset(f: Fields, dataset: Any) -> dict:
    """`dataset` of a protocol and of the source.json it yields: name, license, attribution."""
    f.obj(dataset, "dataset", ("name", "license", "attribution"))
    for key in ("name", "license", "attribution"):
        f.string(dataset[key], join("dataset", key))
    return dataset


def check_splits(f: Fields, selection: dict, files: dict) -> dict:
    """`selection.order` and `selection.splits` (protocol and source.json alike): each split once
    in the order, drawn from a pinned file, with a count for every hop stratum "2", "3", "4"."""
    splits = f.mapping(selection["splits"], "selection.splits")
    order = f.strings(selection["order"], "selection.order", nonempty=True, unique=True)
    for i, name in enumerate(order):
        if name not in splits:
            f.fail(join("selection.order", i), f"{name!r} is not a split of selection.splits")
    for name in splits:
        if name not in order:
            f.fail(join("selection.splits", name), "is missing from selection.order")
    for name, split in splits.items():
        path = join("selection.splits", name)
        f.obj(split, path, ("source", "counts"))
        f.string(split["source"], join(path, "source"), allowed=sorted(files))
        if split["counts"] == ALL_ROWS:  # every eligible row of the file (importer/selection.py)
            continue
        counts = f.obj(split["counts"], join(path, "counts"), HOP_KEYS)
        for hop in HOP_KEYS:
            f.integer(counts[hop], join(join(path, "counts"), hop), minimum=0)
    return splits


def _check_documents(f: Fields, documents: Any) -> list[str]:
    f.array(documents, "documents")
    ids = []
    for i, doc in enumerate(documents):
        path = join("documents", i)
        f.obj(doc, path, DOCUMENT_KEYS)
        title = f.string(doc["title"], join(path, "title"), nonempty=False)
        text = f.string(doc["paragraph_text"], join(path, "paragraph_text"), nonempty=False)
        f.string(doc["id"], join(path, "id"))
        f.string(doc["text"], join(path, "text"), nonempty=False)
        expected = document_id(title, text)
        if doc["id"] != expected:
            f.fail(join(path, "id"), f"{doc['id']!r} does not match digest of title and paragraph_text ({expected})")
        if doc["text"] != document_text(title, text):
            f.fail(join(path, "text"), "must be title + \"\\n\" + paragraph_text")
        ids.append(doc["id"])
    f.ascending(ids, "documents", "document id")
    return ids


def _check_queries(f: Fields, queries: Any, documents: set[str], selection: dict, grade: int) -> list[dict]:
    f.array(queries, "queries")
    splits = selection["splits"]
    seen_ids: set[str] = set()
    for i, query in enumerate(queries):
        path = join("queries", i)
        f.obj(query, path, QUERY_KEYS)
        qid = f.string(query["id"], join(path, "id"))
        if qid in seen_ids:
            f.fail(join(path, "id"), f"duplicate query id {qid!r}")
        seen_ids.add(qid)
        f.string(query["split"], join(path, "split"), allowed=sorted(splits))
        strata = hop_category(qid)
        if strata is None:
            f.fail(join(path, "id"), f"unknown hop prefix in {qid!r}")
        if f.integer(query["hop"], join(path, "hop")) != strata[0]:
            f.fail(join(path, "hop"), f"must be {strata[0]} for {qid!r}")
        if f.string(query["category"], join(path, "category")) != strata[1]:
            f.fail(join(path, "category"), f"must be {strata[1]!r} for {qid!r}")
        f.string(query["question"], join(path, "question"))
        f.string(query["answer"], join(path, "answer"), nonempty=False)
        f.strings(query["answer_aliases"], join(path, "answer_aliases"))
        judgments = f.mapping(query["judgments"], join(path, "judgments"))
        keys = list(judgments)
        f.ascending(keys, join(path, "judgments"), "document id")
        for doc_id, value in judgments.items():
            where = join(join(path, "judgments"), doc_id)
            if doc_id not in documents:
                f.fail(where, "references no document")
            if f.integer(value, where) != grade:
                f.fail(where, f"grade must be {grade}, got {value}")
        chain = f.strings(query["evidence_chain"], join(path, "evidence_chain"), nonempty=True)
        for j, doc_id in enumerate(chain):
            if doc_id not in judgments:
                f.fail(join(join(path, "evidence_chain"), j), f"{doc_id!r} is not a judged supporting document")
    order = [(q["split"], q["id"]) for q in queries]
    f.ascending(order, "queries", "(split, id)")
    for name, ids in selection["selected_ids"].items():
        actual = [q["id"] for q in queries if q["split"] == name]
        if actual != ids:
            f.fail(join("selection.selected_ids", name), "differs from the ids of the queries of that split")
    return queries


def _check_counts(f: Fields, counts: Any, n_documents: int, queries: list[dict], selection: dict) -> None:
    f.obj(counts, "counts", ("documents", "queries", "categories"))
    expected = source_counts(n_documents, queries, selection["order"])
    for key in ("documents", "queries", "categories"):
        if counts[key] != expected[key]:
            f.fail(join("counts", key), f"expected {expected[key]}, got {counts[key]}")
    # the selection asked for exact counts per hop; a source that holds fewer is not that selection
    for name, split in selection["splits"].items():
        if split["counts"] == ALL_ROWS:
            continue
        for hop, wanted in split["counts"].items():
            have = sum(1 for q in queries if q["split"] == name and q["hop"] == int(hop))
            if have != wanted:
                f.fail(join(join(join("selection.splits", name), "counts"), hop),
                       f"{wanted} queries requested, source holds {have}")


def source_counts(n_documents: int, queries: list[dict], splits: list[str]) -> dict:
    """The `counts` block of source.json: documents, queries per split, categories per split."""
    per_split = {name: 0 for name in splits}
    categories: dict[str, dict[str, int]] = {name: {} for name in splits}
    for query in queries:
        per_split[query["split"]] += 1
        bucket = categories[query["split"]]
        bucket[query["category"]] = bucket.get(query["category"], 0) + 1
    categories = {name: dict(sorted(c.items())) for name, c in categories.items()}
    return {"documents": n_documents, "queries": per_split, "categories": categories}
