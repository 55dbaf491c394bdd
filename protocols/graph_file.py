"""An external knowledge graph a protocol pins (docs/graph-import.md): its files, format, producer and
the passage policy, declared once for every stage.

A protocol whose `graph_builder.method` is `imported_triples_v1` names, under
`graph_builder.graph_file`, the files a language model (or any tool) wrote: each by name, SHA-256 and
size, as source files are pinned; the declared `format` that reads them (the importer binds one
reader per name, importer/graph_formats/); and the `producer`, the model or tool that made the
graph, printed by every report. `graph_builder.passages` says what to do with each way a graph's
passages can disagree with the frozen corpus; every rule defaults to `refuse`.
"""

from __future__ import annotations

from typing import Any

from ground.fields import Fields, join

IMPORTED_BUILDER = "imported_triples_v1"
GRAPH_FILE = "graph_file"
PASSAGES = "passages"

# format name -> the roles of the files it reads (one JSON file, or GraphRAG's four parquet tables)
GRAPH_FORMATS: dict[str, tuple[str, ...]] = {
    "hipporag_openie_v1": ("graph",),
    "hipporag_openie_v2": ("graph",),
    "graphrag_parquet_v1": ("documents", "text_units", "entities", "relationships"),
    "lab_triples_v1": ("graph",),
}

# each disagreement between a graph's passages and the corpus, counted by every import
PASSAGE_RULES = (
    "graph_passages_not_in_corpus",  # a graph passage that matches no corpus passage
    "graph_passages_repeated",  # a corpus passage the graph holds more than once
    "corpus_passages_not_in_graph",  # a corpus passage the graph never saw
    "corpus_passages_without_triples",  # a corpus passage the graph saw, with no triple kept
)
POLICIES = ("refuse", "allow")
DEFAULT_POLICY = "refuse"


def passage_policy(builder: dict) -> dict[str, str]:
    """Every rule's policy: the protocol's, `refuse` where it says nothing."""
    declared = builder.get(PASSAGES, {})
    return {rule: declared.get(rule, DEFAULT_POLICY) for rule in PASSAGE_RULES}


def check_graph_builder(f: Fields, builder: Any, allowed_methods: tuple[str, ...]) -> dict:
    """The protocol's `graph_builder`: a known method; for an imported graph its pinned files."""
    f.obj(builder, "graph_builder", ("method",), optional=(GRAPH_FILE, PASSAGES))
    method = f.string(builder["method"], "graph_builder.method", allowed=allowed_methods)
    imported = method == IMPORTED_BUILDER
    if imported and GRAPH_FILE not in builder:
        f.fail(join("graph_builder", GRAPH_FILE), f"missing field: {IMPORTED_BUILDER} reads the graph it pins here")
    if not imported and GRAPH_FILE in builder:
        f.fail(join("graph_builder", GRAPH_FILE), f"only {IMPORTED_BUILDER} reads an external graph")
    if PASSAGES in builder and not imported:
        f.fail(join("graph_builder", PASSAGES), f"only {IMPORTED_BUILDER} matches an external graph's passages")
    if imported:
        _check_graph_file(f, builder[GRAPH_FILE], join("graph_builder", GRAPH_FILE))
        if PASSAGES in builder:
            path = join("graph_builder", PASSAGES)
            rules = f.obj(builder[PASSAGES], path, (), optional=PASSAGE_RULES)
            for rule, value in rules.items():
                f.string(value, join(path, rule), allowed=POLICIES)
    return builder


def _check_graph_file(f: Fields, value: Any, path: str) -> None:
    f.obj(value, path, ("format", "producer", "files"))
    name = f.string(value["format"], join(path, "format"), allowed=sorted(GRAPH_FORMATS))
    f.string(value["producer"], join(path, "producer"))
    if len(value["producer"]) > 200:  # it is each relation's `model`, which the lab holds to 200 characters
        f.fail(join(path, "producer"), "at most 200 characters")
    files = f.obj(value["files"], join(path, "files"), GRAPH_FORMATS[name])
    for role, entry in files.items():
        where = join(join(path, "files"), role)
        f.obj(entry, where, ("name", "sha256", "bytes"))
        file_name = f.string(entry["name"], join(where, "name"))
        if "/" in file_name or "\\" in file_name or file_name in (".", ".."):
            f.fail(join(where, "name"), f"must be a plain file name, got {file_name!r}")
        f.hex64(entry["sha256"], join(where, "sha256"))
        f.integer(entry["bytes"], join(where, "bytes"), minimum=0)
