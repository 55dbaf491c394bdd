"""The import command end to end: verify, select, assemble, build the graph, then write.

Order matters: outputs are refused, the protocol validated and every pinned file hashed before
anything is parsed, and nothing is written until the source and relations are both complete and
valid, so a refused import leaves no file behind.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import refuse_existing, refuse_same_path, save
from importer.cohort import SelectionMismatch, read_cohort, select_cohort  # noqa: F401 (re-exported)
from importer.graph_import import import_graph, pinned_paths
from importer.source import build_source
from protocols.graph_file import GRAPH_FILE
from protocols.schema import load_protocol

GraphBuilder = Callable[..., dict]  # (source, its digest[, imported=the imported graph]) -> the graph


def import_source(
    protocol_path: str | Path,
    source_dir: str | Path,
    output: str | Path,
    relations: str | Path,
    *,
    graph_builder: GraphBuilder,
    log: Callable[[str], None] = lambda line: None,
    graph_dir: str | Path | None = None,
) -> dict:
    """Import the source files pinned by a protocol into source.json and relations.json.

    The protocol's `row_format` (absent: MuSiQue) says how the files' rows read
    (importer.formats); everything else is the same for every dataset. A HippoRAG-layout format
    reads its documents from the pinned corpus file and matches every selected question's gold in
    it (importer/passages.py) before anything is built.

    The graph builder is its own stage (builders/), passed in rather than imported so the importer
    depends on protocols only (docs/design.md §2); it maps (source, source digest) to the relations value.
    Returns a summary: paths written, digests, queries per split and category, documents and
    relations by kind. `log` receives one line as each stage starts (the CLI prints them on
    stderr: the official train file takes three passes, and silence would look like a hang).

    A protocol that pins an external graph (`graph_builder.graph_file`, docs/graph-import.md) has
    its files checked by hash first and read from `graph_dir` (default: `source_dir`) after the
    corpus is assembled (importer/graph_import.py); the builder is handed that section as `imported`.
    """
    refuse_same_path(output=output, relations=relations)
    refuse_existing(output, relations)
    protocol = load_protocol(protocol_path)
    builder = protocol["graph_builder"]
    if graph_dir is not None and GRAPH_FILE not in builder:
        raise RefusedInput(f"--graph-dir {graph_dir}: protocol {protocol_path} pins no external graph")
    graph_paths = pinned_paths(builder, graph_dir or source_dir) if GRAPH_FILE in builder else None
    source = assembled_source(protocol, source_dir, log)
    source_digest = digest(source)
    if graph_paths is None:
        log(f"building the graph over {source['counts']['documents']} documents")
        graph = graph_builder(source, source_digest)
    else:
        log(f"importing the {builder[GRAPH_FILE]['format']} graph ({', '.join(map(str, graph_paths.values()))})")
        imported = import_graph(builder, graph_paths, source["documents"])
        log(f"imported {imported['counts']['triples_kept']:,} triples of {imported['counts']['matched_passages']:,} "
            f"passages ({imported['counts']['triples_left_out']:,} left out); building the graph")
        graph = graph_builder(source, source_digest, imported=imported)
    if graph.get("method") != protocol["graph_builder"]["method"]:
        raise RefusedInput(f"the graph builder made {graph.get('method')!r} relations; the protocol names "
                           f"{protocol['graph_builder']['method']!r}")
    refuse_existing(output, relations)
    save(output, source)
    try:
        save(relations, graph)
    except BaseException:
        # a source.json without its relations.json is half an import: leave neither
        Path(output).unlink(missing_ok=True)
        raise
    return {
        "output": str(output),
        "relations": str(relations),
        "source_digest": source_digest,
        "relations_digest": digest(graph),
        "queries": source["counts"]["queries"],
        "categories": source["counts"]["categories"],
        "documents": source["counts"]["documents"],
        "relation_counts": graph["counts"],
        **({"imported": {key: graph["imported"][key] for key in ("format", "producer", "counts", "left_out")}}
           if "imported" in graph else {}),
    }


def check_graph(protocol: dict, source_dir: str | Path, graph_dir: str | Path | None = None,
                log: Callable[[str], None] = lambda line: None) -> dict | None:
    """The imported section a protocol's pinned graph gives over its corpus, read as the import reads
    it and written nowhere (None when the protocol pins no graph): what `lab run` refuses before
    it creates the run directory."""
    builder = protocol["graph_builder"]
    if GRAPH_FILE not in builder:
        return None
    paths = pinned_paths(builder, graph_dir or source_dir)
    return import_graph(builder, paths, assembled_source(protocol, source_dir, log)["documents"])


def assembled_source(protocol: dict, source_dir: str | Path, log: Callable[[str], None]) -> dict:
    """The source.json value of a protocol's cohort, read from `source_dir` (nothing written)."""
    cohort = read_cohort(protocol, source_dir, log)
    return build_source(protocol, cohort.file_rows, cohort.selected, cohort.reader, cohort.passages,
                        cohort.corpus_record)
