"""Read a protocol's cohort from its pinned files: the one reading `lab import`, `lab protocol new`
and `lab run` share, so a file refused by one is refused by all three, before anything is written.

Order: every pinned file hashed, the layout checked (a HippoRAG layout's files are JSON arrays and
its corpus is read whole), every row validated by the row format while the splits are selected,
each split checked to hold at least one row, and (HippoRAG layouts) every selected question's gold
matched in the corpus. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ground.errors import RefusedInput
from importer.formats import RowReader, reader_for
from importer.passages import Passages, check_gold, read_corpus, require_array
from importer.reading import PinnedFile, SourceFileError, pinned_files, require_present, stream_rows, verify_hash
from protocols.selection import ALL, select_rows


class SelectionMismatch(RefusedInput):
    """The selection differs from the ids the protocol publishes."""


@dataclass
class Cohort:
    """What the import builds its source from: the selected rows per split and the files' row counts."""

    reader: RowReader
    files: dict[str, PinnedFile]
    selected: dict[str, list[dict]]
    file_rows: dict[str, int]
    passages: Passages | None
    corpus_record: dict | None


def read_cohort(protocol: dict, source_dir: str | Path, log: Callable[[str], None] = lambda line: None) -> Cohort:
    """The protocol's cohort read from `source_dir`; any fault refused (RefusedInput) naming the file."""
    reader = reader_for(protocol)
    files = pinned_files(protocol, source_dir)
    for pinned in files.values():  # every file present before any is hashed: a wrong --data-dir is one line
        require_present(pinned)
    for pinned in files.values():
        log(f"hashing {pinned.path} ({pinned.path.stat().st_size / 2**20:.1f} MiB)")
        verify_hash(pinned)
    passages, corpus_record = None, None
    corpus_role = reader.row_format.corpus_role
    if corpus_role is not None:
        for role, pinned in files.items():
            require_array(pinned, "corpus" if role == corpus_role else "question")
        log(f"reading the passages of {files[corpus_role].path}")
        passages = read_corpus(files[corpus_role], reader.row_format.document_prefix)
    selected, file_rows = select_cohort(protocol, files, reader, log)
    for split, rows in selected.items():
        if not rows:  # an empty file, or "all" over no eligible row: nothing to measure
            source = files[protocol["selection"]["splits"][split]["source"]].path
            raise SourceFileError(f"{source}: split {split!r} selects no question row (the file holds "
                                  f"{file_rows.get(protocol['selection']['splits'][split]['source'], 0)} rows)")
    if passages is not None and corpus_role is not None:  # passages are read for a corpus role only
        questions = ", ".join(str(files[role].path) for role in files if role != corpus_role)
        corpus_record = check_gold(passages, selected, reader, questions)
        file_rows = {**file_rows, corpus_role: passages.entries}
    return Cohort(reader, files, selected, file_rows, passages, corpus_record)


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
    for role, by_id in wanted.items():
        log(f"reading the {len(by_id)} selected rows of {files[role].path}")
        for row in _rows(files[role], reader):
            row_id = reader.selection_fields(row)["id"]
            if row_id in by_id:
                found[by_id[row_id]][row_id] = row
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


