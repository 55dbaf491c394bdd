"""A small real campaign for the evaluator tests: synthetic corpus, real model, real labs, the real
`lab` commands (in-process, tests.conftest.lab_cli; the lab server is always its own process).

The slow part (generate, import, embed with the real model) is built once per test session and
shared read-only; each test module starts its own lab and prepares it through `lab prepare`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from evaluator.connection.lab_process import LabProcess, start_lab
from ground.canonical import sha256_file
from protocols.committed import committed_file
from tests.conftest import Ran, lab_cli

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"
QUESTIONS = 10  # dev rows of the generator: 10 test queries, 3 development queries, ~250 documents
_BUILT: dict[str, Any] = {}  # "inputs": Inputs, "runs": the two runs


@dataclass(frozen=True)
class Inputs:
    root: Path
    protocol: Path
    source: Path
    relations: Path
    fixture: Path
    generation: Path


def cli(script: str, *args, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """A script of scripts/ in its own process (the protocol generators; the Qilbee workflow's
    commands are tested as scripts in tests/lab/test_lab_run.py)."""
    result = subprocess.run([sys.executable, str(SCRIPTS / script), *map(str, args)], capture_output=True,
                            text=True, timeout=timeout, cwd=REPO)
    if check and result.returncode != 0:
        raise AssertionError(f"{script} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def small_protocol(data: Path, output: Path, repetitions: int = 2) -> None:
    """synthetic-v1 with the generated files' hashes, small counts and two repetitions (more make the
    evaluate stage longer, not the corpus larger)."""
    protocol = json.loads(committed_file("synthetic-v1.json").read_text())
    protocol["protocol_version"] = "synthetic-test-small"
    for entry in protocol["source_files"].values():
        entry["sha256"] = sha256_file(data / entry["name"])
    protocol["selection"]["splits"]["test"]["counts"] = {"2": 4, "3": 3, "4": 3}
    protocol["selection"]["splits"]["development"]["counts"] = {"2": 1, "3": 1, "4": 1}
    protocol["selection"]["expected_ids"] = None
    protocol["evaluation"]["repetitions"] = repetitions
    output.write_text(json.dumps(protocol, indent=2))


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """`name`'s folder, filled by `build(folder)` once per test session: by the first pytest-xdist
    worker that asks, under a file lock the others wait on before they read it, so the same bytes
    are not built once per worker. Its users only read it."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's folder, above every worker's own
    folder, built = shared / name, shared / f"{name}.built"
    with FileLock(shared / f"{name}.lock"):
        if not built.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that died building left
            folder.mkdir()
            build(folder)
            built.touch()
    return folder


def _inputs_at(root: Path) -> Inputs:
    return Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                  root / "fixture.json", root / "generation.json")


def _build_inputs(root: Path) -> None:
    data, inputs = root / "synthetic", _inputs_at(root)
    lab_cli("synth", "--output-dir", data, "--questions", QUESTIONS)
    small_protocol(data, inputs.protocol)
    lab_cli("import", "--protocol", inputs.protocol, "--data-dir", data, "--output", inputs.source,
            "--relations", inputs.relations)
    lab_cli("embed", "build", "--source", inputs.source, "--output", inputs.fixture, "--generation",
            inputs.generation)


def built_inputs(tmp_path_factory) -> Inputs:
    """Generate, import and embed once per session (the real model, CPU), under pytest's temp root."""
    if "inputs" not in _BUILT:
        _BUILT["inputs"] = _inputs_at(built_once(tmp_path_factory, "evaluator-inputs", _build_inputs))
    return _BUILT["inputs"]


@dataclass
class PreparedLab:
    inputs: Inputs
    workdir: Path
    lab: LabProcess
    state: Path

    @property
    def access_file(self) -> Path:
        return self.lab.access_file

    def common(self, **override) -> list:
        args = {"fixture": self.inputs.fixture, "relations": self.inputs.relations,
                "access-file": self.access_file, "state": self.state, "protocol": self.inputs.protocol}
        args.update({k.replace("_", "-"): v for k, v in override.items()})
        return [x for k, v in args.items() for x in (f"--{k}", v)]

    def evaluate_args(self, plan: Path, report: Path, **override) -> list:
        generation = override.pop("generation", self.inputs.generation)
        return ["evaluate", *self.common(**override), "--generation", generation, "--plan", plan,
                "--report", report]

    def evaluate(self, plan: Path, report: Path, check: bool = True, **override) -> Ran:
        return lab_cli(*self.evaluate_args(plan, report, **override), check=check)


def prepared_lab(inputs: Inputs, workdir: Path, **override) -> PreparedLab:
    workdir.mkdir(parents=True, exist_ok=True)
    lab = start_lab(workdir / "db", workdir / "access.json")
    prepared = PreparedLab(inputs, workdir, lab, workdir / "state.json")
    lab_cli("prepare", *prepared.common(**override))
    return prepared


@dataclass(frozen=True)
class Run:
    """A complete, exported campaign in a run directory (the standard layout, ground/run_dir.py)."""
    directory: Path

    def file(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    protocol = property(lambda self: self.file("protocol"))
    fixture = property(lambda self: self.file("fixture"))
    relations = property(lambda self: self.file("relations"))
    generation = property(lambda self: self.file("generation"))
    state = property(lambda self: self.file("state"))
    plan = property(lambda self: self.file("plan"))
    report = property(lambda self: self.file("report"))
    public = property(lambda self: self.file("public"))

    def audit_args(self) -> list:
        return ["--report", self.report, "--fixture", self.fixture, "--relations", self.relations, "--protocol",
                self.protocol, "--generation", self.generation, "--state", self.state, "--plan", self.plan,
                "--public", self.public]


def exported_runs(tmp_path_factory) -> tuple[Run, Run]:
    """Two complete campaigns of the small protocol on one prepared lab under one plan, each exported,
    built once per session. Their rankings are identical (same lab, same plan); their timings are not."""
    if "runs" not in _BUILT:
        inputs = built_inputs(tmp_path_factory)

        def build(root: Path) -> None:
            prepared = prepared_lab(inputs, root / "lab")
            try:
                for run in _runs_at(root):
                    run.directory.mkdir()
                    for name in ("protocol", "fixture", "relations", "generation"):
                        shutil.copyfile(getattr(inputs, name), run.file(name))
                    shutil.copyfile(prepared.state, run.state)
                    prepared.evaluate(run.plan, run.report)
            finally:
                assert prepared.lab.stop() == 0
            for run in _runs_at(root):
                lab_cli("export", "--run-dir", run.directory)

        _BUILT["runs"] = _runs_at(built_once(tmp_path_factory, "exported-runs", build))
    return _BUILT["runs"]


def _runs_at(root: Path) -> tuple[Run, Run]:
    return Run(root / "a"), Run(root / "b")


def one_dataset_suite(protocol_path: Path, folder: Path, unit: str = "query") -> Path:
    """folder/suite-small.json: a suite of one dataset pinning the protocol at `protocol_path`
    (copied beside it as small.json), pooled at the protocol's own seed."""
    from ground.canonical import digest

    protocol = json.loads(protocol_path.read_text())
    (folder / "small.json").write_text(protocol_path.read_text())
    suite = {"format": "graph_evaluation_suite_v1", "suite_version": "suite-small", "title": "one synthetic dataset",
             "datasets": [{"name": "synthetic", "protocol": "small.json", "protocol_digest": digest(protocol)}],
             "primary_contrast": {"candidate": "graph_hybrid_balanced", "baseline": "weighted_rrf_v2",
                                  "metric": "ndcg@10", "label": "confirmatory"},
             "pooling": {"rule": "stratified_paired_bootstrap_v1", "unit": unit, "weights": "equal",
                         "resamples": 2000, "confidence": 0.95, "permutations": 10000},
             "seed": protocol["protocol_seed"]}
    path = folder / "suite-small.json"
    path.write_text(json.dumps(suite))
    return path
