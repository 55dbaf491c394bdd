"""docs/graph-import.md, run as a user would: the page's files and commands from a file to an audited
report, the audit failing once a triple of the pinned graph is edited, and `lab run` refusing a bad
graph before it writes anything."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ground.canonical import digest
from protocols.committed import committed_file
from tests.conftest import REPO, lab_cli
from tests.importer.test_own_data_rows import shown as own_data_blocks

PAGE = REPO / "docs" / "graph-import.md"
BLOCK = re.compile(r"<!-- graph-import: (\S+) -->\n```(?:json|bash)\n(.*?)\n```", re.S)


def page_blocks() -> dict[str, str]:
    return dict(BLOCK.findall(PAGE.read_text(encoding="utf-8")))


def lay_out(folder: Path) -> list[list[str]]:
    """The page's files in `folder` (data/ from docs/own-data.md, graph/ from this page) and its commands."""
    own, blocks = own_data_blocks(), page_blocks()
    (folder / "data").mkdir(parents=True)
    (folder / "graph").mkdir()
    (folder / "data" / "questions.json").write_text(own["hipporag_musique_v1"], encoding="utf-8")
    (folder / "data" / "corpus.json").write_text(own["hipporag_*"], encoding="utf-8")
    (folder / "graph" / "triples.jsonl").write_text(blocks["triples.jsonl"] + "\n", encoding="utf-8")
    return [shlex.split(line) for line in blocks["commands"].splitlines() if line.strip()]


def run(folder: Path, argv: list[str]) -> subprocess.CompletedProcess:
    assert argv[0] == "lab"
    return subprocess.run([sys.executable, "-m", "lab", *argv[1:]], cwd=folder, capture_output=True, text=True,
                          timeout=600)


def test_the_page_shows_its_files_and_commands():
    blocks = page_blocks()
    assert sorted(blocks) == ["commands", "triples.jsonl"]
    commands = [shlex.split(line) for line in blocks["commands"].splitlines()]
    assert [c[:3] for c in commands] == [["lab", "protocol", "new"], ["lab", "run", "--protocol"]]


@pytest.mark.heavy  # a whole campaign with the real model
def test_the_page_runs_from_file_to_audited_report_and_an_edited_triple_fails_the_audit(tmp_path):
    commands = lay_out(tmp_path)
    for argv in commands:
        done = run(tmp_path, argv)
        assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "audit: all checks hold" in done.stdout + done.stderr
    run_dir = tmp_path / "runs" / "mine-graph"
    relations = json.loads((run_dir / "relations.json").read_text(encoding="utf-8"))
    assert relations["method"] == "imported_triples_v1"
    assert relations["imported"]["counts"]["triples_kept"] == 3
    # Orin River is named by two passages' triples (subject of one, object of none: "Lake Tessa" is shared)
    shared = [r["provenance"]["evidence_ref"] for r in relations["relations"] if r["kind"] == "shares_argument"]
    assert shared == ["argument:lake tessa\npredicates:flows into | is the largest lake of"]
    public = (run_dir / "public.md").read_text(encoding="utf-8")
    assert "format lab_triples_v1, made by my-extractor 1.0: 3 of 3 graph passages matched, 3 of 3 triples kept" in public
    # the report's provenance and counts are the relations file's: an edited count fails the audit
    report = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert report["imported_graph"]["counts"] == relations["imported"]["counts"]
    report["imported_graph"]["counts"]["triples_kept"] = 4
    (run_dir / "edited-report.json").write_text(json.dumps(report), encoding="utf-8")
    audit = run(tmp_path, ["lab", "audit", "--run-dir", str(run_dir), "--report", str(run_dir / "edited-report.json")])
    assert audit.returncode == 1 and "imported_graph" in audit.stdout + audit.stderr
    # one triple of the pinned graph edited: the audit fails, with the digest made to follow too
    triple = relations["imported"]["documents"][0]["triples"][0]
    triple[2] = "Mount Brel"
    (run_dir / "relations.json").write_text(json.dumps(relations), encoding="utf-8")
    audit = run(tmp_path, ["lab", "audit", "--run-dir", str(run_dir)])
    assert audit.returncode != 0 and "imported_digest" in audit.stdout + audit.stderr
    relations["imported_digest"] = digest(relations["imported"])
    (run_dir / "relations.json").write_text(json.dumps(relations), encoding="utf-8")
    audit = run(tmp_path, ["lab", "audit", "--run-dir", str(run_dir)])
    assert audit.returncode != 0


def test_lab_run_refuses_a_graph_that_misses_the_corpus_before_writing(tmp_path):
    commands = lay_out(tmp_path)
    relative = ("data/", "graph/", "mine-graph-v1.json")
    lab_cli(*[tmp_path / a if a.startswith(relative) else a for a in commands[0][1:]])
    triples = tmp_path / "graph" / "triples.jsonl"
    # the pinned file, rewritten: refused by its hash before it is read
    triples.write_text(triples.read_text(encoding="utf-8").replace("Velmar", "Vilmar"), encoding="utf-8")
    ran = lab_cli("run", "--protocol", tmp_path / "mine-graph-v1.json", "--data-dir", tmp_path / "data",
                  "--graph-dir", tmp_path / "graph", "--run-dir", tmp_path / "runs" / "r", check=False)
    assert ran.returncode == 2 and "not the pinned graph, refused before reading it" in ran.stderr
    assert not (tmp_path / "runs").exists()


def test_protocol_new_refuses_graph_flags_without_a_graph_and_a_graph_without_its_producer(tmp_path):
    commands = lay_out(tmp_path)
    base = ["protocol", "new", "--questions", tmp_path / "data" / "questions.json", "--corpus",
            tmp_path / "data" / "corpus.json", "--layout", "hipporag_musique_v1", "--test", "all", "--output",
            tmp_path / "p.json"]
    ran = lab_cli(*base, "--producer", "x", check=False)
    assert ran.returncode == 2 and "go with --graph" in ran.stderr
    ran = lab_cli(*base, "--graph", tmp_path / "graph" / "triples.jsonl", "--graph-format", "lab_triples_v1", check=False)
    assert ran.returncode == 2 and "--graph needs --graph-format and --producer" in ran.stderr
    ran = lab_cli(*base, "--graph", tmp_path / "graph" / "triples.jsonl", "--graph-format", "lab_triples_v1",
                  "--producer", "x", "--allow", "everything", check=False)
    assert ran.returncode == 2 and "--allow 'everything'" in ran.stderr
    assert not (tmp_path / "p.json").exists() and commands


@pytest.mark.parametrize("damage, message", [
    (lambda text: text[:-30], "not a JSON object"),
    (lambda text: text.replace('"predicate": "is near"', '"predicate": ""'), "line 3, predicate: '' is not a non-blank string"),
])
def test_protocol_new_refuses_a_damaged_graph_in_one_line_and_writes_nothing(tmp_path, damage, message):
    commands = lay_out(tmp_path)
    triples = tmp_path / "graph" / "triples.jsonl"
    triples.write_text(damage(triples.read_text(encoding="utf-8")), encoding="utf-8")
    relative = ("data/", "graph/", "mine-graph-v1.json")
    ran = lab_cli(*[tmp_path / a if a.startswith(relative) else a for a in commands[0][1:]], check=False)
    error = [line for line in ran.stderr.splitlines() if line.startswith("error:")]
    assert ran.returncode == 2 and len(error) == 1 and message in error[0], ran.stderr
    assert not (tmp_path / "mine-graph-v1.json").exists()


def test_a_graph_folder_for_a_protocol_that_pins_no_graph_is_refused(tmp_path):
    ran = lab_cli("run", "--protocol", committed_file("hipporag-musique-sample-v1.json"), "--data-dir", tmp_path,
                  "--graph-dir", tmp_path, "--run-dir", tmp_path / "r", check=False)
    assert ran.returncode == 2 and "pins no external graph" in ran.stderr and not (tmp_path / "r").exists()


def test_protocol_new_asks_the_question_its_flag_names_and_says_so(tmp_path):
    """--graph asks the imported graph's question by default and says which others it could ask;
    --question hipporag2 writes HippoRAG 2's (against semantic, read first on R@5); a method that
    is no flagship of the protocol is refused with the ones that are."""
    commands = lay_out(tmp_path)
    relative = ("data/", "graph/", "mine-graph-v1.json")
    argv = [tmp_path / a if a.startswith(relative) else a for a in commands[0][1:]]
    made = lab_cli(*argv)
    assert "pinned graph file: triples.jsonl (" in made.stdout and "pinned graph graph" not in made.stdout
    assert ("question: graph_hybrid_imported - graph_hybrid_balanced on ndcg@10 (confirmatory); --question "
            "hipporag2 asks another") in made.stdout
    out = tmp_path / "mine-h2-v1.json"
    argv[argv.index("--output") + 1] = out
    made = lab_cli(*argv, "--question", "hipporag2")
    assert "question: hipporag2 - semantic on recall@5 (confirmatory)" in made.stdout
    protocol = json.loads(out.read_text(encoding="utf-8"))
    assert protocol["evaluation"]["primary_contrast"] == {"candidate": "hipporag2", "baseline": "semantic",
                                                          "label": "confirmatory"}
    assert protocol["evaluation"]["contrast_metrics"][0] == "recall@5"
    argv[argv.index("--output") + 1] = tmp_path / "bad.json"
    refused = lab_cli(*argv, "--question", "lexical", check=False)
    assert refused.returncode == 2 and "flagship methods are graph_hybrid_imported, hipporag2" in refused.stderr
    assert not (tmp_path / "bad.json").exists()
