"""Dataset formats declared once (ground/artifacts.py ROW_FORMATS): the importer's readers and
`lab protocol new`'s templates derive from the declarations, the binding is checked at import, and
docs/extend-a-format.md is true: a toy format added through its steps imports real rows."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ground.artifacts import ROW_FORMATS, check_format_bindings
from importer.formats import READERS, bind_readers
from protocols.committed import committed_file
from protocols.new import TEMPLATES
from tests.lab.test_extend_a_method import changed_files

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "extend-a-format.md"
TOY = REPO / "tests" / "toy_format"
COPIED = ("ground", "protocols", "importer", "builders", "server", "evaluator", "lab", "scripts", "bench")
STEP = re.compile(r"^(\d+)\. \*\*`([^`]+)`\*\*( \(new\))?:", re.M)
COUNT = re.compile(r"^## The steps: (\d+) files?, (\d+) new$", re.M)


def test_readers_and_templates_derive_from_the_declarations():
    assert list(READERS) == list(ROW_FORMATS) == list(TEMPLATES)
    for name, row_format in ROW_FORMATS.items():
        assert READERS[name].row_format == row_format
        assert committed_file(TEMPLATES[name]).is_file()


def test_a_format_without_its_reader_stops_the_import():
    orphan = replace(ROW_FORMATS["musique_v1"], name="orphan_v1")
    with pytest.raises(RuntimeError, match=r"binds no reader to the row formats \['orphan_v1'\]"):
        bind_readers({**ROW_FORMATS, "orphan_v1": orphan})
    undeclared = {name: f for name, f in ROW_FORMATS.items() if name != "hotpotqa_distractor_v1"}
    with pytest.raises(RuntimeError, match=r"binds a reader to \['hotpotqa_distractor_v1'\], which ground/artifacts.py"):
        check_format_bindings("side", READERS, undeclared)


def test_a_reader_in_another_module_than_declared_stops_the_import():
    moved = {**ROW_FORMATS, "hipporag_musique_v1": replace(ROW_FORMATS["hipporag_musique_v1"], reader="musique")}
    with pytest.raises(RuntimeError, match=r"importer/formats/hipporag.py reads hipporag_musique_v1, which "
                                           r"ground/artifacts.py declares otherwise \(read by importer/formats/musique.py\)"):
        bind_readers(moved)


def _rows() -> list[dict]:
    def row(i: int, kind: str) -> dict:
        a, b = f"Alpha {i}", f"Beta {i}"
        return {"_id": f"toy{i}", "question": f"Which of {a} and {b}?", "answer": a, "type": kind,
                "supporting_facts": [[a, 0], [b, 1]],
                "context": [[a, [f"{a} is first.", "It is old."]], [b, [f"{b} is second.", f"It names {a}."]],
                            [f"Gamma {i}", ["A distractor."]]]}
    return [row(1, "bridge"), row(2, "comparison"), row(3, "bridge")]


def test_a_toy_format_through_the_documented_steps_imports(tmp_path):
    steps = [(path, bool(new)) for _, path, new in STEP.findall(PAGE.read_text())]
    files, new = map(int, COUNT.search(PAGE.read_text()).groups())
    assert (files, new) == (len(steps), sum(n for _, n in steps)) and files <= 3  # the goal the page is held to
    repo = tmp_path / "repo"
    for name in COPIED:
        shutil.copytree(REPO / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    artifacts = repo / "ground" / "artifacts.py"
    text = artifacts.read_text()
    head, sep, tail = text.partition("\n}\n# The HippoRAG layout")
    assert sep and steps[0] == ("ground/artifacts.py", False)
    artifacts.write_text(head + "\n" + (TOY / "entry.txt").read_text().rstrip("\n") + sep + tail)
    assert steps[1] == ("importer/formats/<format>.py", True)
    shutil.copyfile(TOY / "toyqa.py", repo / "importer" / "formats" / "toyqa.py")
    assert changed_files(repo) == {"importer/formats/toyqa.py": True, "ground/artifacts.py": False}

    data = tmp_path / "data"
    data.mkdir()
    (data / "toy.json").write_text(json.dumps(_rows()))
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1"}

    def lab(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "lab", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=180)

    done = lab("protocol", "new", "--layout", "toyqa_v1", "--questions", "data/toy.json", "--test", "all",
               "--output", "toy-v1.json", "--version", "toy-v1")
    assert done.returncode == 0, done.stdout + done.stderr
    # `lab protocol new` freezes what it writes: the lock beside it binds the file's digest
    from ground.canonical import digest

    lock = json.loads((tmp_path / "toy-v1.lock.json").read_text())
    assert lock["digest"] == digest(json.loads((tmp_path / "toy-v1.json").read_text()))
    done = lab("import", "--protocol", "toy-v1.json", "--data-dir", "data", "--output", "out/source.json",
               "--relations", "out/relations.json")
    assert done.returncode == 0, done.stdout + done.stderr
    source = json.loads((tmp_path / "out" / "source.json").read_text())
    # a test-only cohort (no --development) gets the corpus warm-up query beside its own (docs/hipporag.md)
    assert sorted(q["id"] for q in source["queries"]) == ["toy1", "toy2", "toy3", "warmup"]
    assert len(source["documents"]) == 9 and all(d["id"].startswith("toyqa-") for d in source["documents"])
    first = next(q for q in source["queries"] if q["id"] == "toy1")
    assert first["category"] == "bridge" and len(first["judgments"]) == 2 and len(first["evidence_chain"]) == 2
