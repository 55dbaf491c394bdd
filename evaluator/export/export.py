"""export: the public report, TREC runs and qrels, and a Markdown summary, from a private report.

Nothing is copied on trust: the rankings are bound to the fixture (every hit's payload is the
fixture document it names), every metric and aggregate is recomputed, and any difference from what
the private report states refuses the export. The public report keeps the hashes that bind what it
strips (texts, vectors, proofs, scope, credentials): the hash chain, page and proof digests and the
digest of the private report itself.

Outputs, from `--output PUBLIC.json`: PUBLIC.json, PUBLIC.runs/<method>.run (TREC run format),
PUBLIC.qrels (TREC qrels), PUBLIC.md (Markdown summary linking the figures in PUBLIC.figures/) and
PUBLIC.html (one self-contained page: the tables and the figures inline). All are refused when any
exists. Every file but PUBLIC.json is a pure function of the public report (and, for the qrels, the
fixture's judgments), and PUBLIC.json records the SHA-256 of each in `outputs`, so the audit can
render them again and compare bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from evaluator.derived import depth
from evaluator.derived.leaderboard_inputs import report_settings, report_stratum
from evaluator.derived.report import (
    DERIVED_KEYS,
    REPORT_FORMAT,
    derive,
    differences,
    document_titles,
    fence_failures,
    repetition_failures,
)
from evaluator.export.outside_inputs import text_dir, text_files
from evaluator.numbers.leaderboard import board
from evaluator.numbers.seal import seal_failures
from evaluator.verification.verify import proof_digest, ranking_digest
from evaluator.views import about, edition, glance, summary
from evaluator.views.figures import public_figures
from evaluator.views.glance import extra_paths, readable_files
from evaluator.views.plotting import standalone
from evaluator.views.published import public_block
from ground.canonical import digest, sha256_bytes
from ground.errors import RefusedInput
from ground.fast_canonical import digest_finite
from ground.files import load_json, refuse_existing, save

PUBLIC_FORMAT = "graph_evaluation_public_v1"


class ExportRefused(RefusedInput):
    """A private report that is failed, unfinished, or inconsistent with itself or the fixture."""


def output_paths(public: str | Path) -> dict[str, Path]:
    public = Path(public)
    stem = public.with_suffix("") if public.suffix == ".json" else public
    return {"public": public, "runs": Path(f"{stem}.runs"), "qrels": Path(f"{stem}.qrels"),
            "summary": Path(f"{stem}.md"), "html": Path(f"{stem}.html"), "figures": Path(f"{stem}.figures"),
            **extra_paths(stem)}


def require_consistent(report: object, fixture: object, report_path: object, refused: type[RefusedInput],
                       doing: str) -> None:
    """Refuses (`refused`, saying what it was `doing`) a report or fixture that is no JSON object,
    a malformed report, or one with `consistency_failures` (the first five named)."""
    if not isinstance(report, dict) or not isinstance(fixture, dict):
        raise refused("report and fixture must be JSON objects")
    try:
        failures = consistency_failures(report, fixture)
    except (KeyError, TypeError, ValueError) as exc:
        raise refused(f"report {report_path} is malformed: {type(exc).__name__}: {exc}") from None
    if failures:
        shown = "; ".join(failures[:5]) + (f"; and {len(failures) - 5} more" if len(failures) > 5 else "")
        raise refused(f"refusing to {doing} {report_path}: {shown}")


def consistency_failures(report: Mapping, fixture: Mapping) -> list[str]:
    """Everything export requires of a private report, as a list of located failures: complete,
    bound to the fixture by its hash chain, one fence throughout, repetitions identical, every row
    bound to its page and the fixture, every number recomputed, every field the one evaluate sealed."""
    if report.get("format") != REPORT_FORMAT:
        return [f"format: {report.get('format')!r} is not {REPORT_FORMAT}"]
    if report.get("status") != "complete":
        failure = (report.get("failure") or {}).get("message")
        return [f"status: the report is {report.get('status')!r}, not complete" + (f" ({failure})" if failure else "")]
    return (chain_failures(report, fixture) + fence_failures(report) + repetition_failures(report)
            + derived_failures(report, fixture) + seal_failures(report))


def chain_failures(report: Mapping, fixture: Mapping) -> list[str]:
    """The hash chain against the given fixture and the report's embedded protocol, plan and state."""
    out = []
    chain = report["hash_chain"]
    if chain.get("fixture") != digest(fixture):
        out.append(f"hash_chain.fixture: {chain.get('fixture')} is not the digest of the given fixture ({digest(fixture)})")
    if chain.get("source") != digest(fixture["source"]):
        out.append("hash_chain.source: not the digest of the fixture's source")
    for name in ("protocol", "plan", "state"):
        if chain.get(name) != digest(report[name]):
            out.append(f"hash_chain.{name}: not the digest of the report's {name}")
    if fixture["source"]["protocol"]["digest"] != digest(report["protocol"]):
        out.append("protocol: not the protocol the fixture's source was imported with")
    return out


def derived_failures(report: Mapping, fixture: Mapping, derived: Mapping | None = None) -> list[str]:
    """Every row bound to its stored page and to the fixture's documents; every per-query metric
    and every derived block recomputed from the rows, jobs, protocol and the fixture's judgments."""
    return row_binding_failures(report, fixture) + derived_block_failures(report, fixture, derived)


def row_binding_failures(report: Mapping, fixture: Mapping) -> list[str]:
    """Every row bound to its stored page (digests, records, scores) and its ranking to the
    fixture's documents (each hit's payload is the document it names)."""
    out = []
    documents = {d["id"]: d for d in fixture["source"]["documents"]}
    for i, row in enumerate(report["rows"]):
        where = f"rows[{i}] (query {row['query_id']}, method {row['method']})"
        page = row["page"]
        if digest(page) != row["page_digest"]:
            out.append(f"{where}.page_digest: not the digest of the stored page")
        if ranking_digest(page) != row["ranking_digest"] or proof_digest(page) != row["proof_digest"]:
            out.append(f"{where}: ranking or proof digest does not match the stored page")
        hits = page.get("hits") or []
        if [h["id"] for h in hits] != row["records"] or [h["score"] for h in hits] != row["scores"]:
            out.append(f"{where}.records: differ from the stored page's hits")
        for rank, (doc_id, hit) in enumerate(zip(row["ranking"], hits), start=1):
            doc = documents.get(doc_id)
            meta = hit["payload"].get("metadata", {})
            if doc is None or meta.get("document_id") != doc_id or hit["payload"].get("content") != doc["text"]:
                out.append(f"{where}.ranking[{rank - 1}]: {doc_id} is not the fixture document of hit {rank}")
                break
        if len(row["ranking"]) != len(hits):
            out.append(f"{where}.ranking: {len(row['ranking'])} documents for {len(hits)} hits")
    return out


def derived_block_failures(report: Mapping, fixture: Mapping, derived: Mapping | None = None) -> list[str]:
    """Every per-query metric and every derived block equal to their recomputation from the rows,
    jobs, protocol and the fixture's judgments (`derived`: that recomputation, when the caller
    already has it)."""
    if derived is None:
        queries = {q["id"]: q for q in fixture["source"]["queries"]}
        derived = derive(report, report["protocol"], queries, document_titles(fixture["source"]))
    out = []
    for i, row in enumerate(report["rows"]):
        key = f"{row['query_id']}|{row['method']}"
        for diff in differences(row["metrics"], derived["row_metrics"][key]):
            out.append(f"rows[{i}] (query {row['query_id']}, method {row['method']}).metrics.{diff}")
    for key in DERIVED_KEYS:
        out.extend(f"{key}.{diff}" for diff in differences(report.get(key), derived[key]))
    return out


def encoder_counts(generation: Mapping, queries: Sequence[str]) -> dict:
    """How many of the corpus's passages and of the cohort's questions the encoder truncated (the
    generation file's per-input flags, bound to the report by its hash chain)."""
    cohort = set(queries)
    asked = [q for q in generation["queries"] if q["id"] in cohort]
    return {"documents": len(generation["documents"]),
            "documents_truncated": sum(1 for d in generation["documents"] if d["truncated"]),
            "queries": len(asked), "queries_truncated": sum(1 for q in asked if q["truncated"])}


def export(report_path, fixture_path, output, *, with_corpus: bool = False, generation_path=None) -> dict[str, Path]:
    """Write the public report and its files; `with_corpus`: also the corpus into PUBLIC.text/;
    `generation_path`: the generation file the report's chain binds, whose truncation counts the
    method table then shows."""
    paths = output_paths(output)
    text = text_dir(paths["public"])
    refuse_existing(*paths.values(), text)
    report = load_json(report_path, "report")
    fixture = load_json(fixture_path, "fixture")
    generation = load_json(generation_path, "generation file") if generation_path is not None else None
    if generation is not None and digest_finite(generation) != (report.get("hash_chain") or {}).get("generation"):
        raise ExportRefused(f"generation file {generation_path} is not the one report {report_path} binds "
                            f"(hash_chain.generation)")
    require_consistent(report, fixture, report_path, ExportRefused, "export")
    public, files = public_outputs(report, fixture, paths, generation=generation)
    texts = text_files(public["plan"]["queries"], fixture["source"], text, with_corpus=with_corpus,
                       extra=readable_files(public, fixture["source"]))
    refuse_existing(*paths.values(), text)
    save(paths["public"], public)
    for path, data in files.items():
        write_bytes(path, data)
    for path, data in texts.items():
        write_bytes(path, data)
    return {**paths, "text": text}


def public_outputs(report: Mapping, fixture: Mapping, paths: Mapping[str, Path], *,
                   leaderboard: bool = True, limits: bool = True,
                   plain: bool = True, generation: Mapping | None = None,
                   view_edition: int = edition.CURRENT) -> tuple[dict, dict[Path, bytes]]:
    """The public report and the bytes of every other file export writes beside it. The public
    report ends with `outputs`: the SHA-256 of each of those files, so it binds them.
    `leaderboard=False` derives a public report exported before it carried its board (the audit
    of such a report: docs/leaderboard.md); `limits=False` one whose answer box predates the smallest
    reachable p (docs/reports.md); `plain=False` one whose `about` block predates `does`.
    `generation`: the encoder's truncation counts in `encoder` (exported without it: no counts).
    `view_edition`: the rendering its pages are drawn with (evaluator/views/edition.py; 0: none named)."""
    core = public_report(report)
    if view_edition:
        core[edition.FIELD] = view_edition
    core["about"] = about.block(report["protocol"], core["plan"]["methods"], report.get("imported_graph"), plain)
    if generation is not None:
        core["encoder"] = encoder_counts(generation, core["plan"]["queries"])
    core["glance"] = glance.block(core, fixture, limits)
    if depth.declared(core):  # only protocols that declare a depth: the others' public report keeps its keys
        core["recall_curve"] = depth.recall_curve(core, fixture)
    board = public_board(core, fixture["source"], view_edition) if leaderboard else None
    if board is not None:
        core["leaderboard"] = board
    figures = public_figures(core)
    sections = summary.public_sections(core, figures)
    heading = summary.title(core)
    figure_dir = paths["figures"]
    files: dict[Path, bytes] = {}
    outputs: dict = {"html": None, "markdown": None, "qrels": None, "runs": {}, "figures": {}}
    for name, svg in figures.items():
        files[figure_dir / f"{name}.svg"] = standalone(svg).encode("utf-8")
        outputs["figures"][name] = sha256_bytes(files[figure_dir / f"{name}.svg"])
    for method in core["plan"]["methods"]:
        files[paths["runs"] / f"{method}.run"] = runs_text(core["rows"], method).encode("utf-8")
        outputs["runs"][method] = sha256_bytes(files[paths["runs"] / f"{method}.run"])
    files[paths["qrels"]] = qrels_text(core["plan"]["queries"], fixture).encode("utf-8")
    outputs["rows"] = {}
    for kind, (path, data) in glance.row_files(core, paths).items():
        files[path] = data
        outputs["rows"][kind] = sha256_bytes(data)
    markdown = summary.markdown(heading, sections, lambda name: f"{figure_dir.name}/{name}.svg")
    files[paths["summary"]] = markdown.encode("utf-8")
    files[paths["html"]] = summary.page(heading, sections, figures).encode("utf-8")
    outputs.update(qrels=sha256_bytes(files[paths["qrels"]]), markdown=sha256_bytes(files[paths["summary"]]),
                   html=sha256_bytes(files[paths["html"]]))
    return {**core, "outputs": outputs}, files


def public_board(core: Mapping, source: Mapping, view_edition: int = 0) -> dict | None:
    """The report's own leaderboard on its primary metric (None with fewer than two methods); from
    edition 1 it names the protocol's question, whose two methods its views mark."""
    if len(core["plan"]["methods"]) < 2:
        return None
    protocol = {"evaluation": core["evaluation"], "protocol_seed": core["plan"]["seed"]}
    metric = core["evaluation"]["contrast_metrics"][0]  # the primary contrast is read on the first
    stratum = report_stratum(core["protocol_version"], [{**core, "protocol": protocol}], source, metric)
    out = board([stratum], report_settings(protocol, metric))
    if view_edition:
        out[edition.FIELD] = view_edition
        primary = core["evaluation"]["primary_contrast"]
        out["question"] = {"candidate": primary["candidate"], "baseline": primary["baseline"]}
    return out


PUBLIC_ROW_KEYS = ("query_id", "category", "hop", "method", "ranking", "scores", "metrics", "page_digest",
                   "ranking_digest", "proof_digest", "payload_bytes", "work", "stop_reasons", "coverage")


def public_report(report: Mapping) -> dict:
    protocol = report["protocol"]
    plan = report["plan"]
    return {
        "format": PUBLIC_FORMAT,
        "protocol_version": report["protocol_version"],
        "private_report_digest": digest(report),
        "hash_chain": report["hash_chain"],
        "evaluation": protocol["evaluation"],
        "methods": protocol["methods"],
        "ranking_profiles_digest": digest(protocol["ranking_profiles"]),
        "space_id": report["space_id"],
        "plan": {k: plan[k] for k in ("seed", "split", "queries", "methods", "repetitions", "warmup", "job_order")},
        "lab": {"lab_id": report["lab"]["lab_id"], "journal_id": report["lab"]["journal_id"]},
        "fences": {"before": report["before"]["fence"], "after": report["after"]["fence"]},
        "store_digests": {"before": report["before"]["store_digest"], "after": report["after"]["store_digest"]},
        "rows": [{k: row[k] for k in PUBLIC_ROW_KEYS} for row in report["rows"]],
        "jobs": report["jobs"],
        **{k: report[k] for k in DERIVED_KEYS},
        "resources": {k: v for k, v in report["resources"].items() if k != "series"},
        "started_at": report["started_at"],
        "finished_at": report["finished_at"],
        # a published cohort (or its twin): the published figures shown beside the lab's (protocols/published.py)
        **({"published": published} if (published := public_block(protocol)) is not None else {}),
        **({"imported_graph": report["imported_graph"]} if "imported_graph" in report else {}),
        # absent from reports written before campaigns recorded them
        **{key: report[key] for key in ("protocol_frozen", "resumed") if key in report},
    }


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def runs_text(rows, method: str) -> str:
    """One TREC run. The score column is rank-derived (n + 1 - rank), not the method's score:
    trec_eval and ir_measures reorder equal scores by document id, and exact ties are common under
    RRF with k = 2, so the real scores would let them evaluate a ranking the lab never returned.
    The methods' own scores stay in the public report's rows."""
    mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["query_id"])
    lines = [f"{row['query_id']} Q0 {doc} {rank} {len(row['ranking']) + 1 - rank} {method}"
             for row in mine for rank, doc in enumerate(row["ranking"], start=1)]
    return "\n".join(lines) + "\n"


def qrels_text(query_ids, fixture: Mapping) -> str:
    wanted = set(query_ids)
    lines = [f"{q['id']} 0 {doc} {grade}" for q in fixture["source"]["queries"] if q["id"] in wanted
             for doc, grade in sorted(q["judgments"].items())]
    return "\n".join(lines) + "\n"
