"""The import command end to end: verify, select, assemble, build the graph, then write.

Order matters: outputs are refused, the protocol validated and every pinned file hashed before
anything is parsed, and nothing is written until the source and relations are both complete and
valid, so a refused import leaves no file behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from importer.formats import RowReader, reader_for
from importer.passages import Passages, check_gold, read_corpus, require_array
from importer.reading import PinnedFile, pinned_files, stream_rows, verify_hash
from protocols.selection import ALL, select_rows
from importer.source import build_source
from protocols.canonical import digest
from protocols.errors import RefusedInput
from protocols.files import refuse_existing, refuse_same_path, save
from protocols.schema import load_protocol


class SelectionMismatch(RefusedInput):
    """The selection differs from the ids the protocol publishes."""


GraphBuilder = Callable[[dict, str], dict]


def import_source(
    protocol_path: str | Path,
    source_dir: str | Path,
    output: str | Path,
    relations: str | Path,
    *,
    graph_builder: GraphBuilder,
    log: Callable[[str], None] = lambda line: None,
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
    """
    refuse_same_path(output=output, relations=relations)
    refuse_existing(output, relations)
    protocol = load_protocol(protocol_path)
    reader = reader_for(protocol)
    files = pinned_files(protocol, source_dir)
    for pinned in files.values():
        log(f"hashing {pinned.path} ({_size(pinned.path)})")
        verify_hash(pinned)
    passages, corpus_record = None, None
    corpus_role = reader.row_format.corpus_role
    if corpus_role is not None:
        for role, pinned in files.items():
            require_array(pinned, "corpus" if role == corpus_role else "question")
        log(f"reading the passages of {files[corpus_role].path}")
        passages = read_corpus(files[corpus_role], reader.row_format.document_prefix)
    selected, file_rows = select_cohort(protocol, files, reader, log)
    if passages is not None:
        questions = ", ".join(str(files[role].path) for role in files if role != corpus_role)
        corpus_record = check_gold(passages, selected, reader, questions)
        file_rows = {**file_rows, corpus_role: passages.entries}
    source = build_source(protocol, file_rows, selected, reader, passages, corpus_record)
    source_digest = digest(source)
    log(f"building the graph over {source['counts']['documents']} documents")
    graph = graph_builder(source, source_digest)
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
    }


def select_cohort(
    protocol: dict, files: Mapping[str, PinnedFile], reader: RowReader,
    log: Callable[[str], None] = lambda line: None,
) -> tuple[dict[str, list[dict]], dict[str, int]]:
    """Selected full rows per split (in selection order) and the row count of each file.

    Two streamed passes per file: the first validates every row and keeps only its selection
    fields (id, question and stratum: the official files are too large to hold whole), the
    second keeps the chosen rows.
    """
    selection = protocol["selection"]
    # files in selection order, not set order: with a hash-seeded set, which file's error is
    # reported first (and the order of work) would change from run to run
    roles = dict.fromkeys(selection["splits"][split]["source"] for split in selection["order"])
    selection_fields: dict[str, list[dict]] = {}
    for role in roles:
        log(f"reading ids and questions of {files[role].path}")
        selection_fields[role] = [reader.selection_fields(row) for row in _rows(files[role], reader)]
    chosen_ids: dict[str, list[str]] = {}
    taken_questions: list[str] = []
    for split in selection["order"]:
        spec = selection["splits"][split]
        counts = ALL if spec["counts"] == ALL else {reader.count_key(key): n for key, n in spec["counts"].items()}
        pool = selection_fields[spec["source"]]
        try:
            rows = select_rows(pool, counts, selection["seed"], taken_questions, stratum=reader.stratum)
        except RefusedInput as exc:
            raise type(exc)(f"{files[spec['source']].path}: split {split!r}: {exc}") from None
        chosen_ids[split] = [row["id"] for row in rows]
        taken_questions.extend(row["question"] for row in rows)
        log(f"selected {len(rows)} {split} rows of {len(pool)} in {files[spec['source']].path.name}")
    compare_expected(selection.get("expected_ids"), chosen_ids)
    chosen_rows = _read_chosen(files, selection, chosen_ids, reader, log)
    row_counts = {role: len(rows) for role, rows in selection_fields.items()}
    return chosen_rows, row_counts | _row_counts_of_unused_files(files, selection_fields, reader, log)


def _rows(pinned: PinnedFile, reader: RowReader) -> Iterator[dict]:
    """Every row of a pinned file, each validated whole by the row format."""
    for where, row in stream_rows(pinned):
        reader.validate(row, where)
        yield row


def compare_expected(expected: Mapping[str, Any] | None, chosen: Mapping[str, list[str]]) -> None:
    """Stop on any difference from the protocol's published ids (null means none published)."""
    if expected is None:
        return
    for split, ids in expected.items():
        if ids is None:
            continue
        if ids != chosen[split]:
            missing = sorted(set(ids) - set(chosen[split]))
            extra = sorted(set(chosen[split]) - set(ids))
            raise SelectionMismatch(
                f"selection of split {split!r} differs from the protocol's expected_ids: "
                f"{len(missing)} expected id(s) not selected {missing[:5]}, "
                f"{len(extra)} selected id(s) not expected {extra[:5]}"
            )


def _read_chosen(
    files: Mapping[str, PinnedFile], selection: dict, chosen_ids: Mapping[str, list[str]],
    reader: RowReader, log: Callable[[str], None],
) -> dict[str, list[dict]]:
    wanted: dict[str, dict[str, str]] = {}
    for split, ids in chosen_ids.items():
        role = selection["splits"][split]["source"]
        for row_id in ids:
            wanted.setdefault(role, {})[row_id] = split
    found: dict[str, dict[str, dict]] = {split: {} for split in chosen_ids}
    for role, ids in wanted.items():
        log(f"reading the {len(ids)} selected rows of {files[role].path}")
        for row in _rows(files[role], reader):
            row_id = reader.selection_fields(row)["id"]
            if row_id in ids:
                found[ids[row_id]][row_id] = row
    return {split: [found[split][row_id] for row_id in chosen_ids[split]] for split in selection["order"]}


def _row_counts_of_unused_files(
    files: Mapping[str, PinnedFile], read: Mapping[str, list], reader: RowReader,
    log: Callable[[str], None],
) -> dict[str, int]:
    """Row counts of pinned files no split draws from (hashed, but counted only for provenance)."""
    counts = {}
    for role, pinned in files.items():
        if role not in read and role != reader.row_format.corpus_role:  # the corpus is counted as read
            log(f"counting the rows of {pinned.path} (no split draws from it)")
            counts[role] = sum(1 for _ in _rows(pinned, reader))
    return counts


def _size(path: Path) -> str:
    size = path.stat().st_size if path.is_file() else 0
    return f"{size / 2**20:.1f} MiB"
