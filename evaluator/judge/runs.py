"""External runs: read a TREC or JSONL run file, refuse what cannot be judged, order each ranking.

Formats (docs/external.md):
- TREC: `query_id Q0 document_id rank score tag`, whitespace-separated, one hit per line (the
  format trec_eval, ir_measures and ranx read). The rank and tag columns are read but not used.
- JSONL: one object per line, `{"query_id": str, "document_id": str, "score": number}` (a file
  whose name ends in `.jsonl`, or whose first non-blank character is `{`).

Refused, all counted in one message (exit 2): malformed lines; query ids that are not in the
campaign's cohort; documents not in the campaign's corpus; a document listed twice in one query's
ranking; scores that are not numbers or not finite. A cohort query the run does not mention is
judged as an empty ranking, and counted.

Ordering (TIE_RULE): score descending, then document id ascending (Python string order). The lab's
own exported runs carry rank-derived scores (n + 1 - rank, no two equal), so judging one
reproduces its ranking exactly. Each ranking is cut at the protocol's evaluation depth; the hits
beyond it are counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ground.errors import RefusedInput

TIE_RULE = ("score descending, then document id ascending (Python string order); the rank column of a TREC "
            "run is not used")
# trec_eval (and ir_measures, ranx, which follow it) break equal scores the other way
TREC_EVAL_TIE_RULE = "score descending, then document id descending (trec_eval's order, and ir_measures')"
# each kind of refusal counted, in the singular when there is one ("1 malformed line")
SINGULAR = {"malformed lines": "malformed line", "documents not in the corpus": "document not in the corpus",
            "duplicate documents in one ranking": "duplicate document in one ranking",
            "empty run files": "empty run file", "non-numeric or non-finite scores": "non-numeric or non-finite score",
            "query ids not in the campaign's cohort": "query id not in the campaign's cohort"}
SHOWN = 3  # examples shown per kind of refusal


class RunRefused(RefusedInput):
    """A run file (or a retriever's answers) that cannot be judged as given."""


@dataclass(frozen=True)
class Hit:
    query_id: str
    document_id: str
    score: object  # as read; checked by `group`
    line: int
    text: bool = False  # a TREC column: the score is text to parse (in JSON a string is not a number)


@dataclass
class Problems:
    """Every refusal found, by kind, with a few examples each."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, example: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        shown = self.examples.setdefault(kind, [])
        if len(shown) < SHOWN:
            shown.append(example)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def message(self) -> str:
        return "; ".join(f"{n} {kind if n != 1 else SINGULAR.get(kind, kind)} (e.g. {', '.join(self.examples[kind])})"
                         for kind, n in self.counts.items())


def is_jsonl(path: Path, text: str) -> bool:
    return path.suffix == ".jsonl" or text.lstrip().startswith("{")


def read_hits(path: Path) -> tuple[str, list[Hit], Problems]:
    """(format, hits in file order, malformed lines) of a run file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RunRefused(f"run file not found: {path}") from None
    except UnicodeDecodeError as exc:
        raise RunRefused(f"run file {path} is not UTF-8 text: {exc}") from None
    problems = Problems()
    hits: list[Hit] = []
    fmt = "jsonl" if is_jsonl(Path(path), text) else "trec"
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if fmt == "trec":
            fields = line.split()
            if len(fields) != 6:
                problems.add("malformed lines", f"line {number}: {len(fields)} fields, a TREC run line has 6")
                continue
            hits.append(Hit(fields[0], fields[2], fields[4], number, text=True))
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add("malformed lines", f"line {number}: not JSON ({exc.msg})")
            continue
        if (not isinstance(value, dict) or not isinstance(value.get("query_id"), str)
                or not isinstance(value.get("document_id"), str) or "score" not in value):
            problems.add("malformed lines", f"line {number}: not an object with string query_id, document_id and a score")
            continue
        hits.append(Hit(value["query_id"], value["document_id"], value["score"], number))
    return fmt, hits, problems


def score_value(raw: object, text: bool = False) -> float | None:
    """The score as a finite float, or None when it is not a number or not finite (booleans and
    strings in JSON are not numbers; a TREC score is text, parsed)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        if not text:
            return None
        try:
            value = float(raw)
        except ValueError:
            return None
    elif isinstance(raw, (int, float)):
        value = float(raw)
    else:
        return None
    return value if math.isfinite(value) else None


def group(hits: Iterable[Hit], cohort: Sequence[str] | set[str], documents: Mapping | set,
          problems: Problems | None = None) -> tuple[dict[str, list[tuple[str, float]]], Problems]:
    """Hits by query, each checked: query in the cohort, document in the corpus, once per ranking,
    a finite numeric score. Returns the grouped (document, score) pairs and every problem found."""
    problems = problems if problems is not None else Problems()
    cohort = set(cohort)
    by_query: dict[str, list[tuple[str, float]]] = {}
    seen: dict[str, set[str]] = {}
    for hit in hits:
        where = f"line {hit.line}" if hit.line else f"query {hit.query_id}"
        if hit.query_id not in cohort:
            problems.add("query ids not in the campaign's cohort", f"{where}: {hit.query_id}")
            continue
        if hit.document_id not in documents:
            problems.add("documents not in the corpus", f"{where}: {hit.document_id}")
            continue
        mine = seen.setdefault(hit.query_id, set())
        if hit.document_id in mine:
            problems.add("duplicate documents in one ranking", f"{where}: {hit.document_id} again for {hit.query_id}")
            continue
        mine.add(hit.document_id)
        score = score_value(hit.score, hit.text)
        if score is None:
            problems.add("non-numeric or non-finite scores", f"{where}: {hit.score!r}")
            continue
        by_query.setdefault(hit.query_id, []).append((hit.document_id, score))
    return by_query, problems


def ordered(pairs: Sequence[tuple[str, float]]) -> list[str]:
    """Document ids by TIE_RULE."""
    return [doc for doc, _ in sorted(pairs, key=lambda p: (-p[1], p[0]))]


def trec_eval_ordered(pairs: Sequence[tuple[str, float]]) -> list[str]:
    """Document ids by TREC_EVAL_TIE_RULE (two stable sorts: id descending, then score descending)."""
    by_id = sorted(pairs, key=lambda p: p[0], reverse=True)
    return [doc for doc, _ in sorted(by_id, key=lambda p: -p[1])]


@dataclass(frozen=True)
class Rankings:
    """What is judged: one ranking per cohort query (empty when the run has none), cut at `depth`."""

    rankings: dict[str, list[str]]
    missing: list[str]  # cohort queries the run does not mention
    beyond_depth: int  # hits cut off below the depth
    hits: int  # hits read and accepted
    # queries with two equal scores: their ranking by TREC_EVAL_TIE_RULE, cut at `depth`
    trec_eval_order: dict[str, list[str]] = field(default_factory=dict)


def rankings(by_query: Mapping[str, Sequence[tuple[str, float]]], cohort: Sequence[str], depth: int) -> Rankings:
    out, cut, other = {}, 0, {}
    for q in sorted(cohort):
        pairs = by_query.get(q, [])
        full = ordered(pairs)
        cut += max(0, len(full) - depth)
        out[q] = full[:depth]
        if len({score for _, score in pairs}) < len(pairs):
            other[q] = trec_eval_ordered(pairs)[:depth]
    missing = [q for q in sorted(cohort) if q not in by_query]
    return Rankings(out, missing, cut, sum(len(v) for v in by_query.values()), other)


def read_run(path: Path, cohort: Sequence[str], documents: Mapping | set, depth: int) -> tuple[str, Rankings]:
    """Read, check and order a run file; refuse (RunRefused, every problem counted) when any check fails."""
    fmt, hits, problems = read_hits(path)
    by_query, problems = group(hits, cohort, documents, problems)
    if not hits and not problems:
        problems.add("empty run files", str(path))
    if problems:
        raise RunRefused(f"refusing run {path}: {problems.message()}")
    return fmt, rankings(by_query, cohort, depth)


def trec_text(rankings_: Mapping[str, Sequence[str]], scores: Mapping[str, Sequence[float]] | None, tag: str) -> str:
    """A TREC run of the rankings (scores: the given ones, else rank-derived n + 1 - rank), its scores
    strictly decreasing with rank: a score equal to (or above) the one before it is written as the
    next float below that one, so trec_eval, ir_measures and ranx, which break ties their own way,
    read the lab's order and reproduce its figures."""
    lines = []
    for q in sorted(rankings_):
        ranking = rankings_[q]
        previous = math.inf
        for rank, doc in enumerate(ranking, start=1):
            score = scores[q][rank - 1] if scores is not None else len(ranking) + 1 - rank
            if score >= previous:
                score = math.nextafter(float(previous), -math.inf)
            previous = score
            lines.append(f"{q} Q0 {doc} {rank} {score!r} {tag}" if isinstance(score, float)
                         else f"{q} Q0 {doc} {rank} {score} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")
