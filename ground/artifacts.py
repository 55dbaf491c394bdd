"""Validators of the artifacts the stages hand each other (docs/contracts.md).

`validate_source` checks a `source.json` value completely (shape, ids recomputed from text, sorted
orders, references), so any stage that reads one can trust it without re-deriving anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ground.canonical import digest
from ground.errors import RefusedInput
from ground.fields import Fields, join

SOURCE_FORMAT = "musique_source_v1"  # the artifact's schema name (historical: every dataset uses it)
DOCUMENT_PREFIX = "musique-"
# MuSiQue-Ans id prefixes (before "__"); the hop stratum is the first character.
CATEGORIES = ("2hop", "3hop1", "3hop2", "4hop1", "4hop2", "4hop3")
HOPS = (2, 3, 4)
HOP_KEYS = tuple(str(h) for h in HOPS)  # JSON object keys: the hop strata as strings
ALL_ROWS = "all"  # a split's counts may be "all": every eligible row of its file


@dataclass(frozen=True)
class RowFormat:
    """What a dataset's row format fixes for every stage: strata keys, categories, document ids, and
    where the rest of it lives: the importer module that reads its rows and the committed protocol
    `lab protocol new` starts from. A format is declared once, here; the importer binds the reader
    at import (importer/formats/__init__.py, checked by `check_format_bindings`) and protocols/new.py
    derives its templates from this table (docs/extend-a-format.md).

    `strata` are the keys of a protocol's selection counts (all of them, 0 allowed). MuSiQue
    stratifies by hop ("2", "3", "4") and derives both hop and category from the row id; HotpotQA
    and 2WikiMultihopQA stratify by the row's `type`, which is also the category, and their hop is
    the number of supporting documents (the length of the evidence chain).
    """

    name: str
    document_prefix: str
    strata: tuple[str, ...]
    categories: tuple[str, ...]
    by_type: bool  # stratum = category = the row's type (else MuSiQue's hop from the id)
    selection_version: str  # the name of the selection rule (docs/design.md §4 and §4.1: one ordering)
    reader: str  # the module importer/formats/<reader>.py, whose READERS holds the format's reader
    template: str  # the committed protocol whose methods and evaluation `lab protocol new` keeps
    # the HippoRAG layout (docs/hipporag.md): a question file plus one passage corpus shared by every
    # question, pinned under this source_files role; None: the corpus is the union of the rows' paragraphs
    corpus_role: str | None = None

    def query_stratum(self, query: dict) -> str:
        return query["category"] if self.by_type else str(query["hop"])


ROW_FORMATS = {
    "musique_v1": RowFormat("musique_v1", DOCUMENT_PREFIX, HOP_KEYS, CATEGORIES, by_type=False,
                            selection_version="musique_identifier_strata_v1", reader="musique",
                            template="musique-sample-v3.json"),
    "hotpotqa_distractor_v1": RowFormat("hotpotqa_distractor_v1", "hotpotqa-", ("bridge", "comparison"),
                                        ("bridge", "comparison"), by_type=True,
                                        selection_version="identifier_type_strata_v1", reader="hotpotqa",
                                        template="hotpotqa-sample-v3.json"),
    "2wikimultihopqa_v1": RowFormat(
        "2wikimultihopqa_v1", "2wikimultihopqa-",
        ("bridge_comparison", "comparison", "compositional", "inference"),
        ("bridge_comparison", "comparison", "compositional", "inference"), by_type=True,
        selection_version="identifier_type_strata_v1", reader="twowiki", template="2wikimultihopqa-sample-v3.json"),
}
# The HippoRAG layout (docs/hipporag.md): the same row formats in a question file (one JSON array),
# with the documents read from a separate corpus file; ids keep each dataset's prefix, so a passage
# gets the id it has when the same paragraph is imported from the official rows.
CORPUS_ROLE = "corpus"
QUESTIONS_ROLE = "questions"
HIPPORAG_FORMATS = {"hipporag_musique_v1": "musique_v1", "hipporag_2wikimultihopqa_v1": "2wikimultihopqa_v1",
                    "hipporag_hotpotqa_v1": "hotpotqa_distractor_v1"}
for _name, _rows in HIPPORAG_FORMATS.items():
    ROW_FORMATS[_name] = replace(ROW_FORMATS[_rows], name=_name, corpus_role=CORPUS_ROLE, reader="hipporag")
# A protocol or source.json without `row_format` predates the field: its rows are MuSiQue's. The
# frozen MuSiQue protocols stay byte-identical, so the default is part of the contract.
DEFAULT_ROW_FORMAT = "musique_v1"


def check_format_bindings(side: str, bound: Mapping[str, object], formats: Mapping[str, RowFormat]) -> None:
    """Refuse a side's reader table that does not bind every declared format (ROW_FORMATS), or binds
    one nobody declares: raised at import, so no declared format goes unread."""
    missing = [name for name in formats if name not in bound]
    unknown = [name for name in bound if name not in formats]
    faults = ([f"binds no reader to the row formats {missing}"] if missing else []) + \
        ([f"binds a reader to {unknown}, which ground/artifacts.py does not declare"] if unknown else [])
    if faults:
        raise RuntimeError(f"{side} {' and '.join(faults)}: every declared row format needs exactly one reader")


class SourceError(RefusedInput):
    """A source.json value that does not hold to its contract."""


def row_format_of(value: dict) -> RowFormat:
    """The row format a protocol or source.json value names (absent: MuSiQue); the name is checked
    by the validators, so an unknown one is a KeyError here only for unvalidated input."""
    return ROW_FORMATS[value.get("row_format", DEFAULT_ROW_FORMAT)]


def check_row_format(f: Fields, value: dict) -> RowFormat:
    """The optional `row_format` field of a protocol or source.json value."""
    if "row_format" in value:
        f.string(value["row_format"], "row_format", allowed=sorted(ROW_FORMATS))
    return row_format_of(value)


def hop_category(query_id: str) -> tuple[int, str] | None:
    """(hop, category) of a MuSiQue id such as `3hop1__1_2_3`, or None for an unknown prefix."""
    category, sep, _ = query_id.partition("__")
    if not sep or category not in CATEGORIES:
        return None
    return int(category[0]), category


def document_id(title: str, paragraph_text: str, prefix: str = DOCUMENT_PREFIX) -> str:
    return prefix + digest({"title": title, "paragraph_text": paragraph_text})


def document_id_matches(doc_id: str, title: str, paragraph_text: str) -> bool:
    """Whether `doc_id` is the id of (title, paragraph_text) under one of the row formats' prefixes
    (the graph builder sees documents only, not which dataset they came from)."""
    return any(doc_id == document_id(title, paragraph_text, fmt.document_prefix)
               for fmt in ROW_FORMATS.values() if doc_id.startswith(fmt.document_prefix))


def document_text(title: str, paragraph_text: str) -> str:
    return title + "\n" + paragraph_text


# Warm-up rules (`evaluation.warmup`): what each method runs once, validated and never measured,
# before a campaign's first measured job (docs/hipporag.md, "Warm-up without a development split").
WARMUP_DEVELOPMENT = "smallest_development_query_once_per_method"
# A test-only cohort has no development query: the warm-up query is built from the corpus instead,
# outside the measured cohort, by one fixed rule (`warmup_query`).
WARMUP_CORPUS = "corpus_first_title_once_per_method"
WARMUP_RULES = (WARMUP_DEVELOPMENT, WARMUP_CORPUS)
WARMUP_SPLIT = "warmup"  # the split of that one query in source.json; never a selection split
WARMUP_QUERY_ID = "warmup"


def warmup_split(protocol: dict) -> str:
    """The split whose smallest query warms each method up."""
    return WARMUP_SPLIT if protocol["evaluation"]["warmup"] == WARMUP_CORPUS else "development"


def warmup_query(documents: Sequence[Mapping[str, Any]]) -> dict:
    """The corpus warm-up query: the title of the first document (in id order) whose title is not
    blank, asked as a question and judged by that document alone. It is no question of the cohort,
    so warming up touches no measured query; it depends on the corpus only, so two imports of one
    corpus warm up alike."""
    for doc in documents:
        if doc["title"].strip():
            return {"id": WARMUP_QUERY_ID, "split": WARMUP_SPLIT, "hop": 1, "category": WARMUP_SPLIT,
                    "question": doc["title"], "answer": "", "answer_aliases": [],
                    "judgments": {doc["id"]: 1}, "evidence_chain": [doc["id"]]}
    raise SourceError("no document has a title to warm up with (warm-up rule " + WARMUP_CORPUS + ")")


SOURCE_KEYS = ("format", "protocol", "dataset", "source_files", "selection", "corpus_policy",
               "judgment_policy", "documents", "queries", "counts")
DOCUMENT_KEYS = ("id", "title", "paragraph_text", "text")
QUERY_KEYS = ("id", "split", "hop", "category", "question", "answer", "answer_aliases",
              "judgments", "evidence_chain")


def validate_source(value: Any) -> dict:
    """Return `value` unchanged when it is a valid source.json value; else raise SourceError."""
    f = Fields(SourceError)
    f.obj(value, "", SOURCE_KEYS, optional=("row_format",))
    f.string(value["format"], "format", allowed=[SOURCE_FORMAT])
    row_format = check_row_format(f, value)
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
    selection = _check_selection(f, value["selection"], files, row_format)
    f.mapping(value["corpus_policy"], "corpus_policy")
    judgment = f.obj(value["judgment_policy"], "judgment_policy", ("grade", "relevant", "judgments_complete"))
    f.integer(judgment["grade"], "judgment_policy.grade", minimum=1)
    f.string(judgment["relevant"], "judgment_policy.relevant")
    if judgment["judgments_complete"] is not False:
        f.fail("judgment_policy.judgments_complete", "must be false (only supporting paragraphs are judged)")
    documents = _check_documents(f, value["documents"], row_format)
    queries = _check_queries(f, value["queries"], set(documents), selection, judgment["grade"], row_format,
                             value["documents"])
    _check_counts(f, value["counts"], len(documents), queries, selection, row_format)
    return value


def _check_selection(f: Fields, selection: Any, files: dict, row_format: RowFormat) -> dict:
    f.obj(selection, "selection", ("version", "seed", "order", "splits", "selected_ids"))
    f.string(selection["version"], "selection.version")
    f.string(selection["seed"], "selection.seed")
    splits = check_splits(f, selection, files, row_format.strata)
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


def check_splits(f: Fields, selection: dict, files: dict, strata: tuple[str, ...] = HOP_KEYS) -> dict:
    """`selection.order` and `selection.splits` (protocol and source.json alike): each split once
    in the order, drawn from a pinned file, with a count for every stratum of the row format
    (MuSiQue: the hops "2", "3", "4"; HotpotQA and 2Wiki: their types)."""
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
        if split["counts"] == ALL_ROWS:  # every eligible row of the file (protocols/selection.py)
            continue
        counts = f.obj(split["counts"], join(path, "counts"), strata)
        for stratum in strata:
            f.integer(counts[stratum], join(join(path, "counts"), stratum), minimum=0)
    return splits


def _check_documents(f: Fields, documents: Any, row_format: RowFormat) -> list[str]:
    f.array(documents, "documents")
    ids = []
    for i, doc in enumerate(documents):
        path = join("documents", i)
        f.obj(doc, path, DOCUMENT_KEYS)
        title = f.string(doc["title"], join(path, "title"), nonempty=False)
        text = f.string(doc["paragraph_text"], join(path, "paragraph_text"), nonempty=False)
        f.string(doc["id"], join(path, "id"))
        f.string(doc["text"], join(path, "text"), nonempty=False)
        expected = document_id(title, text, row_format.document_prefix)
        if doc["id"] != expected:
            f.fail(join(path, "id"), f"{doc['id']!r} does not match digest of title and paragraph_text ({expected})")
        if doc["text"] != document_text(title, text):
            f.fail(join(path, "text"), "must be title + \"\\n\" + paragraph_text")
        ids.append(doc["id"])
    f.ascending(ids, "documents", "document id")
    return ids


def _check_queries(f: Fields, queries: Any, documents: set[str], selection: dict, grade: int,
                   row_format: RowFormat, document_list: list[dict]) -> list[dict]:
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
        f.string(query["split"], join(path, "split"), allowed=sorted(splits) + [WARMUP_SPLIT])
        if query["split"] == WARMUP_SPLIT:  # outside every selection split: exactly the rule's query
            if query != warmup_query(document_list):
                f.fail(path, f"a {WARMUP_SPLIT!r} query must be the corpus warm-up query ({WARMUP_CORPUS})")
            continue
        if not row_format.by_type:
            _check_musique_strata(f, query, path)
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
        if row_format.by_type:
            _check_typed_strata(f, query, path, row_format)
    order = [(q["split"], q["id"]) for q in queries]
    f.ascending(order, "queries", "(split, id)")
    for name, ids in selection["selected_ids"].items():
        actual = [q["id"] for q in queries if q["split"] == name]
        if actual != ids:
            f.fail(join("selection.selected_ids", name), "differs from the ids of the queries of that split")
    return queries


def _check_musique_strata(f: Fields, query: dict, path: str) -> None:
    """MuSiQue: hop and category are read off the id (`3hop1__...`)."""
    qid = query["id"]
    strata = hop_category(qid)
    if strata is None:
        f.fail(join(path, "id"), f"unknown hop prefix in {qid!r}")
    if f.integer(query["hop"], join(path, "hop")) != strata[0]:
        f.fail(join(path, "hop"), f"must be {strata[0]} for {qid!r}")
    if f.string(query["category"], join(path, "category")) != strata[1]:
        f.fail(join(path, "category"), f"must be {strata[1]!r} for {qid!r}")


def _check_typed_strata(f: Fields, query: dict, path: str, row_format: RowFormat) -> None:
    """HotpotQA and 2Wiki: category = the row's type; the chain orders every judged document once,
    and hop = its length (the number of supporting documents)."""
    f.string(query["category"], join(path, "category"), allowed=row_format.categories)
    chain = query["evidence_chain"]
    f.unique(chain, join(path, "evidence_chain"))
    if sorted(chain) != list(query["judgments"]):
        f.fail(join(path, "evidence_chain"), "must order exactly the judged documents")
    if f.integer(query["hop"], join(path, "hop")) != len(chain):
        f.fail(join(path, "hop"), f"must be {len(chain)}, the number of supporting documents")


def _check_counts(f: Fields, counts: Any, n_documents: int, queries: list[dict], selection: dict,
                  row_format: RowFormat) -> None:
    f.obj(counts, "counts", ("documents", "queries", "categories"))
    expected = source_counts(n_documents, queries, query_splits(selection["order"], queries))
    for key in ("documents", "queries", "categories"):
        if counts[key] != expected[key]:
            f.fail(join("counts", key), f"expected {expected[key]}, got {counts[key]}")
    # the selection asked for exact counts per stratum; a source that holds fewer is not that selection
    for name, split in selection["splits"].items():
        if split["counts"] == ALL_ROWS:
            continue
        for stratum, wanted in split["counts"].items():
            have = sum(1 for q in queries if q["split"] == name and row_format.query_stratum(q) == stratum)
            if have != wanted:
                f.fail(join(join(join("selection.splits", name), "counts"), stratum),
                       f"{wanted} queries requested, source holds {have}")


def query_splits(order: list[str], queries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The splits source.json counts: the selection's, then the warm-up split when it holds a query."""
    return list(order) + ([WARMUP_SPLIT] if any(q["split"] == WARMUP_SPLIT for q in queries) else [])


def source_counts(n_documents: int, queries: Sequence[Mapping[str, Any]], splits: list[str]) -> dict:
    """The `counts` block of source.json: documents, queries per split, categories per split."""
    per_split = {name: 0 for name in splits}
    categories: dict[str, dict[str, int]] = {name: {} for name in splits}
    for query in queries:
        per_split[query["split"]] += 1
        bucket = categories[query["split"]]
        bucket[query["category"]] = bucket.get(query["category"], 0) + 1
    categories = {name: dict(sorted(c.items())) for name, c in categories.items()}
    return {"documents": n_documents, "queries": per_split, "categories": categories}
