"""The HippoRAG layout: readers, the published cohorts' pins, refusals, the test-only warm-up, and
`lab protocol new` (docs/hipporag.md, docs/own-data.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builders.title_graph import build_for_source
from ground.artifacts import WARMUP_CORPUS, warmup_query
from ground.canonical import sha256_file
from ground.errors import RefusedInput
from importer import import_source
from importer.passages import GoldError
from importer.reading import SourceFileError
from lab.cli import main as lab
from protocols.committed import DATASETS_DIR
from protocols.new import new_protocol
from protocols.published import figures
from protocols.schema import ProtocolError, load_protocol, validate_protocol
from tests.conftest import SHARED_DATA, require_shared
from tests.hipporag_fixtures import CORPUS, QUESTIONS, context_twin, musique_twin, write_layout

PROTOCOLS = DATASETS_DIR
COHORTS = ("hipporag-musique-v1", "hipporag-2wikimultihopqa-v1", "hipporag-hotpotqa-v1")
HIPPORAG_SAMPLE = SHARED_DATA / "hipporag-musique-sample"
TWOWIKI_CORPUS = SHARED_DATA / "hipporag-2wikimultihopqa-corpus" / "2wikimultihopqa_corpus.json"
ISSUE_PINS = {  # the six published files, a second copy the protocols' pins are checked against: name -> (bytes, SHA-256)
    "musique.json": (12_543_629, "98ed4e21d3076532f6388d42320fb809599c63a0d8dffca8ece5e41922be6b46"),
    "musique_corpus.json": (6_239_261, "73157a03ce3f0b1a5673dd5dc12bb970c24976dbffc688af9eecdd758c97ffcb"),
    "2wikimultihopqa.json": (6_505_789, "895cba294064df0c3302c76847b1fc08d99b5619f7663dfaa3b65cd780f1cac4"),
    "2wikimultihopqa_corpus.json": (3_083_943, "9d6e352952aafb18dab22bf8195039461321a44a949df902ae83bce134ad238a"),
    "hotpotqa.json": (8_183_058, "3ad9c0bcbf93f41d7004ca6007049c904d2605046b314a2f7ecfb379c64cba6d"),
    "hotpotqa_corpus.json": (6_414_109, "9333647b922382776cd2cb02893b390d77984df85a91bfa8be411284978aca7d"),
}


def run_import(protocol, folder: Path, out: Path) -> dict:
    return import_source(protocol, folder, out / "source.json", out / "relations.json", graph_builder=build_for_source)


def twin_protocol(folder: Path, layout: str, path: Path, **extra) -> Path:
    protocol = new_protocol(questions=folder / QUESTIONS, corpus=folder / CORPUS, layout=layout, test="all",
                            development=None, version=path.stem)
    protocol.update(extra)
    path.write_text(json.dumps(validate_protocol(protocol), indent=2))
    return path


def assert_nothing_written(out: Path) -> None:
    assert not (out / "source.json").exists() and not (out / "relations.json").exists()


# ------------------------------------------------------------------------------------- the published cohorts


def test_published_cohort_protocols_pin_the_six_files_by_hash_and_size():
    pinned = {}
    for name in COHORTS:
        protocol = load_protocol(PROTOCOLS / f"{name}.json")
        assert protocol["selection"]["splits"] == {"test": {"source": "questions", "counts": "all"}}
        assert "test_only" in protocol and protocol["evaluation"]["warmup"] == WARMUP_CORPUS
        assert "graph_walk" in protocol["methods"] and len(protocol["methods"]) == 9
        assert protocol["evaluation"]["primary_contrast"]["candidate"] == "graph_walk"
        assert protocol["published_cohort"]["relation"] == "cohort"
        assert protocol["published_cohort"]["name"] in figures()["cohorts"]
        for entry in protocol["source_files"].values():
            pinned[entry["name"]] = (entry["bytes"], entry["sha256"])
    assert pinned == ISSUE_PINS


def test_the_2wiki_corpus_pin_is_the_real_file():
    require_shared(TWOWIKI_CORPUS)
    pin = load_protocol(PROTOCOLS / "hipporag-2wikimultihopqa-v1.json")["source_files"]["corpus"]
    assert (TWOWIKI_CORPUS.stat().st_size, sha256_file(TWOWIKI_CORPUS)) == (pin["bytes"], pin["sha256"])


@pytest.mark.parametrize("name", COHORTS)
def test_a_published_cohort_refuses_other_files_by_hash_before_reading_a_row(tmp_path, name):
    protocol = PROTOCOLS / f"{name}.json"
    folder, out = tmp_path / "data", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    with pytest.raises(SourceFileError, match="not found: .*the protocol pins"):
        run_import(protocol, folder, out)
    for entry in load_protocol(protocol)["source_files"].values():
        # not JSON at all: a parser would fail differently, so the refusal can only come from the bytes
        (folder / entry["name"]).write_bytes(b"not the published file \x00" * 4)
    with pytest.raises(SourceFileError, match="not the pinned file, refused before reading a row"):
        run_import(protocol, folder, out)
    assert_nothing_written(out)


def test_the_real_2wiki_corpus_passes_its_pin_and_the_other_file_is_refused(tmp_path):
    require_shared(TWOWIKI_CORPUS)
    folder, out = tmp_path / "data", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    shutil.copyfile(TWOWIKI_CORPUS, folder / TWOWIKI_CORPUS.name)
    (folder / "2wikimultihopqa.json").write_text("[]")
    with pytest.raises(SourceFileError, match=r"2wikimultihopqa\.json has 2 bytes .*not the pinned file"):
        run_import(PROTOCOLS / "hipporag-2wikimultihopqa-v1.json", folder, out)
    assert_nothing_written(out)


# ------------------------------------------------------------------------------------- the shared sample


def test_the_hipporag_sample_imports_as_musique_samples_train_rows(tmp_path):
    """Same 100 questions, same 1,890 passages: documents, queries (warm-up included) and relations
    equal to the import of musique-sample's train file under a test-only protocol."""
    require_shared(HIPPORAG_SAMPLE)
    sample = SHARED_DATA / "musique-sample"
    rows_protocol = tmp_path / "rows-v1.json"
    assert lab(["protocol", "new", "--questions", str(sample / "musique_sample_train.jsonl"), "--layout",
                "musique_v1", "--test", "all", "--output", str(rows_protocol)]) == 0
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    layout = run_import(PROTOCOLS / "hipporag-musique-sample-v1.json", HIPPORAG_SAMPLE, tmp_path / "a")
    rows = run_import(rows_protocol, sample, tmp_path / "b")
    assert layout["documents"] == rows["documents"] == 1890
    assert layout["queries"] == rows["queries"] == {"test": 100, "warmup": 1}
    a, b = (json.loads((tmp_path / side / "source.json").read_text()) for side in "ab")
    assert a["documents"] == b["documents"] and a["queries"] == b["queries"]
    assert a["corpus_policy"]["passages_in_file"] == 1890 and a["corpus_policy"]["duplicate_passages_collapsed"] == 0
    ra, rb = (json.loads((tmp_path / side / "relations.json").read_text()) for side in "ab")
    assert ra["relations"] == rb["relations"] and ra["relations_digest"] == rb["relations_digest"]


# ------------------------------------------------------------------------------------- readers and refusals


def test_a_musique_twin_imports_with_the_corpus_as_documents_and_the_warmup_query(tmp_path):
    rows, passages = musique_twin(tmp_path / "data", questions=10)
    # a passage no question uses is still a document: the corpus is the corpus, not the rows' union
    passages.append(("Unused Title", "A passage nobody asks about."))
    write_layout(tmp_path / "data", rows, passages)
    protocol = twin_protocol(tmp_path / "data", "hipporag_musique_v1", tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()
    summary = run_import(protocol, tmp_path / "data", tmp_path / "out")
    source = json.loads((tmp_path / "out" / "source.json").read_text())
    assert summary["documents"] == len(passages) and summary["queries"] == {"test": 10, "warmup": 1}
    assert source["row_format"] == "hipporag_musique_v1"
    assert any(doc["title"] == "Unused Title" for doc in source["documents"])
    warmups = [q for q in source["queries"] if q["split"] == "warmup"]
    assert warmups == [warmup_query(source["documents"])]
    assert warmups[0]["question"] not in {row["question"] for row in rows}


def test_an_exact_duplicate_passage_is_one_document_and_counted(tmp_path):
    rows, passages = musique_twin(tmp_path / "data", questions=6)
    write_layout(tmp_path / "data", rows, passages + [passages[0]])
    protocol = twin_protocol(tmp_path / "data", "hipporag_musique_v1", tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()
    assert run_import(protocol, tmp_path / "data", tmp_path / "out")["documents"] == len(passages)
    policy = json.loads((tmp_path / "out" / "source.json").read_text())["corpus_policy"]
    assert policy["passages_in_file"] == len(passages) + 1 and policy["duplicate_passages_collapsed"] == 1


def test_missing_gold_is_refused_with_counts_and_the_first_question(tmp_path):
    rows, passages = musique_twin(tmp_path / "data", questions=10)
    gold = {(p["title"], p["paragraph_text"]) for row in rows for p in row["paragraphs"] if p["is_supporting"]}
    dropped = sorted(gold)[0]
    hit = sorted({row["id"] for row in rows for p in row["paragraphs"]
                  if p["is_supporting"] and (p["title"], p["paragraph_text"]) == dropped})
    write_layout(tmp_path / "data", rows, [p for p in passages if p != dropped])
    protocol = twin_protocol(tmp_path / "data", "hipporag_musique_v1", tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()
    with pytest.raises(GoldError, match=rf"{len(hit)} gold passage\(s\) of {len(hit)} question\(s\) are not in the "
                                        rf"corpus \(matched by title and text\); first: question '.*', title "):
        run_import(protocol, tmp_path / "data", tmp_path / "out")
    assert_nothing_written(tmp_path / "out")


@pytest.mark.parametrize("shape,layout", [("2wikimultihopqa", "hipporag_2wikimultihopqa_v1"),
                                          ("hotpotqa", "hipporag_hotpotqa_v1")])
def test_context_twins_match_gold_by_title(tmp_path, shape, layout):
    rows, passages = context_twin(tmp_path / "data", shape)
    protocol = twin_protocol(tmp_path / "data", layout, tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()
    run_import(protocol, tmp_path / "data", tmp_path / "out")
    source = json.loads((tmp_path / "out" / "source.json").read_text())
    titles = {doc["id"]: doc["title"] for doc in source["documents"]}
    by_id = {row["_id"]: row for row in rows}
    for query in source["queries"]:
        if query["split"] == "test":
            assert sorted(titles[d] for d in query["judgments"]) == sorted({t for t, _ in by_id[query["id"]]["supporting_facts"]})
    corpus = dict(passages)
    joiner = "" if shape == "hotpotqa" else " "
    differs = sum(1 for row in rows for title in {t for t, _ in row["supporting_facts"]}
                  if joiner.join(dict(row["context"])[title]) != corpus[title])
    assert source["corpus_policy"]["gold_passages_whose_corpus_text_differs_from_the_question_context"] == differs


def test_a_gold_title_with_another_corpus_text_is_matched_and_counted(tmp_path):
    rows, passages = context_twin(tmp_path / "data", "2wikimultihopqa")
    protocol = twin_protocol(tmp_path / "data", "hipporag_2wikimultihopqa_v1", tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()
    run_import(protocol, tmp_path / "data", tmp_path / "out")
    before = json.loads((tmp_path / "out" / "source.json").read_text())["corpus_policy"]
    title = rows[0]["supporting_facts"][0][0]
    write_layout(tmp_path / "data", rows, [(t, x + " (edited)" if t == title else x) for t, x in passages])
    protocol = twin_protocol(tmp_path / "data", "hipporag_2wikimultihopqa_v1", tmp_path / "twin-v2.json")
    (tmp_path / "out2").mkdir()
    run_import(protocol, tmp_path / "data", tmp_path / "out2")
    after = json.loads((tmp_path / "out2" / "source.json").read_text())["corpus_policy"]
    key = "gold_passages_whose_corpus_text_differs_from_the_question_context"
    uses = sum(1 for row in rows if title in {t for t, _ in row["supporting_facts"]}
               and " ".join(dict(row["context"])[title]) == dict(passages)[title])
    assert after[key] == before[key] + uses and uses >= 1


def test_duplicate_passages_that_make_a_judgment_ambiguous_are_refused(tmp_path):
    rows, passages = context_twin(tmp_path / "data", "2wikimultihopqa")
    title = rows[0]["supporting_facts"][0][0]
    write_layout(tmp_path / "data", rows, passages + [(title, "Another text under the same title.")])
    protocol = twin_protocol(tmp_path / "data", "hipporag_2wikimultihopqa_v1", tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()
    uses = sum(1 for row in rows if title in {t for t, _ in row["supporting_facts"]})
    with pytest.raises(GoldError, match=rf"{uses} gold title\(s\) of {uses} question\(s\) are held by corpus passages "
                                        rf"of different texts.*first: question '.*', title '{title}' \(2 passages\)"):
        run_import(protocol, tmp_path / "data", tmp_path / "out")
    assert_nothing_written(tmp_path / "out")


def test_a_question_file_in_another_layout_is_refused(tmp_path):
    rows, passages = musique_twin(tmp_path / "data", questions=6)
    folder = tmp_path / "data"
    protocol_path = twin_protocol(folder, "hipporag_musique_v1", tmp_path / "twin-v1.json")
    (tmp_path / "out").mkdir()

    def repin_and_import(message):
        protocol = json.loads(protocol_path.read_text())
        for entry in protocol["source_files"].values():
            entry["sha256"] = sha256_file(folder / entry["name"])
            entry["bytes"] = (folder / entry["name"]).stat().st_size
        path = tmp_path / "repinned.json"
        path.write_text(json.dumps(protocol))
        with pytest.raises(RefusedInput, match=message):
            run_import(path, folder, tmp_path / "out")
        assert_nothing_written(tmp_path / "out")

    # the official MuSiQue file's shape (JSON lines) under the layout's name
    (folder / QUESTIONS).write_text("".join(json.dumps(row) + "\n" for row in rows))
    repin_and_import(r"questions\.json: not the HippoRAG layout: its question file is one JSON array, this is JSON lines")
    # the question file where the corpus belongs
    write_layout(folder, rows, passages)
    shutil.copyfile(folder / QUESTIONS, folder / CORPUS)
    repin_and_import(r"corpus\.json: row 1: not a HippoRAG corpus passage: expected exactly the string fields title "
                     r"and text, got \['answer', ")
    # 2Wiki rows under the MuSiQue layout
    context_rows, context_passages = context_twin(tmp_path / "ctx", "2wikimultihopqa")
    write_layout(folder, context_rows, context_passages)
    repin_and_import(r"questions\.json: row 1: not a musique_v1 row: key '_id' does not fit")


def test_protocol_schema_holds_the_layout_rules():
    protocol = load_protocol(PROTOCOLS / "hipporag-musique-v1.json")
    no_corpus = json.loads(json.dumps(protocol))
    del no_corpus["source_files"]["corpus"]
    with pytest.raises(ProtocolError, match="reads its documents from a 'corpus' file"):
        validate_protocol(no_corpus)
    development_warmup = json.loads(json.dumps(protocol))
    development_warmup["evaluation"]["warmup"] = "smallest_development_query_once_per_method"
    with pytest.raises(ProtocolError, match="needs a development split"):
        validate_protocol(development_warmup)
    unknown = json.loads(json.dumps(protocol))
    unknown["published_cohort"]["name"] = "somebody-else-1000"
    with pytest.raises(ProtocolError, match="published_cohort.name"):
        validate_protocol(unknown)


# ------------------------------------------------------------------------------------- lab protocol new


def test_protocol_new_pins_hashes_and_sizes_and_refuses_what_it_cannot_write(tmp_path, capsys):
    rows, _ = musique_twin(tmp_path / "data", questions=10)
    out = tmp_path / "mine-v1.json"
    args = ["protocol", "new", "--questions", str(tmp_path / "data" / QUESTIONS), "--corpus",
            str(tmp_path / "data" / CORPUS), "--layout", "hipporag_musique_v1", "--test", "2=2,3=1,4=1",
            "--development", "2=1,3=1,4=1", "--output", str(out)]
    assert lab(args) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    protocol = load_protocol(out)
    assert protocol["protocol_version"] == "mine-v1" and "test_only" not in protocol
    assert protocol["selection"]["splits"]["development"] == {"source": "questions", "counts": {"2": 1, "3": 1, "4": 1}}
    assert protocol["evaluation"]["warmup"] == "smallest_development_query_once_per_method"
    for entry in protocol["source_files"].values():
        path = tmp_path / "data" / entry["name"]
        assert (entry["sha256"], entry["bytes"]) == (sha256_file(path), path.stat().st_size)
    (tmp_path / "out").mkdir()
    summary = run_import(out, tmp_path / "data", tmp_path / "out")
    assert summary["queries"] == {"test": 4, "development": 3}
    before = out.read_bytes()
    assert lab(args) == 2  # an existing output is refused, untouched
    assert out.read_bytes() == before
    assert lab(["protocol", "new", "--questions", str(tmp_path / "data" / QUESTIONS), "--layout",
                "hipporag_musique_v1", "--test", "all", "--output", str(tmp_path / "x.json")]) == 2  # no --corpus
    assert lab(["protocol", "new", "--questions", str(tmp_path / "data" / QUESTIONS), "--corpus",
                str(tmp_path / "data" / CORPUS), "--layout", "hipporag_musique_v1", "--test", "2=3",
                "--output", str(tmp_path / "y.json")]) == 2
    assert "missing 3, 4" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()
