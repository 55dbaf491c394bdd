"""The frozen selection (docs/design.md §4 and §4.1): `musique_identifier_strata_v1` and
`identifier_type_strata_v1` are one rule over different strata.

Within each stratum (MuSiQue: the hop read off the id; HotpotQA and 2WikiMultihopQA: the row's
type), rows are ordered by (digest([seed, row_id]), row_id) and the first N are taken. The order
depends only on the seed and the ids, so anyone holding the official files can reproduce the
published cohort without running this code.

A split's counts may instead be "all" (the full-scale protocol): every eligible row of every
stratum. A cohort never repeats a question, so under "all" a row whose question (stripped,
casefolded) was already taken, earlier in the same (digest, id) order within the whole file, is
skipped rather than refused: the official MuSiQue-Ans dev file asks six questions twice, so "all"
selects 2,411 of its 2,417 rows. Fixed counts keep refusing a repeated question.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from ground.artifacts import ALL_ROWS as ALL  # a split's counts "all": every eligible row
from ground.artifacts import hop_category
from ground.canonical import digest
from ground.errors import RefusedInput


class SelectionError(RefusedInput):
    """The rows cannot yield the frozen selection (too few, repeated question, bad row)."""


def question_key(question: str) -> str:
    """What makes two questions "the same" across splits: stripped and casefolded text."""
    return question.strip().casefold()


def row_stratum(row: Mapping[str, Any], where: str = "") -> tuple[int, str]:
    """(hop, category) of an answerable row; refuses non-answerable rows and unknown prefixes."""
    row_id = row.get("id")
    label = f"{where}: " if where else ""
    if not isinstance(row_id, str):
        raise SelectionError(f"{label}row has no string id")
    if row.get("answerable") is not True:
        raise SelectionError(f"{label}row {row_id!r} is not answerable (every row must be answerable)")
    strata = hop_category(row_id)
    if strata is None:
        raise SelectionError(
            f"{label}row {row_id!r} has an unknown hop prefix (expected 2hop, 3hop1, 3hop2, 4hop1, 4hop2 or 4hop3)"
        )
    return strata


def hop_stratum(row: Mapping[str, Any]) -> int:
    """MuSiQue's stratum: the hop of an answerable row (rows need `id` and `answerable`)."""
    return row_stratum(row)[0]


def type_stratum(row: Mapping[str, Any]) -> str:
    """HotpotQA's and 2WikiMultihopQA's stratum: the row's `type` (rows need `id` and `type`)."""
    row_type = row.get("type")
    if not isinstance(row_type, str):
        raise SelectionError(f"row {row.get('id')!r} has no string type")
    return row_type


def selection_key(seed: str, row_id: str) -> tuple[str, str]:
    return digest([seed, row_id]), row_id


def select_rows(
    rows: Iterable[Mapping[str, Any]],
    counts: Mapping[Hashable, int] | str,
    seed: str,
    excluded_questions: Iterable[str] = (),
    stratum: Callable[[Mapping[str, Any]], Hashable] = hop_stratum,
) -> list[Mapping[str, Any]]:
    """Choose counts[s] rows per stratum s (or every row, with counts "all"); return them sorted
    by id.

    Rows need `id`, `question` and what `stratum` reads (MuSiQue's hop by default: `answerable`;
    `type_stratum`: `type`). Rows whose question (stripped, casefolded) is in
    `excluded_questions` are skipped, as are rows of a stratum `counts` does not name; a stratum
    with too few rows, a duplicate row id or a question repeated among the chosen rows is refused.
    """
    if isinstance(counts, str):
        if counts != ALL:
            raise SelectionError(f"counts are a mapping or {ALL!r}, not {counts!r}")
        return _select_all(rows, seed, excluded_questions, stratum)
    excluded = {question_key(q) for q in excluded_questions}
    strata: dict[Hashable, list[tuple[tuple[str, str], Mapping[str, Any]]]] = {key: [] for key in counts}
    seen_ids: set[str] = set()
    for row in rows:
        key = stratum(row)
        if row["id"] in seen_ids:
            raise SelectionError(f"row id {row['id']!r} appears twice")
        seen_ids.add(row["id"])
        if not isinstance(row.get("question"), str):
            raise SelectionError(f"row {row['id']!r} has no string question")
        if key not in strata or question_key(row["question"]) in excluded:
            continue
        strata[key].append((selection_key(seed, row["id"]), row))
    chosen: list[Mapping[str, Any]] = []
    for key, wanted in sorted(counts.items()):
        candidates = strata[key]
        if len(candidates) < wanted:
            label = f"{key}-hop" if isinstance(key, int) else repr(key)
            raise SelectionError(
                f"stratum {label} has {len(candidates)} eligible rows, {wanted} requested"
            )
        candidates.sort(key=lambda pair: pair[0])
        chosen.extend(row for _, row in candidates[:wanted])
    _refuse_repeated_questions(chosen)
    return sorted(chosen, key=lambda row: row["id"])


def _select_all(
    rows: Iterable[Mapping[str, Any]],
    seed: str,
    excluded_questions: Iterable[str],
    stratum: Callable[[Mapping[str, Any]], Hashable],
) -> list[Mapping[str, Any]]:
    """Every eligible row; of rows asking one question, only the first in (digest, id) order.

    The repeats are dropped first; the rest goes through the counted selection with each
    stratum's count set to all it holds, so every row check (answerable, id, question) is that
    selection's own."""
    rows = list(rows)
    excluded = {question_key(q) for q in excluded_questions}
    well_formed = [r for r in rows if isinstance(r.get("id"), str) and isinstance(r.get("question"), str)]
    first: dict[str, str] = {}
    for row in sorted(well_formed, key=lambda r: selection_key(seed, r["id"])):
        first.setdefault(question_key(row["question"]), row["id"])
    checked = {id(r) for r in well_formed}  # by identity: rows are dicts, and equal rows are still two rows
    kept = [r for r in rows if id(r) not in checked or first[question_key(r["question"])] == r["id"]]
    counts: dict[Hashable, int] = {}
    for row in kept:
        key = stratum(row)
        if isinstance(row.get("question"), str) and question_key(row["question"]) not in excluded:
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        raise SelectionError('counts "all" found no eligible row')
    return select_rows(kept, counts, seed, excluded_questions, stratum=stratum)


def _refuse_repeated_questions(chosen: list[Mapping[str, Any]]) -> None:
    first: dict[str, str] = {}
    for row in sorted(chosen, key=lambda r: r["id"]):
        key = question_key(row["question"])
        if key in first:
            raise SelectionError(
                f"question repeated in the cohort: rows {first[key]!r} and {row['id']!r} both ask {row['question']!r}"
            )
        first[key] = row["id"]
