"""The frozen selection (DESIGN §4 and §4.1): `musique_identifier_strata_v1` and
`identifier_type_strata_v1` are one rule over different strata.

Within each stratum (MuSiQue: the hop read off the id; HotpotQA and 2WikiMultihopQA: the row's
type), rows are ordered by (digest([seed, row_id]), row_id) and the first N are taken. The order
depends only on the seed and the ids, so anyone holding the official files can reproduce the
published cohort without running this code.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from protocols.artifacts import hop_category
from protocols.canonical import digest
from protocols.errors import RefusedInput


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
    counts: Mapping[Hashable, int],
    seed: str,
    excluded_questions: Iterable[str] = (),
    stratum: Callable[[Mapping[str, Any]], Hashable] = hop_stratum,
) -> list[Mapping[str, Any]]:
    """Choose counts[s] rows per stratum s; return them sorted by id.

    Rows need `id`, `question` and what `stratum` reads (MuSiQue's hop by default: `answerable`;
    `type_stratum`: `type`). Rows whose question (stripped, casefolded) is in
    `excluded_questions` are skipped, as are rows of a stratum `counts` does not name; a stratum
    with too few rows, a duplicate row id or a question repeated among the chosen rows is refused.
    """
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


def _refuse_repeated_questions(chosen: list[Mapping[str, Any]]) -> None:
    first: dict[str, str] = {}
    for row in sorted(chosen, key=lambda r: r["id"]):
        key = question_key(row["question"])
        if key in first:
            raise SelectionError(
                f"question repeated in the cohort: rows {first[key]!r} and {row['id']!r} both ask {row['question']!r}"
            )
        first[key] = row["id"]
