"""Bad input is refused before anything exists: `lab protocol new` reads every row
it pins with the import's own reader (importer/cohort.py) and refuses a malformed file with exit 2 and
no protocol written; `lab run` reads them again before it creates the run directory, so a refused run
leaves no directory and the retry with the same --run-dir is accepted."""

from __future__ import annotations

import json

import pytest

from ground.artifacts import hop_category
from ground.files import save
from protocols.new import new_protocol
from tests.conftest import lab_cli
from tests.hipporag_fixtures import CORPUS, QUESTIONS, musique_twin, write_layout


def _two_hop(rows):
    return sum(1 for row in rows if hop_category(row["id"])[0] == 2)


def _spoil(folder, case):
    """Write one malformed input into `folder` (a HippoRAG MuSiQue twin); return the --test value."""
    rows, passages = musique_twin(folder, questions=40)
    questions = folder / QUESTIONS
    if case == "empty question file":
        questions.write_bytes(b"")
    elif case == "truncated JSON":
        questions.write_bytes(questions.read_bytes()[:-40])
    elif case == "non-UTF-8 bytes":
        questions.write_bytes(questions.read_bytes().replace(b'"question": "', b'"question": "\xff\xfe', 1))
    elif case == "corpus entry without text":
        entries = [{"title": t, "text": x} for t, x in passages]
        del entries[3]["text"]
        (folder / CORPUS).write_text(json.dumps(entries), encoding="utf-8")
    elif case == "more two-hop rows than the file holds":
        n = _two_hop(rows)
        return f"2={n + 18},3=0,4=0"
    return "all"


CASES = {
    "empty question file": f"{QUESTIONS}: not the HippoRAG layout: its question file is one JSON array, this is an empty file",
    "truncated JSON": "malformed JSON",
    "non-UTF-8 bytes": "codec can't decode",
    "corpus entry without text": f"{CORPUS}: row 4: not a HippoRAG corpus passage",
    "more two-hop rows than the file holds": "stratum 2-hop has",
}


@pytest.mark.parametrize("case", CASES)
def test_protocol_new_refuses_a_file_it_cannot_read_and_writes_nothing(tmp_path, case):
    data = tmp_path / "data"
    test = _spoil(data, case)
    out = tmp_path / "mine-v1.json"
    ran = lab_cli("protocol", "new", "--questions", data / QUESTIONS, "--corpus", data / CORPUS,
                  "--layout", "hipporag_musique_v1", "--test", test, "--output", out, check=False)
    assert ran.returncode == 2, ran.stderr
    error = [line for line in ran.stderr.splitlines() if line.startswith("error: ")]
    assert len(error) == 1 and CASES[case] in error[0], ran.stderr
    assert not out.exists()


def test_protocol_new_still_writes_a_protocol_for_good_files(tmp_path):
    data = tmp_path / "data"
    musique_twin(data, questions=12)
    out = tmp_path / "mine-v1.json"
    ran = lab_cli("protocol", "new", "--questions", data / QUESTIONS, "--corpus", data / CORPUS,
                  "--layout", "hipporag_musique_v1", "--test", "all", "--output", out)
    assert f"wrote {out}" in ran.stdout and out.is_file()


def test_lab_run_refuses_unreadable_rows_before_the_run_directory_exists(tmp_path):
    # a protocol frozen without reading its rows (as `lab protocol new` did before), over an empty file
    data = tmp_path / "data"
    rows, passages = musique_twin(data, questions=12)
    (data / QUESTIONS).write_text("[]", encoding="utf-8")
    protocol = new_protocol(questions=data / QUESTIONS, corpus=data / CORPUS, layout="hipporag_musique_v1",
                            test="all", development=None, version="unread-v1")
    save(tmp_path / "unread-v1.json", protocol)
    run_dir = tmp_path / "run"
    ran = lab_cli("run", "--protocol", tmp_path / "unread-v1.json", "--data-dir", data, "--run-dir", run_dir,
                  check=False)
    assert ran.returncode == 2, ran.stderr
    assert "selects no question row" in ran.stderr or "found no eligible row" in ran.stderr
    assert not run_dir.exists()


def test_lab_run_refuses_a_file_changed_since_the_protocol_before_the_run_directory_exists(tmp_path):
    data = tmp_path / "data"
    rows, passages = musique_twin(data, questions=12)
    lab_cli("protocol", "new", "--questions", data / QUESTIONS, "--corpus", data / CORPUS,
            "--layout", "hipporag_musique_v1", "--test", "all", "--output", tmp_path / "mine-v1.json")
    write_layout(data, rows[:-1], passages)  # one row fewer: the pinned hash no longer matches
    run_dir = tmp_path / "run"
    ran = lab_cli("run", "--protocol", tmp_path / "mine-v1.json", "--data-dir", data, "--run-dir", run_dir,
                  check=False)
    assert ran.returncode == 2, ran.stderr
    assert "the protocol pins" in ran.stderr
    assert not run_dir.exists()


def test_demo_without_the_shared_sample_says_what_the_data_is_and_where_it_lives(tmp_path):
    # what `make demo-sample` gives on a fresh clone (no ../shared)
    ran = lab_cli("demo", "--data-dir", tmp_path / "absent" / "musique-sample", "--run-dir", tmp_path / "run",
                  check=False)
    assert ran.returncode == 2
    assert "MuSiQue-Ans" in ran.stderr and "../shared/data" in ran.stderr and "make demo" in ran.stderr
    assert not (tmp_path / "run").exists()


def test_an_os_error_is_one_line_naming_the_file_and_the_way_on(tmp_path):
    # a real OS error: the output's folder is a file, so the folder cannot be made
    data = tmp_path / "data"
    musique_twin(data, questions=12)
    (tmp_path / "afile").write_text("x")
    ran = lab_cli("protocol", "new", "--questions", data / QUESTIONS, "--corpus", data / CORPUS,
                  "--layout", "hipporag_musique_v1", "--test", "all", "--output", tmp_path / "afile" / "mine-v1.json",
                  check=False)
    assert ran.returncode == 1
    failed = [line for line in ran.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and str(tmp_path / "afile") in failed[0] and "run the command again" in failed[0]
    assert "--resume" not in failed[0]  # only evaluate can resume
    assert "Traceback" not in ran.stderr


@pytest.mark.heavy  # a prepared lab on inputs embedded by the real model
def test_an_os_error_in_evaluate_says_resume_continues_and_only_evaluate_says_so(tmp_path_factory):
    """A real OS error inside `lab evaluate` (the report's folder is a file, so its lock cannot be
    made) is one line naming the file and saying the same command with --resume continues; other commands'
    OS errors (previous test) do not promise a resume they cannot do."""
    from tests.evaluation_fixtures import built_inputs, prepared_lab

    inputs = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp("evaluate-oserror")
    (root / "afile").write_text("x")
    prepared = prepared_lab(inputs, root / "lab")
    try:
        ran = prepared.evaluate(root / "plan.json", root / "afile" / "report.json", check=False)
    finally:
        assert prepared.lab.stop() == 0
    assert ran.returncode == 1, ran.stderr
    failed = [line for line in ran.stderr.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 1 and str(root / "afile") in failed[0], ran.stderr
    assert "the same command with --resume continues the campaign" in failed[0]
    assert "Traceback" not in ran.stderr
    assert not (root / "plan.json").exists()


def test_only_evaluate_declares_a_resume_way_on():
    from lab.cli import commands

    def leaves(cs):
        for c in cs:
            yield from (leaves(c.subcommands) if c.subcommands else [c])

    promising = sorted(c.name for c in leaves(commands()) if "--resume" in c.way_on)
    assert promising == ["evaluate"]
