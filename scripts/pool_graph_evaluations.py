"""Pool the primary contrast of several datasets' campaigns under a suite declared beforehand.

    python scripts/pool_graph_evaluations.py --suite protocols/suite-samples-v1.json \
        --reports RUN1/report.json RUN2/report.json RUN3/report.json --output DIR

Each report is a private report written by evaluate; its frozen inputs are read from beside it
(the layout `make demo` writes): `fixture.json`, `relations.json` and, when present,
`generation.json`; its protocol is the file the suite pins. Refused with exit 2, before anything
is written: an existing DIR; a report whose protocol digest the suite does not pin; a dataset
given twice (an extra report) or not at all; a protocol file that no longer has the pinned digest;
a report that fails its audit (evaluator.verification.audit, every check). Writes DIR/pooled.json,
DIR/pooled.md and DIR/pooled.html: one row per dataset and the pooled row (docs/suites.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.reporting.contrast_text import pooled_html, pooled_markdown, pooled_sentence  # noqa: E402
from evaluator.reporting.pooling import dataset_deltas, pool  # noqa: E402
from evaluator.verification.audit import audit  # noqa: E402
from protocols.canonical import digest  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import load_json, refuse_existing, save  # noqa: E402
from protocols.suite import load_suite, pinned_protocols  # noqa: E402

INPUTS_BESIDE = ("fixture.json", "relations.json")


class PoolRefused(RefusedInput):
    """Reports that do not match the suite, or that fail their audit."""


def match_reports(suite: dict, report_paths: list[Path]) -> dict[str, tuple[Path, dict]]:
    """Dataset name -> (path, report) for exactly the suite's datasets, each once."""
    by_digest = {d["protocol_digest"]: d["name"] for d in suite["datasets"]}
    found: dict[str, tuple[Path, dict]] = {}
    for path in report_paths:
        report = load_json(path, "report")
        chain = report.get("hash_chain") if isinstance(report, dict) else None
        pinned = chain.get("protocol") if isinstance(chain, dict) else None
        if pinned not in by_digest:
            raise PoolRefused(f"report {path}: protocol digest {pinned} is not pinned by suite {suite['suite_version']} "
                              f"(it pins {', '.join(f'{n} {d[:12]}' for d, n in by_digest.items())})")
        name = by_digest[pinned]
        if name in found:
            raise PoolRefused(f"report {path}: dataset {name} is given twice (also {found[name][0]}); "
                              f"the suite takes one report per dataset")
        found[name] = (path, report)
    missing = [d["name"] for d in suite["datasets"] if d["name"] not in found]
    if missing:
        raise PoolRefused(f"no report for dataset(s) {', '.join(missing)} of suite {suite['suite_version']}")
    return {d["name"]: found[d["name"]] for d in suite["datasets"]}


def audited(name: str, path: Path, protocol_path: Path) -> dict:
    """Audit one report against the inputs beside it; refuse on any failed check."""
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
    print(f"audit {name}: all checks hold ({path})", file=sys.stderr)
    return load_json(inputs["fixture.json"], "fixture")["source"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", required=True, type=Path, help="suite file (protocols/suite-*.json)")
    parser.add_argument("--reports", required=True, type=Path, nargs="+", help="one private report per dataset")
    parser.add_argument("--output", required=True, type=Path, help="new directory for pooled.json, .md, .html")
    args = parser.parse_args(argv)
    refuse_existing(args.output)
    suite = load_suite(args.suite)
    matched = match_reports(suite, args.reports)
    protocols = pinned_protocols(suite, args.suite)
    files = {d["name"]: args.suite.parent / d["protocol"] for d in suite["datasets"]}
    datasets, provenance = [], {}
    secondary: list[list] = [[] for _ in suite.get("secondary_contrasts", [])]
    for name, (path, report) in matched.items():
        source = audited(name, path, files[name])
        datasets.append(dataset_deltas(name, report, source, suite["primary_contrast"]))
        for data, contrast in zip(secondary, suite.get("secondary_contrasts", [])):
            data.append(dataset_deltas(name, report, source, contrast))
        provenance[name] = {"path": str(path), "protocol_version": protocols[name]["protocol_version"],
                            "protocol_digest": report["hash_chain"]["protocol"],
                            "private_report_digest": digest(report)}
    result = pool(suite, datasets, provenance, secondary)
    refuse_existing(args.output)
    args.output.mkdir(parents=True)
    written = [args.output / "pooled.json", args.output / "pooled.md", args.output / "pooled.html"]
    save(written[0], result)
    written[1].write_text(pooled_markdown(result), encoding="utf-8")
    written[2].write_text(pooled_html(result), encoding="utf-8")
    print(pooled_sentence(result), file=sys.stderr)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
