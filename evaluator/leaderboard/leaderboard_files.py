"""`lab leaderboard` and its audit: reports in, a board and its four views out, never overwritten.

Inputs are run directories (their report.json with fixture.json, relations.json and protocol.json
beside it). Each report is audited first (evaluator/audit/audit.py); a failing one refuses the
board. Without a suite every report must carry one protocol (one stratum); with a suite each
report is matched to the dataset whose protocol digest it carries (evaluator/pool/suite_pool.py).

leaderboard.json holds the board, what it was read from (each report's path and digest, the
suite's) and the SHA-256 of each view; the audit reads the same reports, checks their digests,
computes the board again and compares it and every view byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from evaluator.derived.leaderboard_inputs import BoardInputError, report_settings, report_stratum, suite_settings
from evaluator.numbers.leaderboard import board
from evaluator.pool.suite_pool import audited_source, match_reports
from evaluator.views import edition, plotting
from evaluator.views import leaderboard_views as views
from evaluator.views.plotting import standalone
from ground.canonical import digest, sha256_bytes
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, save, save_bytes
from protocols.committed import suite_member
from protocols.suite import load_suite

NAMES = {"json": "leaderboard.json", "markdown": "leaderboard.md", "html": "leaderboard.html",
         "csv": "leaderboard.csv", "figure": "leaderboard.svg"}


class LeaderboardRefused(RefusedInput):
    """Reports that cannot make one board, or that fail their audit."""


def _report_path(run: Path) -> Path:
    path = Path(run) / "report.json" if Path(run).is_dir() else Path(run)
    if not path.is_file():
        raise LeaderboardRefused(f"{run}: no report.json (give run directories written by lab run or evaluate)")
    return path


def _inputs(run_dirs: Sequence[Path], suite_path: Path | None, check: Callable[[str, Path, Path], dict]
            ) -> tuple[list[tuple[str, list[tuple[Path, dict]], dict]], dict | None]:
    """[(dataset, [(report path, report)], source)] and the suite (None without one)."""
    paths = [_report_path(r) for r in run_dirs]
    if suite_path is not None:
        suite = load_suite(suite_path)
        matched = match_reports(suite, paths)
        files = {d["name"]: suite_member(suite_path, d["protocol"]) for d in suite["datasets"]}
        return [(name, [(path, report)], check(name, path, files[name])) for name, (path, report) in matched.items()], suite
    reports = [(path, load_json(path, "report")) for path in paths]
    pinned = {r["hash_chain"]["protocol"] for _, r in reports}
    if len(pinned) != 1:
        shown = ", ".join(f"{p} ({r['protocol_version']} {r['hash_chain']['protocol'][:12]})" for p, r in reports)
        raise LeaderboardRefused(f"reports of different protocols make no one board: {shown}; pool datasets with --suite")
    name = reports[0][1]["protocol_version"]
    sources = [check(name, path, path.parent / "protocol.json") for path, _ in reports]
    return [(name, reports, sources[0])], None


def compute(run_dirs: Sequence[Path], suite_path: Path | None, metric: str, alpha: float,
            check: Callable[[str, Path, Path], dict], view_edition: int = edition.CURRENT) -> tuple[dict, dict[str, bytes]]:
    """The leaderboard document and the bytes of its views, drawn in `view_edition`
    (evaluator/views/edition.py: from 1 the document names its edition and the question it marks)."""
    groups, suite = _inputs(run_dirs, suite_path, check)
    try:
        strata = [report_stratum(name, [r for _, r in reports], source, metric) for name, reports, source in groups]
        settings = (suite_settings(suite, metric, alpha) if suite is not None
                    else report_settings(groups[0][1][0][1]["protocol"], metric, alpha))
        result = board(strata, settings)
    except (BoardInputError, ValueError) as exc:
        raise LeaderboardRefused(str(exc)) from None
    if view_edition:
        primary = (suite or groups[0][1][0][1]["protocol"]["evaluation"])["primary_contrast"]
        result = {**result, edition.FIELD: view_edition,
                  "question": {"candidate": primary["candidate"], "baseline": primary["baseline"]}}
    inputs = [{"dataset": name, "path": str(path), "private_report_digest": digest(report),
               "protocol_version": report["protocol_version"], "protocol_digest": report["hash_chain"]["protocol"]}
              for name, reports, _ in groups for path, report in reports]
    document = {**result, "title": views.heading(result, inputs, suite),
                "inputs": {"suite": None if suite is None else {"suite_version": suite["suite_version"],
                                                                "path": str(suite_path), "digest": digest(suite)},
                           "reports": inputs}}
    svg = plotting.svg(views.cost_figure(document), views.FIGURE)
    files = {"markdown": views.markdown(document["title"], document, NAMES["figure"]).encode("utf-8"),
             "html": views.page(document["title"], document, svg).encode("utf-8"),
             "csv": views.csv_text(document).encode("utf-8"),
             "figure": standalone(svg).encode("utf-8")}
    document["outputs"] = {key: sha256_bytes(data) for key, data in files.items()}
    return document, files


def _audited(log: Callable[[str], None]) -> Callable[[str, Path, Path], dict]:
    def check(name: str, path: Path, protocol: Path) -> dict:
        return audited_source(name, path, protocol, log)
    return check


def write_leaderboard(run_dirs: Sequence[Path], suite_path: Path | None, metric: str, alpha: float, output: Path,
                      log: Callable[[str], None] = print) -> dict[str, Path]:
    """Audit every report, compute the board and write its five files into the new directory `output`."""
    refuse_existing(output)
    document, files = compute(run_dirs, suite_path, metric, alpha, _audited(log))
    refuse_existing(output)
    output.mkdir(parents=True)
    paths = {key: output / name for key, name in NAMES.items()}
    save(paths["json"], document)
    for key, data in files.items():
        save_bytes(paths[key], data)
    return paths


def _fixture_source(name: str, path: Path, protocol: Path) -> dict:
    """The audit's reading of one input: the fixture beside the report (its digest is checked)."""
    return load_json(path.parent / "fixture.json", "fixture")["source"]


def audit_leaderboard(path: Path) -> list[tuple[str, str]]:
    """Every failure of a leaderboard against the reports it names: (check, what)."""
    path = Path(path)
    document = load_json(path / NAMES["json"] if path.is_dir() else path, "leaderboard")
    folder = path if path.is_dir() else path.parent
    failures: list[tuple[str, str]] = []
    inputs = document.get("inputs") or {}
    runs = []
    for entry in inputs.get("reports") or []:
        report_path = Path(entry["path"])
        if not report_path.is_file():
            raise LeaderboardRefused(f"leaderboard input {report_path} not found (run the audit where the board was made)")
        report = load_json(report_path, "report")
        if digest(report) != entry["private_report_digest"]:
            failures.append(("leaderboard.inputs", f"{report_path}: digest {digest(report)[:12]}, the board names "
                                                   f"{entry['private_report_digest'][:12]}"))
        fixture = load_json(report_path.parent / "fixture.json", "fixture")
        if digest(fixture) != report["hash_chain"]["fixture"]:
            failures.append(("leaderboard.inputs", f"{report_path.parent / 'fixture.json'} is not the report's fixture"))
        runs.append(report_path)
    suite = inputs.get("suite")
    if suite is not None and digest(load_suite(suite["path"])) != suite["digest"]:
        failures.append(("leaderboard.inputs", f"suite {suite['path']} is not the suite the board names"))
    if failures:
        return failures
    settings = document.get("settings") or {}
    metric, alpha = settings.get("metric"), settings.get("alpha")
    if not isinstance(metric, str) or not isinstance(alpha, (int, float)):
        return [("leaderboard.settings", f"metric {metric!r} and alpha {alpha!r}: a board states both")]
    again, files = compute(runs, None if suite is None else Path(suite["path"]), metric, alpha, _fixture_source,
                           edition.edition(document))
    failures += [("leaderboard.board", what) for what in differences(document, again)]
    for key, data in files.items():
        written = folder / NAMES[key]
        if not written.is_file() or written.read_bytes() != data:
            failures.append((f"leaderboard.{key}", f"{written} is not what the board renders"))
    return failures


def differences(have: object, want: object, at: str = "") -> list[str]:
    """Where two JSON values differ: the first differing paths, each with both values."""
    if isinstance(have, Mapping) and isinstance(want, Mapping):
        out = []
        for key in sorted(set(have) | set(want)):
            if key not in have or key not in want:
                out.append(f"{at}/{key}: {'missing' if key not in have else 'not in the recomputation'}")
            else:
                out += differences(have[key], want[key], f"{at}/{key}")
        return out
    if isinstance(have, list) and isinstance(want, list) and len(have) == len(want):
        return [d for i, (h, w) in enumerate(zip(have, want)) for d in differences(h, w, f"{at}/{i}")]
    return [] if have == want else [f"{at or '/'}: {have!r}, the recomputation {want!r}"]
