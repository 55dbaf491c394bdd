"""Your own protocol, frozen like the lab's: a lock beside it, checked by `lab run` before it writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ground.canonical import digest
from ground.errors import RefusedInput
from protocols import locks
from protocols.committed import DATASETS_DIR, FROZEN_DIR
from protocols.derivations.suite_pin import SuitePin
from protocols.registry import DECLARED
from protocols.schema import load_protocol
from tests.conftest import REPO

SYNTHETIC = DATASETS_DIR / "synthetic-v1.json"


def lab(*args, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lab", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def own(tmp_path: Path, name: str = "mine-v1", edit=None) -> Path:
    value = json.loads(SYNTHETIC.read_text())
    value["protocol_version"] = name
    if edit:
        edit(value)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(value, indent=1))
    return path


def test_the_declared_locks_are_every_declared_protocol_s_digest():
    """protocols/frozen/declared.lock.json is what `lab run` compares a lab name against: one entry per
    declared protocol, its committed file's digest (a new declared protocol adds its line)."""
    want = {e.name: digest(load_protocol(FROZEN_DIR / e.file)) for e in DECLARED if not isinstance(e.step, SuitePin)}
    assert locks.declared_digests() == want, json.dumps(dict(sorted(want.items())), indent=2)


def test_freeze_writes_a_lock_once_and_show_reads_any_file(tmp_path):
    path = own(tmp_path)
    done = lab("protocol", "freeze", path)
    assert done.returncode == 0, done.stderr
    lock = json.loads((tmp_path / "mine-v1.lock.json").read_text())
    assert lock["digest"] == digest(load_protocol(path)) and lock["protocol_version"] == "mine-v1"
    assert f"wrote {tmp_path / 'mine-v1.lock.json'}" in done.stdout
    again = lab("protocol", "freeze", path)
    assert again.returncode == 0 and "already frozen" in again.stdout and "nothing written" in again.stdout
    shown = lab("protocol", "show", path)
    assert shown.returncode == 0 and f"frozen: by its lock {tmp_path / 'mine-v1.lock.json'}" in shown.stdout
    assert f"digest: {lock['digest']}" in shown.stdout and "primary contrast: graph_hybrid_balanced" in shown.stdout
    assert "NOT frozen" in lab("protocol", "show", own(tmp_path, "other-v1")).stdout
    assert "the lab's own protocol synthetic-v1, unchanged" in lab("protocol", "show", SYNTHETIC).stdout


def _contrast(value):
    value["evaluation"]["primary_contrast"]["baseline"] = "lexical"


def _k1(value):
    value["ranking_profiles"]["bm25_v1"]["k1"] = 1.5


@pytest.mark.parametrize("case, expected", [
    ("edited after freezing", "no longer matches its lock"),
    ("an edited copy keeping the frozen name", "that "),
    ("the lab's name with other content", "carries the name of the lab's protocol synthetic-v1"),
    ("a catalog copy the lab does not serve", "differs from the lab's catalog (fields: k1)"),
])
def test_lab_run_refuses_before_writing_anything(tmp_path, case, expected):
    frozen = own(tmp_path)
    assert lab("protocol", "freeze", frozen).returncode == 0
    if case == "edited after freezing":
        path = own(tmp_path, edit=_contrast)
        expected += f" {tmp_path / 'mine-v1.lock.json'} (changed: evaluation.primary_contrast)"
    elif case == "an edited copy keeping the frozen name":
        value = json.loads(frozen.read_text())
        _contrast(value)
        path = tmp_path / "copy.json"
        path.write_text(json.dumps(value))
        expected += (f"another lock froze with other content: {tmp_path / 'mine-v1.lock.json'} (changed: "
                     f"evaluation.primary_contrast)")
    elif case == "the lab's name with other content":
        path = own(tmp_path, "synthetic-v1", edit=_contrast)
    else:
        path = own(tmp_path, "mine-k1-v1", edit=_k1)
    done = lab("run", "--protocol", path, "--run-dir", tmp_path / "run")
    assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()
    assert lab("protocol", "show", path).returncode == 1


def test_freeze_refuses_what_lab_run_refuses_and_says_a_new_profile_is_code(tmp_path):
    path = own(tmp_path, "mine-k1-v1", edit=_k1)
    done = lab("protocol", "freeze", path)
    assert done.returncode == 2 and "differs from the lab's catalog (fields: k1)" in done.stderr, done.stderr
    assert "a changed one is a new profile, added in protocols/families/" in done.stderr
    assert not locks.lock_path(path).exists()


def test_a_lock_moved_away_does_not_unfreeze_a_name_earlier_runs_bound(tmp_path):
    """The run root remembers: a run of mine-v1 kept the lock beside its protocol.json (as `lab run`
    writes it), so an edited mine-v1 without its lock is refused there before anything is written;
    the unedited one, lock or no lock, is frozen (its content is what that lock froze)."""
    from ground.files import save

    path = own(tmp_path)
    earlier = tmp_path / "runs" / "first"
    earlier.mkdir(parents=True)
    save(earlier / "protocol.json", load_protocol(path))
    save(earlier / "protocol.lock.json", locks.make_lock(load_protocol(path)))
    (tmp_path / "moved").mkdir()  # the file, edited, where no lock froze it
    edited = own(tmp_path / "moved", edit=_contrast)
    done = lab("run", "--protocol", edited, "--run-dir", tmp_path / "runs" / "second")
    assert done.returncode == 2, done.stderr
    assert f"another lock froze with other content: the lock of the earlier run {earlier} (changed: " \
           f"evaluation.primary_contrast)" in done.stderr
    assert not (tmp_path / "runs" / "second").exists()
    standing = locks.status(path, load_protocol(path), tmp_path / "runs")
    assert standing.frozen and standing.line.startswith("frozen: no lock beside it, but its content is what")
    alone = locks.status(path, load_protocol(path), tmp_path / "elsewhere")
    assert not alone.frozen and alone.line.startswith("NOT frozen:")


def test_protocol_new_writes_its_lock(tmp_path):
    from protocols.locks import lock_path

    with pytest.raises(RefusedInput, match="with other content"):
        locks.check_frozen(tmp_path / "x.json", {**load_protocol(SYNTHETIC), "title": "changed"})
    assert lock_path(tmp_path / "mine-v1.json") == tmp_path / "mine-v1.lock.json"


def test_two_reports_with_one_name_and_two_protocols_are_named_in_a_comparison():
    from evaluator.compare.compare import same_name_warnings

    a = {"protocol_version": "mine-v1", "hash_chain": {"protocol": "a" * 64}}
    b = {"protocol_version": "mine-v1", "hash_chain": {"protocol": "b" * 64}}
    (line,) = same_name_warnings([("A", a), ("B", b)])
    assert line.startswith("protocol mine-v1 names 2 different protocols: A digest aaaaaaaaaaaa; B digest bbbbbbbbbbbb")
    assert same_name_warnings([("A", a), ("B", dict(a))]) == []


def test_freeze_and_show_hold_a_file_to_the_runs_under_the_run_root_as_lab_run_does(tmp_path):
    """An edited mine-v1 that two earlier runs ran frozen: `lab run` beside them refuses it, and so
    do `lab protocol freeze` and `show` with that run root, naming the reason once for both runs."""
    from ground.files import save

    path = own(tmp_path)
    for name in ("first", "second"):
        earlier = tmp_path / "runs" / name
        earlier.mkdir(parents=True)
        save(earlier / "protocol.json", load_protocol(path))
        save(earlier / "protocol.lock.json", locks.make_lock(load_protocol(path)))
    (tmp_path / "moved").mkdir()
    edited = own(tmp_path / "moved", edit=_contrast)
    run = lab("run", "--protocol", edited, "--run-dir", tmp_path / "runs" / "third")
    frozen = lab("protocol", "freeze", edited, "--run-root", tmp_path / "runs")
    shown = lab("protocol", "show", edited, "--run-root", tmp_path / "runs")
    assert run.returncode == 2 and frozen.returncode == 2 and shown.returncode == 1
    for said in (run.stderr, frozen.stderr, shown.stdout):
        assert "other locks froze with other content: the lock of the earlier run " in said, said
        assert said.count("a frozen name is never reused") == 1, said
    assert not locks.lock_path(edited).exists()
    # elsewhere (no runs under the root) the same file freezes, as `lab run` elsewhere would run it
    assert lab("protocol", "freeze", edited, "--run-root", tmp_path / "elsewhere").returncode == 0
