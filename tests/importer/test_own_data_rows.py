"""docs/own-data.md shows one complete row of each layout and the corpus file; this imports exactly
what the page shows (the JSON blocks under its `<!-- own-data: ... -->` markers), under each layout,
so the page cannot drift from what `lab protocol new` and `lab import` accept."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import REPO, lab_cli

PAGE = REPO / "docs" / "own-data.md"
BLOCK = re.compile(r"<!-- own-data: (\S+) (\S+) -->\n```json\n(.*?)\n```", re.S)


def shown() -> dict[str, str]:
    return {layout: text for layout, _, text in BLOCK.findall(PAGE.read_text(encoding="utf-8"))}


def test_the_page_shows_a_row_of_every_hipporag_layout_and_the_corpus():
    assert sorted(shown()) == ["hipporag_*", "hipporag_2wikimultihopqa_v1", "hipporag_hotpotqa_v1",
                               "hipporag_musique_v1"]


# the official-file layouts read the same rows (musique_v1 as JSON lines) without the corpus file
@pytest.mark.parametrize("layout, rows_of", [
    ("hipporag_musique_v1", "hipporag_musique_v1"), ("hipporag_hotpotqa_v1", "hipporag_hotpotqa_v1"),
    ("hipporag_2wikimultihopqa_v1", "hipporag_2wikimultihopqa_v1"), ("musique_v1", "hipporag_musique_v1"),
    ("hotpotqa_distractor_v1", "hipporag_hotpotqa_v1"), ("2wikimultihopqa_v1", "hipporag_2wikimultihopqa_v1"),
])
def test_the_rows_the_page_shows_import_as_shown(tmp_path, layout, rows_of):
    blocks = shown()
    data = tmp_path / "data"
    data.mkdir()
    rows = json.loads(blocks[rows_of])
    args = []
    if layout == "musique_v1":
        questions = data / "questions.jsonl"
        questions.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        questions = data / "questions.json"
        questions.write_text(blocks[rows_of], encoding="utf-8")
    if layout.startswith("hipporag_"):
        (data / "corpus.json").write_text(blocks["hipporag_*"], encoding="utf-8")
        args = ["--corpus", data / "corpus.json"]
    lab_cli("protocol", "new", "--questions", questions, *args, "--layout", layout, "--test", "all",
            "--output", tmp_path / "mine-v1.json")
    out = tmp_path / "out"
    lab_cli("import", "--protocol", tmp_path / "mine-v1.json", "--data-dir", data, "--output", out / "source.json",
            "--relations", out / "relations.json")
    source = json.loads((out / "source.json").read_text(encoding="utf-8"))
    assert source["counts"]["queries"]["test"] == len(rows) == 1
    titles = {d["title"] for d in source["documents"]}
    assert titles == {"Orin River", "Lake Tessa", "Mount Brel"}
    test = [q for q in source["queries"] if q.get("split", "test") == "test" and q["question"] == rows[0]["question"]]
    assert len(test) == 1
