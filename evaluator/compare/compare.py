"""Compare two audited campaigns (docs/compare.md).

Each side is a public report with the files of its run (private report, fixture, relations,
protocol; state, plan and generation when present), found beside the public report as
a run directory lays a run out (ground/run_dir.py), each overridable. Both sides are audited in full first; a side
whose audit fails stops the comparison before anything is written.

The cohort decides what may be said:
- **paired**: both sides evaluated the same query ids with the same labels (judgments and evidence
  chains): for every method both share, the paired bootstrap of B − A per contrast metric, with
  side A's protocol seed and bootstrap settings (the recipe of `statistics`);
- **unpaired**: the query sets differ (no shared query labelled differently): the means side by side,
  labelled unpaired, with no interval on their difference;
- a query id labelled differently by the two sides is refused: the same id would name two questions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evaluator.audit.audit import audit
from evaluator.inputs import load_frozen
from evaluator.numbers import statistics
from evaluator.views import contrasts, html, plotting, tables
from evaluator.views.tables import Table, interval, label, metric_label, num
from ground.canonical import digest, sha256_bytes
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, save
from protocols.committed import committed_protocols

COMPARISON_FORMAT = "graph_evaluation_comparison_v1"
REQUIRED = ("report", "fixture", "relations", "protocol")
OPTIONAL = ("generation", "state", "plan")


class CohortConflict(RefusedInput):
    """The two sides label one query id differently."""


@dataclass
class RunFiles:
    """The files of one side. `locate` fills what is not given from the public report's directory."""
    public: Path
    report: Path | None = None
    fixture: Path | None = None
    relations: Path | None = None
    protocol: Path | None = None
    generation: Path | None = None
    state: Path | None = None
    plan: Path | None = None


def locate(side: str, files: RunFiles) -> RunFiles:
    """Fill each missing path with `<name>.json` beside the public report; the protocol may also
    be the repository's frozen protocol file whose digest the report's hash chain names."""
    if not files.public.is_file():
        raise RefusedInput(f"--{side.lower()}: public report {files.public} not found")
    base = files.public.parent
    out = RunFiles(files.public)
    for name in REQUIRED + OPTIONAL:
        given = getattr(files, name)
        beside = base / f"{name}.json"
        setattr(out, name, given if given is not None else (beside if beside.is_file() else None))
    if out.protocol is None and out.report is not None and out.report.is_file():
        out.protocol = frozen_protocol(load_json(out.report, "report").get("hash_chain", {}).get("protocol"))
    missing = [name for name in REQUIRED if getattr(out, name) is None]
    if missing:
        flags = ", ".join(f"--{side.lower()}-{name}" for name in missing)
        raise RefusedInput(f"side {side}: no {', '.join(missing)} beside {files.public}; give {flags}")
    return out


def frozen_protocol(protocol_digest) -> Path | None:
    for path in committed_protocols():
        if digest(load_json(path, "protocol")) == protocol_digest:
            return path
    return None


@dataclass
class Side:
    name: str  # "A" or "B"
    files: RunFiles
    public: dict
    labels: dict[str, dict]  # query id -> judgments and evidence chain, for the evaluated queries
    space: dict

    @property
    def methods(self) -> list[str]:
        return self.public["plan"]["methods"]

    def values(self, method: str, metric: str) -> dict[str, float]:
        return {r["query_id"]: r["metrics"][metric] for r in self.public["rows"] if r["method"] == method}


def audited_side(name: str, files: RunFiles, log: Callable[[str], None]) -> Side:
    """Audit one side in full (public report, state and plan included); refuse it if anything fails."""
    result = audit(files.report, files.fixture, files.relations, files.protocol, files.generation,
                   public_path=files.public, state_path=files.state, plan_path=files.plan,
                   log=lambda line: log(f"{name}: {line}"))
    if not result.ok:
        first = " ".join(result.failures[0])
        raise RefusedInput(f"side {name}: the audit of {files.report} failed ({len(result.failures)} failure(s), "
                           f"first: {first}); nothing compared")
    public = load_json(files.public, "public report")
    fixture = load_frozen(files.protocol, files.fixture, files.relations).fixture
    wanted = set(public["plan"]["queries"])
    labels = {q["id"]: {"judgments": q["judgments"], "evidence_chain": q["evidence_chain"]}
              for q in fixture["source"]["queries"] if q["id"] in wanted}
    return Side(name, files, public, labels, fixture["space"])


def cohort(a: Side, b: Side) -> dict:
    """paired when both sides evaluated the same query ids with the same labels, unpaired when the
    sets differ; a query id both evaluated but labelled differently is refused."""
    shared = sorted(set(a.labels) & set(b.labels))
    conflicts = [q for q in shared if a.labels[q] != b.labels[q]]
    if conflicts:
        what = "judgments" if a.labels[conflicts[0]]["judgments"] != b.labels[conflicts[0]]["judgments"] else "evidence chain"
        raise CohortConflict(f"query {conflicts[0]} has different {what} in A and B ({len(conflicts)} of {len(shared)} "
                             f"shared queries are labelled differently): the same id names two questions; not compared")
    counts = {"a": len(a.labels), "b": len(b.labels), "shared": len(shared)}
    if set(a.labels) == set(b.labels):
        return {"kind": "paired", "queries": counts,
                "reason": f"the same {len(shared)} query ids with identical judgments and evidence chains"}
    return {"kind": "unpaired", "queries": counts,
            "reason": f"the query sets differ: {len(shared)} shared, {counts['a'] - len(shared)} only in A, "
                      f"{counts['b'] - len(shared)} only in B"}


def side_summary(side: Side) -> dict:
    public = side.public
    return {"protocol_version": public["protocol_version"], "protocol_digest": public["hash_chain"]["protocol"],
            "public_report_digest": digest(public),
            "private_report_digest": public["private_report_digest"], "fixture_digest": public["hash_chain"]["fixture"],
            "space_id": public["space_id"], "model": side.space.get("model"), "split": public["plan"]["split"],
            "queries": len(public["plan"]["queries"]), "seed": public["plan"]["seed"],
            "bootstrap": public["evaluation"]["bootstrap"], "methods": side.methods}


def same_name_warnings(publics: list[tuple[str, Mapping]]) -> list[str]:
    """One line per protocol name that two of the reports carry with different contents: the same
    label on two different protocols is not one protocol (`lab protocol freeze` prevents it)."""
    by_name: dict[str, dict[str, list[str]]] = {}
    for label_, public in publics:
        by_name.setdefault(public["protocol_version"], {}).setdefault(public["hash_chain"]["protocol"], []).append(label_)
    return [f"protocol {name} names {len(digests)} different protocols: "
            + "; ".join(f"{', '.join(labels)} digest {d[:12]}" for d, labels in digests.items())
            + " (same name, different content: read each side's protocol, not the name)"
            for name, digests in by_name.items() if len(digests) > 1]


def compare(a: Side, b: Side) -> dict:
    """The comparison document (comparison.json without its `outputs`)."""
    kind = cohort(a, b)
    shared = [m for m in a.methods if m in b.methods]
    metrics = [m for m in a.public["evaluation"]["contrast_metrics"] if m in b.public["evaluation"]["contrast_metrics"]]
    out = {
        "format": COMPARISON_FORMAT,
        "sides": {"a": side_summary(a), "b": side_summary(b)},
        "cohort": kind,
        "methods": {"shared": shared, "only_a": [m for m in a.methods if m not in b.methods],
                    "only_b": [m for m in b.methods if m not in a.methods],
                    "spec_differs": [m for m in shared if a.public["methods"][m] != b.public["methods"][m]]},
        "metrics": metrics,
        "statistics": None,
        "contrasts": [],
        "side_by_side": side_by_side(a, b, metrics, kind["kind"]),
        "warnings": same_name_warnings([("A", a.public), ("B", b.public)]),
    }
    if kind["kind"] == "paired":
        out["statistics"], out["contrasts"] = paired(a, b, shared, metrics)
    return out


def paired(a: Side, b: Side, methods: list[str], metrics: list[str]) -> tuple[dict, list[dict]]:
    evaluation = a.public["evaluation"]
    boot = evaluation["bootstrap"]
    seed = a.public["plan"]["seed"]
    settings = {"seed": seed, "seed_from": "A", "resamples": boot["resamples"], "confidence": boot["confidence"],
                "tie_tolerance": evaluation["tie_tolerance"], "rng": statistics.RNG_DESCRIPTION,
                "delta": "B − A per query, in sorted query-id order"}
    b_eval = b.public["evaluation"]
    if b.public["plan"]["seed"] != seed or b_eval["bootstrap"] != boot or b_eval["tie_tolerance"] != evaluation["tie_tolerance"]:
        settings["note"] = (f"the protocols differ: A's settings are used (B's seed {b.public['plan']['seed']}, "
                            f"resamples {b_eval['bootstrap']['resamples']}, confidence {b_eval['bootstrap']['confidence']})")
    out = []
    for method in methods:
        for metric in metrics:
            out.append({"method": method, "candidate": "B", "baseline": "A", "metric": metric, "label": "paired",
                        **statistics.contrast(b.values(method, metric), a.values(method, metric), seed=seed,
                                              resamples=boot["resamples"], confidence=boot["confidence"],
                                              tolerance=evaluation["tie_tolerance"])})
    return settings, out


def side_by_side(a: Side, b: Side, metrics: list[str], kind: str) -> list[dict]:
    def entry(side: Side, method: str, metric: str):
        if method not in side.methods:
            return None
        means = ((side.public.get("statistics") or {}).get("means") or {}).get(method, {}).get(metric)
        mean = side.public["aggregates"]["methods"][method][metric]
        return {"mean": mean, "interval": means["interval"] if means else None, "queries": len(side.labels)}

    methods = list(dict.fromkeys(a.methods + b.methods))
    out = []
    for method in methods:
        for metric in metrics:
            ea, eb = entry(a, method, metric), entry(b, method, metric)
            out.append({"method": method, "metric": metric, "label": kind, "a": ea, "b": eb,
                        "difference": eb["mean"] - ea["mean"] if ea and eb else None})
    return out


# ---- rendering ---------------------------------------------------------------------------------


def sections(comparison: Mapping) -> tuple[list, dict[str, str]]:
    """Tables and figure names of a comparison, in reading order, and the figures' SVG."""
    figures = {}
    out: list = [sides_table(comparison)]
    if comparison["contrasts"]:
        note = (f"Paired bootstrap of B − A per query, {comparison['statistics']['resamples']} resamples, "
                f"seed {comparison['statistics']['seed']} (side A's protocol)"
                + (f"; {comparison['statistics']['note']}" if comparison["statistics"].get("note") else "") + ".")
        out.append(contrasts.table(comparison, ("contrasts",), [("method", lambda c: c["method"])], id="contrasts",
                                   title="Paired: B − A per shared method", note=note, candidate="B", baseline="A"))
        figures["forest"] = plotting.svg(contrasts.forest(comparison["contrasts"], lambda c: c["method"],
                                                          "B − A per shared method (paired)"), "forest")
        out.append("forest")
    out.append(side_table(comparison))
    figures["means"] = plotting.svg(means_figure(comparison), "means")
    out.append("means")
    return out, figures


CAPTIONS = {"forest": "B − A per shared method and contrast metric: mean paired delta and its 95% bootstrap interval.",
            "means": "Means of each side per method and contrast metric, with each side's own 95% bootstrap interval "
                     "(side by side: the intervals are per side, not of the difference)."}


def sides_table(comparison: Mapping) -> Table:
    t = Table("sides", "The two campaigns", ["", "A", "B"])
    a, b = comparison["sides"]["a"], comparison["sides"]["b"]
    for key in ("protocol_version", "model", "space_id", "split", "private_report_digest", "public_report_digest"):
        t.add(key.replace("_", " "), str(a[key]), str(b[key]))
    t.add("queries", num(comparison, "sides", "a", "queries", fmt="d"), num(comparison, "sides", "b", "queries", fmt="d"))
    t.add("protocol seed", num(comparison, "sides", "a", "seed", fmt="d"), num(comparison, "sides", "b", "seed", fmt="d"))
    return t


def side_table(comparison: Mapping) -> Table:
    kind = comparison["cohort"]["kind"]
    t = Table("side-by-side", f"Side by side ({kind})",
              ["method", "metric", "A mean", "A interval", "B mean", "B interval", "B − A (difference of means)"],
              note=("Unpaired: different query sets; the difference of means has no interval." if kind == "unpaired"
                    else "Each side's mean with its own interval; the paired deltas are above."))
    for i, entry in enumerate(comparison["side_by_side"]):
        cells = []
        for side in ("a", "b"):
            if entry[side] is None:
                cells += [label("—"), label("—")]
            else:
                cells.append(num(comparison, "side_by_side", i, side, "mean"))
                cells.append(interval(comparison, "side_by_side", i, side, "interval", fmt=".3f")
                             if entry[side]["interval"] else label("n/a"))
        diff = num(comparison, "side_by_side", i, "difference", fmt="+.3f") if entry["difference"] is not None else label("—")
        t.add(entry["method"], metric_label(entry["metric"]), *cells, diff)
    return t


def means_figure(comparison: Mapping):
    entries = comparison["side_by_side"]
    metrics = comparison["metrics"]
    methods = list(dict.fromkeys(e["method"] for e in entries))

    def build(fig):
        axes = fig.subplots(1, max(len(metrics), 1), squeeze=False)[0]
        for i, (ax, metric) in enumerate(zip(axes, metrics)):
            mine = {e["method"]: e for e in entries if e["metric"] == metric}
            for j, side in enumerate(("a", "b")):
                ys = [y - 0.2 + 0.4 * j for y in range(len(methods))]
                values = [(mine[m][side] or {}).get("mean", 0.0) for m in methods]
                ax.barh(ys, values, height=0.38, color=plotting.color(j), label=side.upper())
                for y, m in zip(ys, methods):
                    found = mine[m][side]
                    if found and found["interval"]:
                        ax.plot(found["interval"], [y, y], color="black", linewidth=1.0)
            ax.set_xlim(0.0, 1.0)
            ax.set_title(metric_label(metric))
            ax.set_yticks(range(len(methods)), methods if i == 0 else [])
            ax.set_ylim(len(methods) - 0.5, -0.5)
            if i == 0:
                ax.legend(loc="lower right")

    left = plotting.label_width(methods)
    return plotting.figure(build, left + 3.0 * max(len(metrics), 1) + 0.3, 0.42 * len(methods) + 1.0, left=left,
                           top=0.35, wspace=0.1)


def render(comparison: Mapping) -> tuple[str, str]:
    """(Markdown, HTML) of a comparison: the same tables; the HTML also holds the figures."""
    parts, figures = sections(comparison)
    heading = (f"Comparison: A = {comparison['sides']['a']['protocol_version']}, "
               f"B = {comparison['sides']['b']['protocol_version']}")
    cohort_text = f"Cohort: {comparison['cohort']['kind']} ({comparison['cohort']['reason']})."
    md, body = [f"# {heading}", "", cohort_text, ""], [html.paragraph(cohort_text)]
    for warning in comparison.get("warnings") or []:
        md += [f"**Warning:** {warning}.", ""]
        body.append(html.paragraph(f"Warning: {warning}."))
    for part in parts:
        if isinstance(part, Table):
            md.append(tables.markdown(part))
            body.append(tables.html_table(part))
        elif isinstance(part, str) and part in figures:
            md += [f"*{CAPTIONS[part]} (figure in comparison.html)*", ""]
            body.append(html.figure(part, figures[part], CAPTIONS[part]))
    return "\n".join(md).rstrip("\n") + "\n", html.document(heading, body)


def output_paths(directory: Path) -> dict[str, Path]:
    return {"json": directory / "comparison.json", "markdown": directory / "comparison.md",
            "html": directory / "comparison.html"}


def run_comparison(a_files: RunFiles, b_files: RunFiles, output: Path,
                   log: Callable[[str], None] = print) -> dict[str, Path]:
    """Locate, audit and compare both sides, then write the three outputs into a new directory."""
    refuse_existing(output)
    sides = [audited_side(name, locate(name, files), log) for name, files in (("A", a_files), ("B", b_files))]
    comparison = compare(*sides)
    for warning in comparison["warnings"]:
        log(f"warning: {warning}")
    markdown, page = render(comparison)
    comparison["outputs"] = {"markdown": sha256_bytes(markdown.encode("utf-8")), "html": sha256_bytes(page.encode("utf-8"))}
    refuse_existing(output)
    output.mkdir(parents=True)
    paths = output_paths(output)
    save(paths["json"], comparison)
    for key, text in (("markdown", markdown), ("html", page)):
        with open(paths[key], "x", encoding="utf-8") as handle:
            handle.write(text)
    return paths
