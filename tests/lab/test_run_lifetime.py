"""Everything a lab command starts dies with it: `lab embed` and `lab evaluate` killed (SIGKILL, a
crash) or terminated (SIGTERM, `kill` or `timeout`) leave no process behind, and SIGTERM prints the
one line Ctrl-C prints. `lab run` (which `lab demo` is) is stopped at every stage in
tests/lab/test_lab_run.py, with the same survivor check; the demo's terminal is checked here."""

from __future__ import annotations

import signal

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import built_inputs, prepared_lab
from tests.lab.lifetime import kill_when, new_tag, start_tagged, survivors, tagged

LAB = ".venv/bin/lab"


@pytest.fixture(scope="module")
def imported_run(tmp_path_factory):
    """The demo's synthetic corpus (about 2,100 documents, so the encoders are still busy when
    killed) imported into a run directory."""
    root = tmp_path_factory.mktemp("lifetime")
    lab_cli("synth", "--output-dir", root / "data")
    return root


def _embed_run(root, name):
    from protocols.committed import committed_file

    run = root / name
    run.mkdir()
    (run / "protocol.json").write_bytes(committed_file("synthetic-v1").read_bytes())
    lab_cli("import", "--run-dir", run, "--data-dir", root / "data")
    return run


def _one_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if x.startswith(("interrupted:", "error:", "failed:", "Traceback"))]
    return line


@pytest.mark.heavy  # two model loads per signal
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_embed_takes_its_encoder_workers_with_it(imported_run, sig):
    run = _embed_run(imported_run, f"embed-{sig.name}")
    tag = new_tag()
    child = start_tagged([LAB, "embed", "build", "--run-dir", run], tag)
    # the second encoder is a spawned worker process: wait until it exists beside the stage
    _, err = kill_when(child, lambda: (run / "fixture.json.partial" / "batch-000002.npz").exists()
                       and len(tagged(tag)) >= 3, sig)
    assert survivors(tag) == {}
    if sig == signal.SIGTERM:
        assert child.returncode == 143, err
        line = _one_line(err)
        assert line == f"interrupted: stopped; every encoded batch is kept beside the fixture; continue with: " \
                       f"{LAB} embed build --run-dir {run}"
    else:
        assert child.returncode == -signal.SIGKILL


@pytest.mark.heavy  # a small campaign per signal, its page checks on a local Dask cluster
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_evaluate_takes_its_dask_workers_with_it(tmp_path_factory, tmp_path, sig):
    inputs = built_inputs(tmp_path_factory)
    prepared = prepared_lab(inputs, tmp_path / "lab")
    try:
        tag = new_tag()
        argv = [LAB, *prepared.evaluate_args(tmp_path / "plan.json", tmp_path / "report.json"), "--workers", "1"]
        child = start_tagged(argv, tag)
        # evaluate, its Dask nanny's worker process and more: kill once the cluster is up
        _, err = kill_when(child, lambda: len(tagged(tag)) >= 2 and (tmp_path / "report.json").exists(), sig)
        assert survivors(tag) == {}
        if sig == signal.SIGTERM:
            assert child.returncode == 143, err
            assert _one_line(err).startswith("interrupted: stopped; the report and its journal keep every recorded "
                                             "job; while the lab still runs, continue with: ")
    finally:
        assert prepared.lab.stop() == 0


@pytest.mark.slow  # the whole synthetic demo (about a minute and a half): make test-long; make test checks
# the same terminal on `lab run` (tests/lab/test_lab_run.py), the one code path both print through
def test_the_demo_terminal_fits_two_screens_and_ends_on_the_answer(tmp_path):
    run = tmp_path / "demo"
    tag = new_tag()
    child = start_tagged([LAB, "demo", "--run-dir", run], tag)
    out, err = child.communicate(timeout=900)
    assert child.returncode == 0, err[-3000:]
    assert survivors(tag, within=5) == {}
    lines = (out + err).splitlines()
    assert len(lines) < 100, "\n".join(lines)
    # the last lines: the answer box, then the method table and its note
    text = out.rstrip()
    assert text.rfind("## Answer") < text.rfind("## Leaderboard on nDCG@10") < text.rfind("| graph_hybrid_balanced")
    assert text.splitlines()[-1].startswith("Cost is the median HTTP time")
    assert f"the full report: {run / 'public.md'}" in out
    # no third-party bars or warnings inside the lab's own lines
    for noise in ("Loading weights", "it/s]", "Port 8787", "UserWarning", "Warning:"):
        assert noise not in out + err, noise
    assert "== audit: exit 0" in err and "audit: all checks hold" in err
    assert (run / "stages.log").is_file() and "ok pages" in (run / "stages.log").read_text()


@pytest.mark.heavy  # sixteen commands, each stopped in its first 0.3 s
def test_a_ctrl_c_in_a_commands_first_instants_ends_it_with_130_and_one_line_at_most():
    """A stage (`python -m lab`, started as `lab run` starts it) sent Ctrl-C at sixteen instants of
    its first 0.3 s after it listens, while its modules and the command's libraries load: each ends
    with exit code 130 and no more than the one `interrupted:` line. Raised inside an import, the
    KeyboardInterrupt could end it with -2 (killed by SIGINT), or pass for a broken NumPy (exit 1),
    or be taken for a missing module and lost, the command running to its end."""
    import subprocess
    import sys
    import time

    from lab.pipeline import _listens_to_ctrl_c
    from tests.conftest import REPO

    def ignore_ctrl_c() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    outcomes = []
    for step in range(16):
        child = subprocess.Popen([sys.executable, "-m", "lab", "bench", "leaderboard", "--queries", "8000",
                                  "--datasets", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 cwd=REPO, start_new_session=True, preexec_fn=ignore_ctrl_c)
        deadline = time.monotonic() + 60
        while not _listens_to_ctrl_c(child.pid) and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(step * 0.02)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)
        lines = err.strip().splitlines()
        quiet = lines == [] or (len(lines) == 1 and lines[0].startswith("interrupted: stopped by Ctrl-C"))
        outcomes.append((step * 0.02, child.returncode, quiet or err[-300:]))
    assert [o for o in outcomes if o[1] != 130 or o[2] is not True] == [], outcomes


# at once, inside the window where a start used to die with a traceback (up to about 0.25 s), and after it
@pytest.mark.parametrize("delay", [0.0, 0.1, 0.6])
def test_a_stage_stopped_as_it_starts_stops_at_once_and_quietly(delay):
    """Ctrl-C reaching `lab run` in a stage's first instants: the stage starts with Ctrl-C ignored
    until `python -m lab` restores it, so no interpreter dies mid-start with a traceback, and one
    that came before it listened is passed on again; either way the stage ends within seconds."""
    import subprocess
    import sys
    import time

    from tests.conftest import REPO
    from tests.lab.lifetime import as_at_a_terminal

    script = (f"import os, signal, sys, threading\n"
              f"from lab.pipeline import _call\n"
              f"try:\n"
              f"    threading.Timer({delay}, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
              f"    _call([sys.executable, '-m', 'lab', 'bench', 'leaderboard', '--queries', '8000', '--datasets', '2'],"
              f" None)\n"
              f"except KeyboardInterrupt:\n"
              f"    print('stopped', flush=True)\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO,
                          preexec_fn=as_at_a_terminal)
    assert done.stdout.strip() == "stopped" and done.stderr == "", done.stderr
    assert time.monotonic() - started < 15
