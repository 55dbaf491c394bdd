"""The report at a glance: the answer box, the primary pair's largest wins and losses, and flat rows.

Everything here is a pure function of the public report and the fixture's judgments, computed by
export into the public report's `glance` block and the files beside it, so `audit --public`
renders it again and compares bytes like every other table.

The answer box states the primary contrast (the confirmatory contrast on the first contrast metric)
in one sentence and one verdict word, chosen by the fixed rule of evaluator/numbers/verdicts.py
(docs/reports.md, "At a glance"), with p, interval and detectable effect those of the protocol's
primary unit (query unless it declares cluster); p is Holm's where the contrast is in a corrected
family (named so in the box). The box also gives the smallest p the test could reach on this
cohort, and one line when the interval and the test disagree.

Wins and losses: the WINS_LOSSES_SHOWN queries with the largest delta (candidate − baseline on the
same metric) of each sign, largest |delta| first, ties by query id; each with the rank each method
gave each relevant (gold) passage. The public report names passages by id only; the question text
and gold titles are written to the text folder (`questions.md`, outside_inputs.py), never into
public.json, .md or .html.

Flat rows: one line per (query, method) with every metric, `PUBLIC.rows.csv` and
`PUBLIC.rows.jsonl`, loadable as a table with no reshaping.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluator.numbers.verdicts import (
    ALPHA,
    EARLIER_RULE,
    RULE,
    SMALLEST_EFFECT,
    disagreement,
    reachable_p,
    unit_numbers,
    verdict,
    verdict_p,
)
from evaluator.views import contrast_text
from evaluator.views.about import SYNTHETIC_NOTE
from evaluator.views.edition import edition
from evaluator.views.tables import Cell, Num, Table, metric_label, num, p_format

WINS_LOSSES_SHOWN = 5
# the answer box on the corpus the lab generates (edition 1): its verdict is about invented text
SYNTHETIC_WARNING = ("Synthetic corpus: this shows the machinery, not a finding. Real rows: `make demo-sample`; "
                     "the result on held-out questions: README.md, \"What it answers\".")
ROW_KEYS = ("query_id", "method", "category", "hop", "retrieved")


# ------------------------------------------------------------------ the block in public.json


def primary_index(public: Mapping) -> int | None:
    """Index in statistics.contrasts of the confirmatory contrast on the first contrast metric."""
    stats = public.get("statistics") or {}
    metric = public["evaluation"]["contrast_metrics"][0]
    for i, c in enumerate(stats.get("contrasts") or []):
        if c["label"] != "exploratory" and c["metric"] == metric:
            return i
    return None


def permutations(public: Mapping) -> int:
    return public["statistics"]["randomization"]["permutations"]


def answer(public: Mapping, limits: bool = True) -> dict | None:
    """The box's numbers and verdict. `limits=False` derives a box exported before the rule knew the
    smallest reachable p (no `smallest_p`, no `disagreement`; docs/reports.md)."""
    index = primary_index(public)
    if index is None:
        return None
    stats = public["statistics"]
    unit = contrast_text.primary_unit(stats)
    contrast = stats["contrasts"][index]
    if not limits:
        return {"contrast": index, "unit": unit, "verdict": verdict(contrast, unit), "alpha": ALPHA,
                "smallest_effect": SMALLEST_EFFECT, "rule": EARLIER_RULE}
    count = permutations(public)
    return {"contrast": index, "unit": unit, "verdict": verdict(contrast, unit, count), "alpha": ALPHA,
            "smallest_effect": SMALLEST_EFFECT, "smallest_p": reachable_p(contrast, unit, count),
            "disagreement": disagreement(contrast, unit, count), "rule": RULE}


def gold_order(query: Mapping) -> list[str]:
    """The query's relevant passages: evidence-chain order first, then any other by id."""
    relevant = {d for d, g in query["judgments"].items() if g > 0}
    chain = [d for d in dict.fromkeys(query.get("evidence_chain") or []) if d in relevant]
    return chain + sorted(relevant - set(chain))


def wins_losses(public: Mapping, queries: Mapping[str, Mapping]) -> dict | None:
    index = primary_index(public)
    if index is None:
        return None
    c = public["statistics"]["contrasts"][index]
    metric, tolerance = c["metric"], public["evaluation"]["tie_tolerance"]
    rows = {(r["query_id"], r["method"]): i for i, r in enumerate(public["rows"])}
    found = []
    for q in sorted(public["plan"]["queries"]):
        cand, base = rows[(q, c["candidate"])], rows[(q, c["baseline"])]
        delta = public["rows"][cand]["metrics"][metric] - public["rows"][base]["metrics"][metric]
        found.append((q, delta, cand, base))
    wins = sorted((f for f in found if f[1] > tolerance), key=lambda f: (-f[1], f[0]))[:WINS_LOSSES_SHOWN]
    losses = sorted((f for f in found if f[1] < -tolerance), key=lambda f: (f[1], f[0]))[:WINS_LOSSES_SHOWN]

    def entry(kind, q, delta, cand, base):
        rankings = {side: public["rows"][i]["ranking"] for side, i in (("candidate", cand), ("baseline", base))}
        gold = [{"document_id": d, **{f"{side}_rank": (ranking.index(d) + 1 if d in ranking else None)
                                      for side, ranking in rankings.items()}}
                for d in gold_order(queries[q])]
        return {"kind": kind, "query_id": q, "category": public["rows"][cand]["category"], "delta": delta,
                "candidate_row": cand, "baseline_row": base, "gold": gold}

    return {"contrast": index, "metric": metric, "shown": WINS_LOSSES_SHOWN,
            "wins": sum(1 for f in found if f[1] > tolerance), "losses": sum(1 for f in found if f[1] < -tolerance),
            "questions": [entry("win", *f) for f in wins] + [entry("loss", *f) for f in losses]}


def block(public: Mapping, fixture: Mapping, limits: bool = True) -> dict:
    queries = {q["id"]: q for q in fixture["source"]["queries"]}
    return {"answer": answer(public, limits), "wins_losses": wins_losses(public, queries)}


# ------------------------------------------------------------------ sections of public.md / .html


@dataclass(frozen=True)
class Prose:
    """A section of running text whose numbers are `Num`s (bound in the HTML like table cells)."""

    id: str
    title: str
    parts: tuple
    strong: str = ""  # the verdict, shown first and emphasised
    note: str = ""  # plain text under the sentence
    warning: str = ""  # said before the verdict, as prominently (the synthetic corpus)
    question: str = ""  # the question the verdict answers, asked first (edition 2)
    code: bool = False  # `quoted` text reads as code in the HTML (edition 2)

    def markdown(self) -> str:
        text = Cell(self.parts).text()
        lead = f"**{self.strong}.** " if self.strong else ""
        warning = [f"> **{self.warning}**", ">"] if self.warning else []
        question = [f"> **Question: {self.question}**", ">"] if self.question else []
        return "\n".join([f"## {self.title}", "", *warning, *question, f"> {lead}{text}", "",
                          *([self.note, ""] if self.note else [])])

    def html(self) -> str:
        from evaluator.views.tables import _html_part

        def escaped(text: str) -> str:
            out = html.escape(text)
            return re.sub(r"`([^`]+)`", r"<code>\1</code>", out) if self.code else out

        body = "".join(_html_part(p) for p in self.parts)
        lead = f"<strong>{html.escape(self.strong)}.</strong> " if self.strong else ""
        note = f'<p class="note">{escaped(self.note)}</p>' if self.note else ""
        warning = f"<strong>{escaped(self.warning)}</strong><br>" if self.warning else ""
        if self.question:
            warning += f"<strong>Question: {escaped(self.question)}</strong><br>"
        return (f'<section id="{html.escape(self.id)}" class="answer"><h2>{html.escape(self.title)}</h2>'
                f'<p class="answer">{warning}{lead}{body}</p>{note}</section>')


def _pair(document: Mapping, path: tuple, fmt: str) -> tuple:
    low, high = document
    return ("[", Num((*path, 0), low, fmt), ", ", Num((*path, 1), high, fmt), "]")


def answer_section(public: Mapping) -> Prose | None:
    box = (public.get("glance") or {}).get("answer")
    if not box:
        return None
    i, unit = box["contrast"], box["unit"]
    c = public["statistics"]["contrasts"][i]
    where = ("statistics", "contrasts", i) + (("cluster",) if unit == "cluster" else ())
    numbers = unit_numbers(c, unit)
    parts: list = [f"{c['candidate']} − {c['baseline']} on {metric_label(c['metric'])} ({c['label']}, "
                   f"{c['queries']} queries): mean delta ",
                   Num(("statistics", "contrasts", i, "mean_delta"), c["mean_delta"], "+.3f"),
                   f", {public['statistics']['confidence']:.0%} interval ",
                   *_pair(numbers["interval"], (*where, "interval"), "+.3f"),
                   f" ({unit} level), "]
    name, key = verdict_p(c, unit)
    p = numbers.get(key)
    if name != "p":
        name = f"{name} ({c['holm_family']})"
    # below 0.001 the digits say nothing more than "very small": "p < 0.001", as in the tables
    if p is None:
        parts.append(f"{name} n/a")
    elif p < 0.001:
        parts.append(f"{name} < 0.001")
    else:
        parts += [f"{name} = ", Num((*where, key), p, ".3g")]
    effect = numbers.get("detectable_effect")
    parts += ["; this cohort can detect effects of about ±", Num((*where, "detectable_effect"), effect, ".3f")] \
        if effect is not None else ["; no detectable effect can be estimated"]
    least = box.get("smallest_p")  # absent from boxes exported before the rule read it
    if least is not None and least > box["alpha"]:
        parts += ["; the smallest p the test can reach on this cohort is ",
                  Num(("glance", "answer", "smallest_p"), least, ".3g")]
    parts.append(".")
    second = edition(public) >= 2
    if second:
        parts += board_link(public, c)
    data = (public.get("about") or {}).get("data")  # absent from reports exported before it existed
    why = f"{box['disagreement']} " if box.get("disagreement") else ""
    note = why + (f"Data: {data}. " if data else "") + f"Verdict rule: {box['rule']}."
    warning = SYNTHETIC_WARNING if edition(public) and data == SYNTHETIC_NOTE else ""
    question = f"does {c['candidate']} beat {c['baseline']} on {metric_label(c['metric'])}?" if second else ""
    return Prose("answer", "Answer", tuple(parts), strong=box["verdict"], note=note, warning=warning,
                 question=question, code=second)


def board_link(public: Mapping, contrast: Mapping) -> list:
    """Edition 2: the same pair's p on the leaderboard below, Holm-adjusted over all its pairs, so
    the two p a reader meets for one pair are read together (the box's p is the confirmatory test's)."""
    board = public.get("leaderboard")
    if not board or board["settings"]["metric"] != contrast["metric"]:
        return []
    pair = {frozenset((contrast["candidate"], contrast["baseline"]))}
    found = [j for j, p in enumerate(board["pairs"]) if frozenset((p["better"], p["worse"])) in pair]
    if not found:
        return []
    j = found[0]
    holm = board["pairs"][j]["p_value_holm"]
    return [f" On the leaderboard below, where every pair of its {board['pairs_tested']} is tested and Holm-adjusted "
            f"together, this pair's p is ", Num(("leaderboard", "pairs", j, "p_value_holm"), holm,
                                                p_format(holm, board["settings"]["alpha"])),
            " (" + ("separated" if board["pairs"][j]["separated"] else "not separated") + ")."]


def rank_cell(public: Mapping, path: tuple, gold: Sequence[Mapping]) -> Cell:
    """`c / b` per gold passage (rank under candidate / baseline, – when absent), joined by `;`."""
    parts: list = []
    for g, passage in enumerate(gold):
        if g:
            parts.append("; ")
        for s, side in enumerate(("candidate_rank", "baseline_rank")):
            if s:
                parts.append(" / ")
            value = passage[side]
            parts.append(Num((*path, g, side), value, "d") if value is not None else "–")
    return Cell(tuple(parts))


def wins_losses_table(public: Mapping) -> Table | None:
    block_ = (public.get("glance") or {}).get("wins_losses")
    if not block_ or not block_["questions"]:
        return None
    c = public["statistics"]["contrasts"][block_["contrast"]]
    metric = block_["metric"]
    t = Table("wins-losses", f"Largest wins and losses: {c['candidate']} − {c['baseline']}, {metric_label(metric)}",
              ["query", "kind", "category", "delta", f"{c['candidate']}", f"{c['baseline']}",
               "gold passages: rank (candidate / baseline)"],
              note=(f"{block_['wins']} wins and {block_['losses']} losses over the cohort; the {block_['shown']} largest "
                    f"of each, by |delta|. Gold passages in evidence-chain order; – = not retrieved. Question "
                    f"text and gold titles are not part of the public report: export writes them to "
                    f"public.text/questions.md."))
    for j, q in enumerate(block_["questions"]):
        path = ("glance", "wins_losses", "questions", j)
        t.add(q["query_id"], q["kind"], q["category"], num(public, *path, "delta", fmt="+.3f"),
              num(public, "rows", q["candidate_row"], "metrics", metric),
              num(public, "rows", q["baseline_row"], "metrics", metric),
              rank_cell(public, (*path, "gold"), q["gold"]))
    return t


# ------------------------------------------------------------------ files beside the public report


def extra_paths(stem: Path) -> dict[str, Path]:
    return {"rows_csv": Path(f"{stem}.rows.csv"), "rows_jsonl": Path(f"{stem}.rows.jsonl")}


def metric_names(public: Mapping) -> list[str]:
    first = public["rows"][0]["metrics"] if public["rows"] else {}
    return list(first)


def flat_rows(public: Mapping) -> list[dict]:
    """One dict per (query, method), sorted by query id then method: the identifying columns, the
    number of documents retrieved, then every metric."""
    names = metric_names(public)
    out = []
    for row in sorted(public["rows"], key=lambda r: (r["query_id"], r["method"])):
        out.append({"query_id": row["query_id"], "method": row["method"], "category": row["category"],
                    "hop": row["hop"], "retrieved": len(row["ranking"]),
                    **{name: row["metrics"][name] for name in names}})
    return out


def rows_csv(rows: Sequence[Mapping]) -> bytes:
    if not rows:
        return b""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(rows[0]))
    for row in rows:
        writer.writerow([repr(v) if isinstance(v, float) else v for v in row.values()])
    return buffer.getvalue().encode("utf-8")


def rows_jsonl(rows: Sequence[Mapping]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows).encode("utf-8")


def row_files(public: Mapping, paths: Mapping[str, Path]) -> dict[str, tuple[Path, bytes]]:
    rows = flat_rows(public)
    return {"csv": (paths["rows_csv"], rows_csv(rows)), "jsonl": (paths["rows_jsonl"], rows_jsonl(rows))}


def readable_files(public: Mapping, source: Mapping) -> dict[str, bytes]:
    """`questions.md` for the text folder: the wins and losses with question text and gold titles."""
    block_ = (public.get("glance") or {}).get("wins_losses")
    if not block_:
        return {}
    c = public["statistics"]["contrasts"][block_["contrast"]]
    queries = {q["id"]: q for q in source["queries"]}
    titles = {d["id"]: d["title"] for d in source["documents"]}
    lines = [f"# Wins and losses: {c['candidate']} − {c['baseline']}, {metric_label(block_['metric'])}", "",
             "The questions of the public report's wins-and-losses table, with their text and the titles of their "
             "gold passages (rank under each method; – = not retrieved). This file holds dataset text: see "
             "LICENSE.md beside it.", ""]
    for q in block_["questions"]:
        lines += [f"## {q['kind']}: {q['query_id']} ({q['category']}, delta {q['delta']:+.3f})", "",
                  queries[q["query_id"]]["question"], ""]
        for g in q["gold"]:
            ranks = [str(g[f"{side}_rank"]) if g[f"{side}_rank"] is not None else "–" for side in ("candidate", "baseline")]
            lines.append(f"- {titles.get(g['document_id'], g['document_id'])}: {c['candidate']} {ranks[0]}, "
                         f"{c['baseline']} {ranks[1]}")
        lines.append("")
    return {"questions.md": "\n".join(lines).encode("utf-8")}
