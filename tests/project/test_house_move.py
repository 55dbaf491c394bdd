"""A report written by the lab before its code moved house is still audited clean by the code after it.

The move changed where modules and the committed protocol files live, never what they compute: the
run below is made by the last commit before the move (its own code, run from a `git archive` of
it), then audited, exported again and compared by today's `lab`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile

import pytest

from ground.canonical import digest
from ground.files import load_json
from protocols.committed import committed_file
from tests.conftest import REPO, lab_cli

BEFORE_THE_MOVE = "0c550c1"  # main before the ground floor, protocols/frozen/ and the evaluator by verb


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=False)


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    if _git("cat-file", "-e", f"{BEFORE_THE_MOVE}^{{commit}}").returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"commit {BEFORE_THE_MOVE} is not in this clone; CI needs the history")
        pytest.skip(f"commit {BEFORE_THE_MOVE} is not in this clone (a shallow checkout)")
    base = tmp_path_factory.mktemp("before-the-move")
    archive = base / "old.tar"
    archive.write_bytes(_git("archive", "--format=tar", BEFORE_THE_MOVE).stdout)
    with tarfile.open(archive) as tar:
        tar.extractall(base / "old", filter="data")
    run_dir = base / "run"
    env = {**os.environ, "PYTHONPATH": str(base / "old"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "lab", "run", "--protocol", "protocols/synthetic-v1.json",
                           "--run-dir", str(run_dir)], cwd=base / "old", env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return run_dir


@pytest.mark.slow  # the old commit's whole campaign (about two minutes): make test-long
def test_a_report_made_before_the_move_audits_clean(old_run):
    ran = lab_cli("audit", "--run-dir", old_run)
    assert "audit: all checks hold" in ran.stdout
    assert "FAIL" not in ran.stdout


@pytest.mark.slow  # the old commit's whole campaign (about two minutes): make test-long
def test_the_moved_protocol_file_is_the_one_the_old_report_binds(old_run):
    report = load_json(old_run / "report.json", "report")
    assert report["hash_chain"]["protocol"] == digest(load_json(committed_file("synthetic-v1"), "protocol"))


@pytest.mark.slow  # the old commit's whole campaign (about two minutes): make test-long
def test_exporting_it_again_writes_the_same_public_report_in_its_edition(old_run, tmp_path):
    """Drawn in the edition the old page names (none: 0), the report exports to the same bytes; an
    export today draws the current edition, which differs from the old page by that alone."""
    from evaluator.export.export import output_paths, public_outputs
    from evaluator.views import edition
    from ground.files import encode

    old = load_json(old_run / "public.json", "public report")
    report, fixture = (load_json(old_run / f"{name}.json", name) for name in ("report", "fixture"))
    generation = load_json(old_run / "generation.json", "generation") if "encoder" in old else None
    again, _ = public_outputs(report, fixture, output_paths(old_run / "public.json"), generation=generation,
                              view_edition=edition.edition(old))
    assert encode(again) == (old_run / "public.json").read_bytes()
    out = tmp_path / "public.json"
    lab_cli("export", "--run-dir", old_run, "--output", out)
    today = load_json(out, "public report")
    assert today[edition.FIELD] == edition.CURRENT and edition.FIELD not in old
