"""What `lab judge` runs: load and check the campaign, read the run or ask the retriever, judge, and
write the judged report into a new directory (refused if it exists; the campaign is only read)."""

from __future__ import annotations

import sys
from pathlib import Path

from evaluator.export.export import write_bytes
from evaluator.judge import judged_text
from evaluator.judge.judge import Campaign, JudgeRefused, check_name, judge, load_campaign
from evaluator.judge.retriever import ask, check_url
from evaluator.judge.runs import RunRefused, rankings, read_run, trec_text
from evaluator.views.glance import rows_csv, rows_jsonl
from evaluator.views.plotting import standalone
from ground.canonical import sha256_bytes
from ground.errors import CheckFailed
from ground.files import encode, refuse_existing


def query_vectors(campaign: Campaign) -> dict[str, list[float]]:
    from builders.embedding import decode_vector

    return {q["id"]: [float(x) for x in decode_vector(q["vector"])] for q in campaign.fixture["queries"]
            if q["id"] in set(campaign.cohort)}


def from_retriever(campaign: Campaign, url: str, send_vector: bool, timeout: float):
    texts = campaign.queries
    queries = [{"id": q, "text": texts[q]["question"]} for q in campaign.cohort]
    asked = ask(url, queries, campaign.documents, campaign.depth, timeout=timeout,
                vectors=query_vectors(campaign) if send_vector else None,
                space_id=campaign.fixture["space_id"] if send_vector else None)
    ranked = rankings(asked.hits, campaign.cohort, campaign.depth)
    scores = {q: [dict(asked.hits.get(q, []))[d] for d in ranked.rankings[q]] for q in campaign.cohort}
    given = {"kind": "retriever", "source": url, "sha256": None, "format": "loopback_retriever_v1",
             "query_vector": send_vector}
    return ranked, given, {"retriever": asked.summary()}, scores


def judge_command(run_dir: Path, name: str, output: Path, *, run: Path | None = None, retriever: str | None = None,
                  send_vector: bool = False, timeout: float = 30.0, max_failed_share: float = 0.0) -> dict[str, Path]:
    """Judge, write, and return the files written. A retriever whose failed queries exceed
    `max_failed_share` of the cohort is a failed judgment: the report is still written (marked
    `"status": "failed"` in its retriever block) and CheckFailed is raised after, so `lab judge` exits 1."""
    if not 0.0 <= max_failed_share <= 1.0:
        raise JudgeRefused(f"--max-failed-share {max_failed_share:g}: give a share between 0 and 1")
    refuse_existing(output)
    if retriever is not None:
        check_url(retriever)
    campaign = load_campaign(run_dir)
    check_name(name, campaign)
    if run is not None:
        if not Path(run).is_file():
            raise RunRefused(f"run file not found: {run}")
        fmt, ranked = read_run(Path(run), campaign.cohort, campaign.documents, campaign.depth)
        given = {"kind": "run_file", "source": str(run), "sha256": sha256_bytes(Path(run).read_bytes()), "format": fmt}
        extra, scores = {}, None
    elif retriever is not None:
        ranked, given, extra, scores = from_retriever(campaign, retriever, send_vector, timeout)
    else:
        raise JudgeRefused("give --run FILE or --retriever URL")
    judged = {**judge(campaign, name, ranked, given), **extra}
    failed_judgment = None
    if "retriever" in judged:
        failed = judged["retriever"]["failures"]
        judged["retriever"]["max_failed_share"] = max_failed_share
        judged["retriever"]["status"] = "judged"
        if failed > max_failed_share * len(campaign.cohort):
            judged["retriever"]["status"] = "failed"
            failed_judgment = (f"{failed} of {len(campaign.cohort)} queries failed at {retriever} "
                               f"({', '.join(f'{k} {v}' for k, v in judged['retriever']['failures_by_kind'].items())}), "
                               f"more than --max-failed-share {max_failed_share:g} allows: a failed judgment; "
                               f"the report is in {output}, marked failed")
    files = rendered(judged, output)
    files[output / f"{name}.run"] = trec_text(ranked.rankings, scores, name).encode("utf-8")
    refuse_existing(output)
    output.mkdir(parents=True)
    for path, data in files.items():
        write_bytes(path, data)
    failures = (judged.get("retriever") or {}).get("failures")
    print(f"judged {name}: {judged['input']['missing_queries']} of {len(campaign.cohort)} cohort queries with no "
          f"ranking (judged empty)" + (f", {failures} retriever failures" if failures is not None else "")
          + f"; {judged_text.sentence(judged)}", file=sys.stderr)
    if failed_judgment is not None:
        raise CheckFailed(failed_judgment)
    return {str(path.relative_to(output)): path for path in files}


def rendered(judged: dict, output: Path) -> dict[Path, bytes]:
    svgs = judged_text.figures(judged)
    rows = [{"query_id": r["query_id"], "method": judged["name"], "label": judged["label"], "category": r["category"],
             "hop": r["hop"], "retrieved": len(r["ranking"]), **r["metrics"]} for r in judged["rows"]]
    return {output / "judged.json": encode(judged),
            output / "judged.md": judged_text.markdown(judged).encode("utf-8"),
            output / "judged.html": judged_text.page(judged, svgs).encode("utf-8"),
            output / "judged.figures" / "forest.svg": standalone(svgs["forest"]).encode("utf-8"),
            output / "judged.rows.csv": rows_csv(rows), output / "judged.rows.jsonl": rows_jsonl(rows)}
