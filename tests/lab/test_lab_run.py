"""`lab run` end to end, and the Qilbee workflow's six script commands with their documented flags:
both on the small synthetic protocol, both give the same campaign (compared with `lab compare`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from evaluator.connection.lab_process import start_lab
from ground.run_dir import FILES, RunDir
from protocols.committed import DATASETS_DIR
from tests.conftest import REPO, lab_cli
from tests.evaluation_fixtures import built_inputs

SCRIPTS = REPO / "scripts"


def script(name: str, *args) -> subprocess.CompletedProcess:
    """A documented script in its own process, run from outside the repository: the venv installs
    the project, nothing puts the repository on the path."""
    done = subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd="/")
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def by_lab_run(tmp_path_factory):
    inputs = built_inputs(tmp_path_factory)
    run_dir = tmp_path_factory.mktemp("lab-run") / "run"
    done = lab_cli("run", "--protocol", inputs.protocol, "--data-dir", inputs.root / "synthetic", "--run-dir", run_dir)
    return run_dir, done


@pytest.fixture(scope="module")
def by_scripts(tmp_path_factory):
    """The Qilbee workflow, script by script, into a directory with the standard file names."""
    inputs = built_inputs(tmp_path_factory)
    run = RunDir(tmp_path_factory.mktemp("scripts") / "run")
    run.root.mkdir()
    run.protocol.write_bytes(inputs.protocol.read_bytes())
    script("import_musique_graph.py", "--protocol", run.protocol, "--source-dir", inputs.root / "synthetic",
           "--output", run.source, "--relations", run.relations)
    script("build_embedding_fixture.py", "--source", run.source, "--output", run.fixture, "--measurements",
           run.generation)
    lab = start_lab(run.db, run.access, command=(sys.executable, str(SCRIPTS / "retrieval_lab.py")))
    try:
        common = ["--fixture", run.fixture, "--relations", run.relations, "--credential-file", run.access,
                  "--state", run.state, "--protocol", run.protocol]
        script("evaluate_graph_retrieval.py", "prepare", *common)
        script("evaluate_graph_retrieval.py", "evaluate", *common, "--generation", run.generation, "--plan", run.plan,
               "--report", run.report, "--server-pid", lab.pid)
    finally:
        assert lab.stop() == 0
    script("export_graph_evaluation.py", "--report", run.report, "--fixture", run.fixture, "--output", run.public)
    audit = script("audit_graph_evaluation.py", "--report", run.report, "--fixture", run.fixture, "--relations",
                   run.relations, "--protocol", run.protocol, "--generation", run.generation, "--state", run.state,
                   "--plan", run.plan, "--public", run.public)
    assert "all checks hold" in audit.stdout
    return run.root


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_lab_run_writes_the_standard_layout_and_prints_the_table(by_lab_run):
    run_dir, done = by_lab_run
    for role in ("protocol", "source", "relations", "fixture", "generation", "db", "access", "log", "state", "plan",
                 "report", "public"):
        assert (run_dir / FILES[role]).exists(), role
    assert not (run_dir / FILES["data"]).exists()  # a data folder was given: nothing generated
    # the terminal ends on the answer box and the method table; the full report is a file it names
    assert done.stdout.rstrip().splitlines()[-1].startswith(("|", "Cost is")), done.stdout[-1500:]
    assert "| graph_hybrid_balanced" in done.stdout
    assert "## Cuts and work" not in done.stdout and "## Campaign" not in done.stdout
    assert f"the full report: {run_dir / 'public.md'}" in done.stdout
    assert f"open the report (one file, no network needed): {run_dir / 'public.html'}" in done.stdout
    assert "audit: all checks hold" in done.stderr and "ok pages" in (run_dir / "stages.log").read_text()
    # the terminal `make demo` shows, through the same code: two screens at most, no third-party noise
    assert len((done.stdout + done.stderr).splitlines()) < 100
    for noise in ("Loading weights", "it/s]", "Port 8787", "UserWarning"):
        assert noise not in done.stdout + done.stderr, noise
    stages = next(line for line in done.stdout.splitlines() if line.startswith("stage wall times: "))
    assert [part.split()[0] for part in stages[len("stage wall times: "):].split(", ")] == [
        "import", "embed", "prepare", "evaluate", "export", "audit"]
    assert json.loads((run_dir / "report.json").read_text())["status"] == "complete"


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_lab_run_says_whether_its_protocol_is_frozen_and_so_do_the_report_and_the_page(by_lab_run):
    """The test protocol has no lock: `lab run` says so before its first stage, keeps no lock in the
    run, and the report and the public page say it beside the protocol's digest."""
    from ground.canonical import digest

    run_dir, done = by_lab_run
    protocol = json.loads((run_dir / "protocol.json").read_text())
    said = [line for line in done.stderr.splitlines() if line.startswith("protocol synthetic-test-small ")]
    assert said and said[0] == (f"protocol synthetic-test-small (digest {digest(protocol)}): NOT frozen: no lock "
                                f"beside it and no lock froze this content; `{said[0].split('`')[1]}` writes one")
    assert said[0].split("`")[1].endswith("protocol freeze " + str(json.loads((run_dir / "run.json").read_text())
                                                                    ["protocol"]))
    assert not (run_dir / "protocol.lock.json").exists()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["protocol_frozen"] == {"digest": digest(protocol), "frozen": False, "by": ""}
    assert (f"| protocol digest | {digest(protocol)} (NOT frozen: no lock held its content) |"
            in (run_dir / "public.md").read_text())


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_the_scripts_and_lab_run_give_the_same_campaign(by_lab_run, by_scripts, tmp_path):
    run_dir, _ = by_lab_run
    for name in ("source.json", "relations.json", "fixture.json"):
        assert (run_dir / name).read_bytes() == (by_scripts / name).read_bytes(), name
    out = lab_cli("compare", "--a", by_scripts, "--b", run_dir, "--output-dir", tmp_path / "comparison")
    assert "A: ok public" in out.stderr and "B: ok public" in out.stderr
    comparison = json.loads((tmp_path / "comparison" / "comparison.json").read_text())
    assert comparison["cohort"]["kind"] == "paired" and comparison["contrasts"]
    for contrast in comparison["contrasts"]:
        assert (contrast["mean_delta"], contrast["interval"]) == (0.0, [0.0, 0.0]), contrast


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_resuming_a_finished_run_says_every_stage_had_finished(by_lab_run):
    run_dir, _ = by_lab_run
    again = lab_cli("run", "--resume", run_dir)
    assert "stage wall times: none now (every stage had finished before)" in again.stdout
    assert again.stderr.count("finished before, kept") == 6


@pytest.mark.heavy  # a whole campaign: the full suite runs it, the fast lane does not
def test_audit_reads_a_run_directory(by_lab_run):
    run_dir, _ = by_lab_run
    out = lab_cli("audit", "--run-dir", run_dir)
    for check in ("generation", "state_file", "plan_file", "public"):  # the optional files, found there
        assert f"ok {check}" in out.stdout, out.stdout


def test_lab_run_without_data_refuses_a_protocol_that_pins_other_files(tmp_path):
    out = lab_cli("run", "--protocol", DATASETS_DIR / "musique-sample-v1.json", "--run-dir", tmp_path / "run",
                  check=False)
    assert out.returncode == 2 and "does not pin `lab synth`'s default files" in out.stderr
    assert not (tmp_path / "run").exists()


def test_lab_run_refuses_an_existing_run_directory(tmp_path):
    (tmp_path / "run").mkdir()
    out = lab_cli("run", "--protocol", DATASETS_DIR / "synthetic-v1.json", "--run-dir", tmp_path / "run", check=False)
    assert out.returncode == 2 and "refusing to overwrite existing output" in out.stderr
    assert list((tmp_path / "run").iterdir()) == []


def test_a_step_without_its_file_or_a_run_dir_is_refused(tmp_path):
    out = lab_cli("export", "--fixture", tmp_path / "f.json", "--output", tmp_path / "p.json", check=False)
    assert out.returncode == 2 and "give --report FILE or --run-dir DIR (where it is report.json)" in out.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.heavy  # inputs embedded by the real model
def test_import_into_a_run_directory_keeps_its_protocol_there(tmp_path_factory, tmp_path):
    inputs = built_inputs(tmp_path_factory)
    run = RunDir(tmp_path / "run")
    out = lab_cli("import", "--protocol", inputs.protocol, "--data-dir", inputs.root / "synthetic", "--run-dir", run.root)
    assert f"wrote {run.protocol}" in out.stdout and run.source.is_file() and run.relations.is_file()
    assert json.loads(run.protocol.read_text()) == json.loads(inputs.protocol.read_text())
    other = RunDir(tmp_path / "other")
    other.root.mkdir()
    other.protocol.write_text((DATASETS_DIR / "synthetic-v1.json").read_text())
    out = lab_cli("import", "--protocol", inputs.protocol, "--data-dir", inputs.root / "synthetic", "--run-dir",
                  other.root, check=False)
    assert out.returncode == 2 and "is another protocol than --protocol" in out.stderr
    assert [p.name for p in other.root.iterdir()] == ["protocol.json"]


LAB = ".venv/bin/lab"  # how the README's commands invoke the lab from the clone: hints must print it so


def _interrupted(argv: list, run_dir, watch: str, sig: signal.Signals) -> subprocess.CompletedProcess:
    """The command line `argv` (as typed in the clone, from its root) in its own process group,
    sent `sig` once `watch` exists in the run directory: SIGINT to the whole group (what Ctrl-C in
    a terminal does), SIGKILL to it too (a crash), SIGTERM to the process alone (`kill PID`,
    `timeout`). Whatever the signal, no process the run started outlives it."""
    import os
    import time

    from tests.lab.lifetime import new_tag, start_tagged, survivors

    tag = new_tag()
    child = start_tagged(argv, tag)
    while child.poll() is None and not (run_dir / watch).exists():
        time.sleep(0.02)
    if child.poll() is None:
        time.sleep(0.2)
        if sig == signal.SIGTERM:
            os.kill(child.pid, sig)
        else:
            os.killpg(child.pid, sig)
    out, err = child.communicate(timeout=600)
    assert survivors(tag) == {}, f"still running after {sig.name} at {watch}"
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


def _printed_command(text: str) -> list[str]:
    """The command the lab printed to continue: after `continue with: `, or between backquotes."""
    import re
    import shlex

    found = (re.findall(rf"continue with: ({re.escape(LAB)} run --resume \S+)", text)
             or re.findall(rf"`({re.escape(LAB)} run --resume [^`]+)`", text))
    assert found, f"no command printed to continue, as invoked ({LAB}):\n{text}"
    return shlex.split(found[-1])


def _after_ctrl_c(stderr: str) -> list[str]:
    """What Ctrl-C printed: every line but the stages' progress (`== ...`, rates and ETAs)."""
    return [line for line in stderr.splitlines()
            if line.startswith(("interrupted:", "error:", "failed:", "Traceback")) or "Errno" in line
            or "--resume" in line]


@pytest.mark.heavy  # two campaigns, each stopped four times: the full suite runs it, the fast lane does not
# every stage meets SIGKILL, and SIGTERM or Ctrl-C (one path in `lab run`: both stop it as Ctrl-C does;
# a stage terminated by hand is tests/lab/test_hints.py's)
@pytest.mark.parametrize("signals", [("SIGTERM", "SIGKILL", "SIGINT", "SIGKILL"), ("SIGKILL", "SIGTERM", "SIGKILL", "SIGTERM")])
def test_a_run_stopped_at_every_stage_continues_with_the_printed_command_to_the_same_rankings(
        by_lab_run, tmp_path_factory, signals):
    """Import, embed, prepare and evaluate each interrupted (Ctrl-C, SIGTERM, or a crash that kills
    every process of the run), and nothing the run started survives; after Ctrl-C or SIGTERM the
    lab's one `interrupted:` line names the command, after a crash the refused rerun names it; each
    printed command is run as printed. The end: the same
    fixture bytes and rankings as the uninterrupted run, and the resumed run's own audit holds."""

    inputs = built_inputs(tmp_path_factory)
    run_dir = tmp_path_factory.mktemp("stopped") / "run"
    start = [LAB, "run", "--protocol", inputs.protocol, "--data-dir", inputs.root / "synthetic", "--run-dir", run_dir]
    argv = start
    watches = {"import": "run.json", "embed": "fixture.json.partial/batch-000002.npz", "prepare": "state.json",
               "evaluate": "report.json"}
    for (stage, watch), name in zip(watches.items(), signals):
        sig = getattr(signal, name)
        stopped = _interrupted(argv, run_dir, watch, sig)
        if stage != "import":  # an import takes well under a second: the signal may land after it
            assert stage not in json.loads((run_dir / "run.json").read_text())["done"], stopped.stderr
        if sig in (signal.SIGINT, signal.SIGTERM):
            assert stopped.returncode == 128 + sig, stopped.stderr
            # one line: no stage's error, no second hint, no traceback
            (line,) = _after_ctrl_c(stopped.stderr) or [""]
            assert line.startswith("interrupted:"), stopped.stderr
            argv = _printed_command(line)
        else:
            assert stopped.returncode == -signal.SIGKILL
            again = subprocess.run(list(map(str, start)), capture_output=True, text=True, timeout=120, cwd=REPO)
            assert again.returncode == 2, again.stderr  # the first command again: refused, naming the way on
            argv = _printed_command(again.stderr)
    assert argv == [LAB, "run", "--resume", str(run_dir)]
    assert not (run_dir / "fixture.json.partial").exists()
    finished = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=REPO)  # as printed
    assert finished.returncode == 0, finished.stderr
    assert "audit: all checks hold" in finished.stdout + finished.stderr or \
        json.loads((run_dir / "run.json").read_text())["done"][-1] == "audit"
    baseline, _ = by_lab_run
    assert (run_dir / "fixture.json").read_bytes() == (baseline / "fixture.json").read_bytes()

    def rankings(path):
        return sorted((r["query_id"], r["method"], r["ranking"]) for r in json.loads(path.read_text())["rows"])

    assert rankings(run_dir / "report.json") == rankings(baseline / "report.json")
    assert json.loads((run_dir / "public.json").read_text())["statistics"] == \
        json.loads((baseline / "public.json").read_text())["statistics"]
    # nothing of the run outlives it: no stage, no lab still holding the store
    assert "still serves" not in finished.stderr
    # the report says it was resumed, and its server resources cover each lab process measured
    # (Ctrl-C lets the stopped campaign record its server's summary; a crash records nothing)
    report = json.loads((run_dir / "report.json").read_text())
    assert len(report["resumed"]) == 1 and report["resumed"][0]["after_jobs"] >= 0
    assert report["resources"]["processes"] == (1 if signals[3] == "SIGKILL" else 2)
    page = (run_dir / "public.md").read_text()
    assert "| resumed | at " in page and "recorded jobs |" in page
