"""evaluator/connection/lab_process.py: a lab started without a log file of the caller's leaves
nothing in the temp folder once it has ended as asked; a lab that ended otherwise keeps its log."""

from __future__ import annotations

import signal
import tempfile

import pytest

from evaluator.connection.lab_process import LabStartError, start_lab


@pytest.fixture
def temp_folder(tmp_path, monkeypatch):
    """The temp folder tempfile hands out, this test's own: what a lab leaves there is counted."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_a_lab_stopped_or_killed_leaves_no_log_behind(tmp_path, temp_folder):
    stopped = start_lab(tmp_path / "a" / "db", tmp_path / "a.json")
    killed = start_lab(tmp_path / "b" / "db", tmp_path / "b.json")
    assert {stopped.log_path.parent, killed.log_path.parent} == {temp_folder}
    assert "serving" in stopped.log()
    assert stopped.stop() == 0
    assert killed.kill() == -signal.SIGKILL
    assert list(temp_folder.iterdir()) == []


def test_a_lab_that_ended_otherwise_keeps_its_log(tmp_path, temp_folder):
    lab = start_lab(tmp_path / "db", tmp_path / "access.json")
    lab.process.send_signal(signal.SIGKILL)  # a crash the caller did not ask for
    lab.process.wait()
    assert lab.stop() == -signal.SIGKILL
    assert list(temp_folder.iterdir()) == [lab.log_path] and "serving" in lab.log()


def test_a_failed_start_carries_the_labs_output_and_leaves_no_log(tmp_path, temp_folder):
    (tmp_path / "db").write_text("a file where the store's folder goes")
    with pytest.raises(LabStartError, match="lab exited with code 2") as refused:
        start_lab(tmp_path / "db", tmp_path / "access.json")
    assert "error:" in str(refused.value)
    assert list(temp_folder.iterdir()) == []


def test_a_log_of_the_callers_is_kept(tmp_path):
    lab = start_lab(tmp_path / "db", tmp_path / "access.json", log_path=tmp_path / "lab.log")
    assert lab.stop() == 0
    assert "stopped" in (tmp_path / "lab.log").read_text()
