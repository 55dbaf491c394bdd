"""Pool several datasets' audited campaigns under a suite (docs/suites.md): match each report to the
dataset whose protocol digest it carries, audit it against the inputs beside it, compute the
pooled contrast (evaluator/numbers/pooling.py) and write pooled.json, .md and .html.

One home for what `lab pool` and `lab demo --samples` both run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from evaluator.audit.audit import audit
from evaluator.numbers.pooling import dataset_deltas, pool
from evaluator.pool.pooled_page import pooled_html
from evaluator.views.contrast_text import pooled_markdown
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, save
from protocols.committed import suite_member
from protocols.suite import load_suite, pinned_protocols

INPUTS_BESIDE = ("fixture.json", "relations.json")
OUTPUT_NAMES = {"json": "pooled.json", "markdown": "pooled.md", "html": "pooled.html"}


class PoolRefused(RefusedInput):
    """Reports that do not match the suite, or that fail their audit."""


def match_reports(suite: dict, report_paths: Sequence[Path]) -> dict[str, tuple[Path, dict]]:
    """Dataset name -> (path, report) for exactly the suite's datasets, each once."""
    by_digest = {d["protocol_digest"]: d["name"] for d in suite["datasets"]}
    found: dict[str, tuple[Path, dict]] = {}
    for path in report_paths:
        report = load_json(path, "report")
        chain = report.get("hash_chain") if isinstance(report, dict) else None
        pinned = chain.get("protocol") if isinstance(chain, dict) else None
        if pinned not in by_digest:
            name = (report.get("protocol") or {}).get("protocol_version") if isinstance(report, dict) else None
            same = [d for d in suite["datasets"] if Path(d["protocol"]).stem == name]
            told = (f"; it carries the name {name} of the suite's pinned protocol with other content (same name, "
                    f"different protocol)" if name and same else "")
            raise PoolRefused(f"report {path}: protocol digest {pinned} is not pinned by suite {suite['suite_version']} "
                              f"(it pins {', '.join(f'{n} {d[:12]}' for d, n in by_digest.items())}){told}")
        name = by_digest[pinned]
        if name in found:
            raise PoolRefused(f"report {path}: dataset {name} is given twice (also {found[name][0]}); "
                              f"the suite takes one report per dataset")
        found[name] = (path, report)
    missing = [d["name"] for d in suite["datasets"] if d["name"] not in found]
    if missing:
        raise PoolRefused(f"no report for dataset(s) {', '.join(missing)} of suite {suite['suite_version']}")
    return {d["name"]: found[d["name"]] for d in suite["datasets"]}


def audited_source(name: str, path: Path, protocol_path: Path, log: Callable[[str], None]) -> dict:
    """Audit one report against the inputs beside it; refuse on any failed check. Returns the source."""
    inputs = {n: path.parent / n for n in INPUTS_BESIDE}
    absent = [str(p) for p in inputs.values() if not p.is_file()]
    if absent:
        raise PoolRefused(f"report {path} ({name}): its inputs are read from beside it and {', '.join(absent)} "
                          f"is absent")
    generation = path.parent / "generation.json"
    lines: list[str] = []
    result = audit(path, inputs["fixture.json"], inputs["relations.json"], protocol_path,
                   generation if generation.is_file() else None, log=lines.append)
    if not result.ok:
        shown = "; ".join(f"{check} {what}" for check, what in result.failures[:5])
        raise PoolRefused(f"report {path} ({name}) fails its audit ({len(result.failures)} failure(s)): {shown}")
    log(f"audit {name}: all checks hold ({path})")
    return load_json(inputs["fixture.json"], "fixture")["source"]


def pool_reports(suite_path: Path, report_paths: Sequence[Path], output: Path,
                 log: Callable[[str], None] = print) -> tuple[dict, dict[str, Path]]:
    """Validate the suite, match and audit every report, pool, and write the three outputs into the
    new directory `output`. Refuses (nothing written) an existing output, a suite or protocol that
    does not hold, a report the suite does not take, and a report that fails its audit."""
    refuse_existing(output)
    suite = load_suite(suite_path)
    matched = match_reports(suite, report_paths)
    protocols = pinned_protocols(suite, suite_path)
    files = {d["name"]: suite_member(suite_path, d["protocol"]) for d in suite["datasets"]}
    datasets, provenance = [], {}
    secondary: list[list] = [[] for _ in suite.get("secondary_contrasts", [])]
    for name, (path, report) in matched.items():
        source = audited_source(name, path, files[name], log)
        datasets.append(dataset_deltas(name, report, source, suite["primary_contrast"]))
        for data, contrast in zip(secondary, suite.get("secondary_contrasts", [])):
            data.append(dataset_deltas(name, report, source, contrast))
        provenance[name] = {"path": str(path), "protocol_version": protocols[name]["protocol_version"],
                            "protocol_digest": report["hash_chain"]["protocol"],
                            "private_report_digest": digest(report)}
    result = pool(suite, datasets, provenance, secondary)
    refuse_existing(output)
    output.mkdir(parents=True)
    paths = {key: output / name for key, name in OUTPUT_NAMES.items()}
    save(paths["json"], result)
    for key, text in (("markdown", pooled_markdown(result)), ("html", pooled_html(result))):
        with open(paths[key], "x", encoding="utf-8") as handle:
            handle.write(text)
    return result, paths
