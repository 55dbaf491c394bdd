"""`lab run`: the whole documented pipeline on one protocol and data folder, in a new run directory.

Stages, each its own `python -m lab ...` process (as a user would type them, so one stage cannot
warm or leak into the next): synth (only without a data folder, see `synthetic_files`), import,
embed build, the lab server (a real separate process on a free loopback port, its store in the run
directory), prepare, evaluate, stop the lab, export, audit. Every stage reads and writes the
standard layout (protocols/run_dir.py) through `--run-dir`.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from protocols.canonical import sha256_bytes
from protocols.embedding_space import FIELD as EMBEDDING_SPACE
from protocols.errors import CheckFailed, RefusedInput
from protocols.files import refuse_existing, save
from protocols.graph_file import GRAPH_FILE
from protocols.routes import ENTITIES, route_of
from protocols.run_dir import RunDir
from protocols.schema import load_protocol

STAGE_LINE = "stage wall times: "


class StageFailed(CheckFailed):
    """A stage's process exited with a non-zero code; what it wrote stays in the run directory."""


@dataclass
class Finished:
    """A run that went through every stage: its directory and each stage's wall time."""

    run_dir: RunDir
    timings: dict[str, float] = field(default_factory=dict)

    def stage_line(self) -> str:
        return STAGE_LINE + ", ".join(f"{k} {v:.1f}s" for k, v in self.timings.items())


def embed_arguments(protocol: dict) -> list[str]:
    """The encoder a protocol pins (embedding_space) as `lab embed build` options; none for a
    protocol that pins no space (the builder's default model)."""
    # a protocol with a method whose requests carry the query's entities needs them in the fixture
    entities = ["--query-entities"] if any(ENTITIES in route_of(m).request for m in protocol["methods"].values()) else []
    pinned = protocol.get(EMBEDDING_SPACE)
    if pinned is None:
        return entities
    args = ["--provider", pinned["provider"]]
    if "variant" in pinned["provenance"]:
        args += ["--variant", pinned["provenance"]["variant"]]
    return args + entities


def synthetic_files(protocol: dict, path: Path) -> None:
    """Without a data folder, the data is `lab synth`'s default output: refused (before anything is
    written) unless the protocol pins exactly those files, byte for byte."""
    from importer import synthetic

    pinned = {entry["name"]: entry["sha256"] for entry in protocol["source_files"].values()}
    generated = {name: sha256_bytes(data) for name, data in synthetic.generate_files().items()}
    if pinned != generated:
        raise RefusedInput(f"protocol {path} does not pin `lab synth`'s default files "
                           f"({', '.join(sorted(generated))}); give --data-dir with the files it names")


def read_rows(protocol: dict, folder: Path, graph_dir: Path | None = None) -> None:
    """Every row of a protocol's pinned files read as `lab import` reads them (importer.cohort), and
    its pinned external graph matched to the corpus (docs/graph-import.md): what `lab protocol new`
    and `lab run` refuse before writing anything."""
    from importer.cohort import read_cohort
    from importer.pipeline import check_graph

    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    if GRAPH_FILE in protocol["graph_builder"]:
        check_graph(protocol, folder, graph_dir, log=log)
    else:
        read_cohort(protocol, folder, log=log)


def run_pipeline(protocol_path: Path, data_dir: Path | None, run_dir: Path, *, native: bool = False,
                 stdout: IO | None = None, log: Callable[[str], None] | None = None,
                 external: dict[str, str] | None = None, graph_dir: Path | None = None) -> Finished:
    """Every stage in a new run directory; raises StageFailed on the first stage that fails (the lab
    is stopped either way). `stdout` receives the stages' own output (default: this process's).
    `external`: name -> loopback retriever URL, each judged after the audit (`lab judge`) into
    RUN_DIR/external-NAME/. `graph_dir`: the folder of the external graph the protocol pins
    (default: `data_dir`; docs/graph-import.md)."""
    from evaluator.external.retriever import check_url

    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    for url in (external or {}).values():
        check_url(url)  # a remote URL is refused before anything runs
    protocol = load_protocol(protocol_path)
    refuse_existing(run_dir)
    if graph_dir is not None and GRAPH_FILE not in protocol["graph_builder"]:
        raise RefusedInput(f"--graph-dir {graph_dir}: protocol {protocol_path} pins no external graph")
    if data_dir is None:
        synthetic_files(protocol, protocol_path)
    elif not Path(data_dir).is_dir():
        raise RefusedInput(f"--data-dir {data_dir} is not a directory")
    else:
        # every row read as the import will read it, before the run directory exists: refused input
        # leaves nothing to delete, and the retry can use the same --run-dir (the synthetic files are
        # generated here, checked by hash above)
        read_rows(protocol, Path(data_dir), graph_dir)
    Path(run_dir).mkdir(parents=True)
    run = RunDir(Path(run_dir))
    done = Finished(run)
    # the run directory holds every file its audit (and a comparison of two runs) needs, the protocol too
    save(run.protocol, protocol)

    def stage(name: str, *args: str | Path) -> None:
        command = [sys.executable, "-m", "lab", *map(str, args)]
        log(f"== {name}: lab {' '.join(command[3:])}")
        started = time.monotonic()
        code = subprocess.call(command, stdout=stdout)
        done.timings[name] = time.monotonic() - started
        log(f"== {name}: exit {code} in {done.timings[name]:.1f}s")
        if code != 0:
            raise StageFailed(f"stage {name} exited with {code}; its files are in {run.root}")

    if data_dir is None:
        data_dir = run.data
        stage("synth", "synth", "--output-dir", data_dir)
    stage("import", "import", "--run-dir", run.root, "--data-dir", data_dir,
          *(["--graph-dir", graph_dir] if graph_dir is not None else []))
    stage("embed", "embed", "build", "--run-dir", run.root, *embed_arguments(protocol),
          *(["--native"] if native else []))
    from evaluator.campaign.lab_process import LabStartError, start_lab

    try:
        lab = start_lab(run.db, run.access, log_path=run.log)
    except LabStartError as exc:
        raise StageFailed(f"the lab did not start ({exc}); its log is {run.log}") from None
    log(f"== lab: pid {lab.pid} at {lab.access['base_url']}")
    try:
        stage("prepare", "prepare", "--run-dir", run.root)
        stage("evaluate", "evaluate", "--run-dir", run.root)
    finally:
        code = lab.stop()
        log(f"== lab: stopped with exit code {code}; log {lab.log_path}")
    stage("export", "export", "--run-dir", run.root)
    stage("audit", "audit", "--run-dir", run.root)
    for name, url in (external or {}).items():
        stage(f"judge {name}", "judge", "--run-dir", run.root, "--retriever", url, "--name", name,
              "--output-dir", run.root / f"external-{name}")
    return done


def print_finished(done: Finished) -> None:
    """The method table (the public summary), every artifact, the stage times, the page to open."""
    print(done.run_dir.path("public").with_suffix(".md").read_text(encoding="utf-8"))
    print("artifacts:")
    for path in sorted(done.run_dir.root.iterdir()):
        print(f"  {path}")
    print(done.stage_line())
    print(f"open the report (one file, no network needed): {done.run_dir.path('public').with_suffix('.html')}")
