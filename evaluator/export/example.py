"""The committed example (docs/example/): what a visitor sees of the synthetic demo before installing.

A campaign's numbers are deterministic, but a few of its values belong to one run only: the
measured timings and sizes (jobs, latency, sizes, resources, start and finish, the generation
file's encode timings), and the ids of the lab that served it (a new random lab id per store, hence
journal id, plan, state and the private report's digest). The example keeps everything else of the public report (`example.json`) and
renders from it, with the exporter's own code, every table and figure that does not read a
run-specific value; the identity rows that would show one say RUN_SPECIFIC, and the latency
table, the latency figure and the resources table are left out. So two campaigns of the same
protocol on the same machine give byte-identical examples, and the files in docs/example/ are a
pure function of docs/example/example.json (tested).

`make example` runs the synthetic demo into runs/example/ and calls `lab example` on it.
example.json is compact JSON: the report without its rows on the first line, then one row per line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from evaluator.views import summary
from evaluator.views.figures import public_figures
from evaluator.views.plotting import standalone
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing

EXAMPLE_FORMAT = "graph_evaluation_example_v1"
RUN_SPECIFIC = "run-specific: not in the example"
DROPPED = ("jobs", "latency", "sizes", "resources", "outputs", "store_digests")
ROW_KEYS = ("query_id", "category", "hop", "method", "metrics")  # what the wins-and-losses table reads
LEFT_OUT = {"latency", "resources", "quality_cost"}  # tables and figures that read only run-specific values
NOTE = ("The synthetic demo's public report without what belongs to one run only (timings, sizes, the lab's "
        "random id and the digests that depend on it); see docs/example/README.md.")


def example_report(public: Mapping) -> dict:
    """The run-independent part of a public report."""
    out = {k: v for k, v in public.items() if k not in DROPPED}
    out["format"] = EXAMPLE_FORMAT
    out["note"] = NOTE
    out["private_report_digest"] = RUN_SPECIFIC
    # generation.json records the encoder's timings; plan and state name the lab
    out["hash_chain"] = {k: (v if k in ("protocol", "source", "fixture", "relations") else RUN_SPECIFIC)
                         for k, v in public["hash_chain"].items()}
    out["fences"] = {side: {k: (RUN_SPECIFIC if k == "journal_id" else v) for k, v in fence.items()}
                     for side, fence in public["fences"].items()}
    out["lab"] = {"lab_id": RUN_SPECIFIC, "journal_id": RUN_SPECIFIC}
    out["started_at"] = out["finished_at"] = RUN_SPECIFIC
    out["rows"] = [{k: row[k] for k in ROW_KEYS} for row in public["rows"]]
    if "leaderboard" in public:  # the board's cost columns and Pareto front read the timings
        out["leaderboard"] = {**public["leaderboard"],
                              "methods": [{**row, "cost": {}, "pareto": False}
                                          for row in public["leaderboard"]["methods"]]}
    return out


def sections(example: Mapping, figures: Mapping[str, str]) -> list:
    shown = []
    for section in summary.public_sections(example, figures):
        if getattr(section, "id", None) in LEFT_OUT or getattr(section, "name", None) in LEFT_OUT:
            continue
        shown.append(section)
    return shown


def rendered(example: Mapping) -> dict[str, bytes]:
    """Every file of the example folder but example.json, by relative path."""
    # the latency figure reads the jobs the example has not: drawn empty, then left out
    drawn = public_figures({**example, "jobs": []})
    figures = {name: svg for name, svg in drawn.items() if name not in LEFT_OUT}
    parts = sections(example, figures)
    heading = summary.title(example)
    files = {f"public.figures/{name}.svg": standalone(svg).encode("utf-8") for name, svg in figures.items()}
    files["public.md"] = summary.markdown(heading, parts, lambda name: f"public.figures/{name}.svg").encode("utf-8")
    files["public.html"] = summary.page(heading, parts, figures).encode("utf-8")
    return files


def encode(example: Mapping) -> bytes:
    """Compact JSON, one row per line (data for the renderer; public.md is the page to read)."""
    head = {k: v for k, v in example.items() if k != "rows"}
    lines = [json.dumps(head, ensure_ascii=False, allow_nan=False, separators=(",", ":"))]
    lines += [json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":")) for row in example["rows"]]
    return ("\n".join(lines) + "\n").encode("utf-8")


def decode(data: bytes) -> dict:
    head, *rows = data.decode("utf-8").splitlines()
    return {**json.loads(head), "rows": [json.loads(row) for row in rows]}


def write_example(public_path: Path, output: Path) -> list[Path]:
    """docs/example from a run's public.json: example.json and what it renders, in a new directory."""
    refuse_existing(output)
    public = load_json(public_path, "public report")
    if not isinstance(public, dict) or public.get("format") != "graph_evaluation_public_v1":
        raise RefusedInput(f"{public_path} is not a public report (graph_evaluation_public_v1)")
    example = example_report(public)
    files = {"example.json": encode(example), **rendered(example)}
    output.mkdir(parents=True)
    written = []
    for name, data in sorted(files.items()):
        path = output / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)
    return written


def differences(folder: Path) -> list[str]:
    """The files of an example folder that are not what example.json renders (or are missing, or extra)."""
    path = folder / "example.json"
    if not path.is_file():
        raise RefusedInput(f"example report not found: {path}")
    example = decode(path.read_bytes())
    expected = {"example.json": encode(example), **rendered(example)}
    found = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != "README.md"}
    out = [f"{name}: not what example.json renders" for name, data in sorted(expected.items())
           if name in found and (folder / name).read_bytes() != data]
    out += [f"{name}: missing" for name in sorted(set(expected) - found)]
    out += [f"{name}: not rendered from example.json" for name in sorted(found - set(expected))]
    return out
