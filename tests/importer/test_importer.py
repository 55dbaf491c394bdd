"""The MuSiQue importer: the sample imported end to end, the reference cohort, every refusal of docs/design.md §4."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from builders.title_graph import build_for_source
from ground.artifacts import validate_source
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import load_json
from importer import import_source
from protocols.committed import committed_file
from protocols.selection import select_rows
from tests.builders.test_graph_builder import brute_force
from tests.conftest import SAMPLE_DIR, SHARED_DATA, lab_cli, require_shared

SAMPLE_PROTOCOL = committed_file("musique-sample-v1.json")
LAB_IMPORT = [sys.executable, "-m", "lab", "import"]  # `lab import` in its own process
SEED = "qilbeedb-graph-20260921-v1"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def sample_protocol() -> dict:
    require_shared(SAMPLE_DIR)
    return json.loads(SAMPLE_PROTOCOL.read_text())


def sample(role: str, protocol: dict) -> list[dict]:
    return read_jsonl(SAMPLE_DIR / protocol["source_files"][role]["name"])


def seeded_order(seed: str, row_id: str) -> tuple[str, str]:
    # the selection key written out with hashlib, independently of ground.digest
    key = json.dumps([seed, row_id], separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(key).hexdigest(), row_id


def expected_cohort(protocol: dict) -> dict[str, list[dict]]:
    selection, taken, out = protocol["selection"], set(), {}
    for split in selection["order"]:
        spec = selection["splits"][split]
        by_hop = defaultdict(list)
        for row in sample(spec["source"], protocol):
            if row["question"].strip().casefold() not in taken:
                by_hop[int(row["id"][0])].append(row)
        chosen = []
        for hop, n in spec["counts"].items():
            chosen += sorted(by_hop[int(hop)], key=lambda r: seeded_order(selection["seed"], r["id"]))[:n]
        out[split] = sorted(chosen, key=lambda r: r["id"])
        taken |= {r["question"].strip().casefold() for r in chosen}
    return out


# --- the sample, end to end ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def imported(sample_protocol, tmp_path_factory):
    runs = []
    for name in ("first", "second"):
        out = tmp_path_factory.mktemp(name)
        summary = import_source(SAMPLE_PROTOCOL, SAMPLE_DIR, out / "source.json", out / "relations.json", graph_builder=build_for_source)
        runs.append((summary, out))
    return runs


def test_sample_imports_twice_with_identical_digests_and_bytes(imported):
    (first, a), (second, b) = imported
    assert first["source_digest"] == second["source_digest"]
    assert first["relations_digest"] == second["relations_digest"]
    for name in ("source.json", "relations.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    source = load_json(a / "source.json")
    assert digest(source) == first["source_digest"]
    assert digest(load_json(a / "relations.json")) == first["relations_digest"]
    validate_source(source)


def test_sample_counts_match_an_independent_computation(imported, sample_protocol):
    summary, out = imported[0]
    cohort = expected_cohort(sample_protocol)
    assert summary["queries"] == {split: len(rows) for split, rows in cohort.items()}
    for split, rows in cohort.items():
        assert summary["categories"][split] == dict(Counter(r["id"].split("__")[0] for r in rows))
    pairs = {(p["title"], p["paragraph_text"]) for rows in cohort.values() for r in rows for p in r["paragraphs"]}
    assert summary["documents"] == len(pairs)
    docs = [{"id": "musique-" + digest({"title": t, "paragraph_text": p}), "title": t, "paragraph_text": p}
            for t, p in pairs]
    expected = brute_force(docs)
    assert summary["relation_counts"] == {kind: len(edges) for kind, edges in expected.items()}
    source = load_json(out / "source.json")
    assert source["selection"]["selected_ids"] == {s: [r["id"] for r in rows] for s, rows in cohort.items()}


# The figures docs/import.md quotes: a change to selection, corpus, judgments or the graph builder
# moves them, and must then be a deliberate, documented change (the independent computation above
# would move along with a change of reading shared by both sides).
SAMPLE_SUMMARY = {
    "queries": {"test": 67, "development": 25},
    "categories": {"test": {"2hop": 40, "3hop1": 14, "3hop2": 2, "4hop1": 9, "4hop3": 2},
                   "development": {"2hop": 10, "3hop1": 9, "3hop2": 1, "4hop1": 3, "4hop3": 2}},
    "documents": 1687,
    "relation_counts": {"same_entity": 245, "semantic_related": 1649},
    "source_digest": "2d96da58654cf1d57ad845d1a71a24b06f55d67d6904ca2bf51d5c371e6d38df",
    "relations_digest": "b902c9b834da684fdf9324aa9acc868c3a1ea4e33b1cdc2b042ffb109ae08086",
}


def test_sample_counts_and_digests_are_the_published_ones(imported):
    summary, _ = imported[0]
    assert {key: summary[key] for key in SAMPLE_SUMMARY} == SAMPLE_SUMMARY


def test_judgments_and_evidence_chains_follow_the_rows(imported, sample_protocol):
    source = load_json(imported[0][1] / "source.json")
    rows = {r["id"]: r for rows in expected_cohort(sample_protocol).values() for r in rows}
    texts = {d["id"]: d["text"] for d in source["documents"]}
    for query in source["queries"]:
        row = rows[query["id"]]
        by_idx = {p["idx"]: p for p in row["paragraphs"]}
        supporting = {p["title"] + "\n" + p["paragraph_text"] for p in row["paragraphs"] if p["is_supporting"]}
        assert {texts[d] for d in query["judgments"]} == supporting
        assert set(query["judgments"].values()) == {1}
        chain = [by_idx[s["paragraph_support_idx"]] for s in row["question_decomposition"]]
        assert [texts[d] for d in query["evidence_chain"]] == [p["title"] + "\n" + p["paragraph_text"] for p in chain]
        assert query["question"] == row["question"] and query["answer"] == row["answer"]
    for doc in source["documents"]:  # no question text leaks into a document
        assert set(doc) == {"id", "title", "paragraph_text", "text"}
    assert source["judgment_policy"]["judgments_complete"] is False
    assert source["dataset"]["license"] == "CC BY 4.0"


# --- the reference cohort ----------------------------------------------------------------------

def test_select_rows_reproduces_the_published_reserved_ids():
    require_shared()
    rows = read_jsonl(SHARED_DATA / "musique-dev-metadata.jsonl")
    reference = json.loads((SHARED_DATA / "reference-cohort.json").read_text())
    chosen = select_rows(rows, {2: 40, 3: 30, 4: 30}, reference["selection_seed"])
    assert [r["id"] for r in chosen] == reference["selected_ids"]["test"]
    official = json.loads(committed_file("graph-multihop-protocol-v1.json").read_text())
    assert official["selection"]["expected_ids"]["test"] == reference["selected_ids"]["test"]


def _row(row_id: str, question: str, answerable: bool = True) -> dict:
    return {"id": row_id, "question": question, "answerable": answerable}


def test_select_rows_excludes_questions_and_refuses_repeats_and_short_strata():
    rows = [_row(f"2hop__{i}", f"Question {i}?") for i in range(6)]
    first = select_rows(rows, {2: 2}, SEED)
    assert [r["id"] for r in first] == sorted(r["id"] for r in first)
    rest = select_rows(rows, {2: 4}, SEED, excluded_questions=["  " + first[0]["question"].upper() + " "])
    assert first[0]["id"] not in {r["id"] for r in rest}
    with pytest.raises(RefusedInput, match="stratum 2-hop has 6 eligible rows, 7 requested"):
        select_rows(rows, {2: 7}, SEED)
    with pytest.raises(RefusedInput, match="question repeated"):
        select_rows(rows + [_row("2hop__99", "question 0?")], {2: 7}, SEED)
    with pytest.raises(RefusedInput, match="not answerable"):
        select_rows(rows + [_row("2hop__98", "Other?", answerable=False)], {2: 1}, SEED)
    with pytest.raises(RefusedInput, match="unknown hop prefix"):
        select_rows(rows + [_row("5hop1__1", "Other?")], {2: 1}, SEED)


# --- refusals: clear message, exit code 2, nothing written ------------------------------------------

def make_dataset(tmp: Path, protocol: dict, edit_dev=None, edit_train=None, edit_protocol=None) -> tuple[Path, Path]:
    """Copies of the sample rows (optionally edited) with a protocol pinning their new hashes."""
    data = tmp / "data"
    data.mkdir()
    protocol = json.loads(json.dumps(protocol))
    for role, edit in (("dev", edit_dev), ("train", edit_train)):
        rows = sample(role, protocol)
        lines = [json.dumps(r) for r in rows]
        if edit:
            lines = edit(rows, lines) or lines
        raw = ("\n".join(lines) + "\n").encode()
        (data / protocol["source_files"][role]["name"]).write_bytes(raw)
        protocol["source_files"][role]["sha256"] = hashlib.sha256(raw).hexdigest()
    if edit_protocol:
        edit_protocol(protocol)
    path = tmp / "protocol.json"
    path.write_text(json.dumps(protocol))
    return path, data


def refused(tmp: Path, protocol: Path, data: Path, needle: str) -> str:
    out, rel = tmp / "out" / "source.json", tmp / "out" / "relations.json"
    with pytest.raises(RefusedInput) as caught:
        import_source(protocol, data, out, rel, graph_builder=build_for_source)
    assert needle in str(caught.value), str(caught.value)
    assert not out.exists() and not rel.exists()
    return str(caught.value)


def cli(*args: str):
    """`lab import` in this process."""
    return lab_cli("import", *args, check=False)


def _rows_to_lines(rows):
    return [json.dumps(r) for r in rows]


def test_cli_refuses_existing_output_and_relations(tmp_path, sample_protocol):
    existing = tmp_path / "source.json"
    existing.write_text("keep")
    result = cli("--protocol", str(SAMPLE_PROTOCOL), "--data-dir", str(SAMPLE_DIR),
                 "--output", str(existing), "--relations", str(tmp_path / "relations.json"))
    assert result.returncode == 2 and "refusing to overwrite existing output" in result.stderr
    assert existing.read_text() == "keep" and not (tmp_path / "relations.json").exists()
    with pytest.raises(RefusedInput, match="refusing to overwrite"):
        import_source(SAMPLE_PROTOCOL, SAMPLE_DIR, tmp_path / "new.json", existing, graph_builder=build_for_source)
    assert not (tmp_path / "new.json").exists()


def test_cli_refuses_the_same_path_twice(tmp_path, sample_protocol):
    target = tmp_path / "both.json"
    result = cli("--protocol", str(SAMPLE_PROTOCOL), "--data-dir", str(SAMPLE_DIR),
                 "--output", str(target), "--relations", str(tmp_path / "." / "both.json"))
    assert result.returncode == 2 and "same path" in result.stderr
    assert not target.exists()


def test_cli_refuses_a_file_whose_hash_differs(tmp_path, sample_protocol):
    protocol, data = make_dataset(tmp_path, sample_protocol)
    dev = data / sample_protocol["source_files"]["dev"]["name"]
    dev.write_bytes(dev.read_bytes() + b"\n")
    out = tmp_path / "out"
    result = cli("--protocol", str(protocol), "--data-dir", str(data),
                 "--output", str(out / "s.json"), "--relations", str(out / "r.json"))
    assert result.returncode == 2, result.stderr
    assert "the protocol pins" in result.stderr and dev.name in result.stderr
    assert not out.exists()


def test_a_file_changed_after_the_hash_check_is_refused(tmp_path, sample_protocol, monkeypatch):
    # the rows are hashed again while parsed: bytes swapped after verify_hash cannot slip through
    import importer.cohort as cohort  # where the import hashes its files (read_cohort)
    protocol, data = make_dataset(tmp_path, sample_protocol)
    dev = data / sample_protocol["source_files"]["dev"]["name"]
    real_verify = cohort.verify_hash

    def verify_then_swap(pinned):
        real_verify(pinned)
        if pinned.path == dev:
            dev.write_bytes(dev.read_bytes() + b"\n")  # a blank line: every row still parses
    monkeypatch.setattr(cohort, "verify_hash", verify_then_swap)
    refused(tmp_path, protocol, data, "changed while it was read")


def test_official_protocol_refuses_the_sample_files(tmp_path, sample_protocol):
    # the official protocol names files the sample directory does not hold
    result = cli("--data-dir", str(SAMPLE_DIR), "--output", str(tmp_path / "s.json"),
                 "--relations", str(tmp_path / "r.json"))
    assert result.returncode == 2 and "not found" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_reports_the_line_of_malformed_json(tmp_path, sample_protocol):
    def truncate_line_5(rows, lines):
        lines[4] = lines[4][:50]
        return lines
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_dev=truncate_line_5)
    result = cli("--protocol", str(protocol), "--data-dir", str(data),
                 "--output", str(tmp_path / "s.json"), "--relations", str(tmp_path / "r.json"))
    assert result.returncode == 2 and "malformed JSON on line 5" in result.stderr
    assert not (tmp_path / "s.json").exists() and not (tmp_path / "r.json").exists()


def test_failed_relations_save_leaves_no_source_behind(tmp_path, sample_protocol, monkeypatch):
    import importer.pipeline as pipeline
    real_save, calls = pipeline.save, []

    def save_then_fail(path, value):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        real_save(path, value)
    monkeypatch.setattr(pipeline, "save", save_then_fail)
    out, rel = tmp_path / "s.json", tmp_path / "r.json"
    with pytest.raises(OSError, match="disk full"):
        import_source(SAMPLE_PROTOCOL, SAMPLE_DIR, out, rel, graph_builder=build_for_source)
    assert calls == [out, rel]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.heavy  # a process per hash seed
def test_files_are_read_in_selection_order_whatever_the_hash_seed(tmp_path, sample_protocol):
    # both files malformed: the first file read is named, and it must be the same one every run
    def break_line_1(rows, lines):
        lines[0] = lines[0][:40]
        return lines
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_dev=break_line_1, edit_train=break_line_1)
    dev_name = sample_protocol["source_files"]["dev"]["name"]  # test, drawn from dev, comes first
    for seed in range(8):
        result = subprocess.run(
            [*LAB_IMPORT, "--protocol", str(protocol), "--data-dir", str(data),
             "--output", str(tmp_path / "s.json"), "--relations", str(tmp_path / "r.json")],
            capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": str(seed)})
        assert result.returncode == 2 and f"{dev_name}:1: malformed JSON" in result.stderr, (seed, result.stderr)
    assert not (tmp_path / "s.json").exists()


def test_non_finite_number_in_a_row_is_malformed_json(tmp_path, sample_protocol):
    def nan_on_line_3(rows, lines):
        lines[2] = lines[2].replace('"answerable": true', '"answerable": NaN')
        assert "NaN" in lines[2]
        return lines
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_dev=nan_on_line_3)
    message = refused(tmp_path, protocol, data, "malformed JSON on line 3")
    assert "non-finite number NaN" in message


def test_missing_source_file_refused(tmp_path, sample_protocol):
    protocol, data = make_dataset(tmp_path, sample_protocol)
    (data / sample_protocol["source_files"]["train"]["name"]).unlink()
    refused(tmp_path, protocol, data, "source file train not found")


def test_a_wrong_data_dir_is_one_line_naming_the_flag_and_hashes_nothing(tmp_path, sample_protocol):
    """No "hashing ... (0.0 MiB)" for a file that is not there: every pinned file is looked for first."""
    protocol, data = make_dataset(tmp_path, sample_protocol)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = cli("--protocol", protocol, "--data-dir", elsewhere, "--output", tmp_path / "out" / "source.json",
               "--relations", tmp_path / "out" / "relations.json")
    assert done.returncode == 2 and "hashing" not in done.stderr, done.stderr
    assert "not found" in done.stderr and "as --data-dir DIR" in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_non_answerable_row_refused(tmp_path, sample_protocol):
    def unanswerable(rows, lines):
        rows[7]["answerable"] = False
        return _rows_to_lines(rows)
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_train=unanswerable)
    message = refused(tmp_path, protocol, data, "is not answerable")
    assert ":8:" in message  # names the line


def test_unknown_hop_prefix_refused(tmp_path, sample_protocol):
    def five_hops(rows, lines):
        rows[3]["id"] = "5hop1__" + rows[3]["id"].partition("__")[2]
        return _rows_to_lines(rows)
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_dev=five_hops)
    refused(tmp_path, protocol, data, "unknown hop prefix")


def test_stratum_with_too_few_rows_refused(tmp_path, sample_protocol):
    protocol, data = make_dataset(
        tmp_path, sample_protocol,
        edit_protocol=lambda p: p["selection"]["splits"]["test"]["counts"].update({"4": 12}))
    refused(tmp_path, protocol, data, "stratum 4-hop has 11 eligible rows, 12 requested")


def test_repeated_question_in_cohort_refused(tmp_path, sample_protocol):
    chosen = {r["id"] for r in expected_cohort(sample_protocol)["test"]}

    def repeat(rows, lines):
        picked = [r for r in rows if r["id"] in chosen][:2]
        picked[1]["question"] = "  " + picked[0]["question"].upper()
        return _rows_to_lines(rows)
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_dev=repeat)
    refused(tmp_path, protocol, data, "question repeated in the cohort")


def test_development_skips_a_question_already_in_the_test_split(tmp_path, sample_protocol):
    cohort = expected_cohort(sample_protocol)
    test_question = cohort["test"][0]["question"]
    first_development = cohort["development"][0]["id"]

    def ask_a_test_question(rows, lines):
        row = next(r for r in rows if r["id"] == first_development)
        row["question"] = "  " + test_question.upper() + " "  # stripped and casefolded: the same question
        return _rows_to_lines(rows)
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_train=ask_a_test_question)
    import_source(protocol, data, tmp_path / "s.json", tmp_path / "r.json", graph_builder=build_for_source)
    selected = load_json(tmp_path / "s.json")["selection"]["selected_ids"]
    assert selected["test"] == [r["id"] for r in cohort["test"]]
    assert first_development not in selected["development"]
    assert len(selected["development"]) == len(cohort["development"])


def test_selection_differing_from_expected_ids_refused(tmp_path, sample_protocol):
    cohort = expected_cohort(sample_protocol)
    test_ids = [r["id"] for r in cohort["test"]]
    spare = next(r["id"] for r in sample("dev", sample_protocol)
                 if r["id"] not in test_ids and r["id"].startswith("2hop"))

    def expect(p):
        ids = sorted([i for i in test_ids if i != test_ids[0]] + [spare])
        p["selection"]["expected_ids"] = {"test": ids, "development": [r["id"] for r in cohort["development"]]}
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_protocol=expect)
    message = refused(tmp_path, protocol, data, "differs from the protocol's expected_ids")
    assert test_ids[0] in message and spare in message


def test_matching_expected_ids_are_accepted(tmp_path, sample_protocol):
    cohort = expected_cohort(sample_protocol)

    def expect(p):
        p["selection"]["expected_ids"] = {s: [r["id"] for r in rows] for s, rows in cohort.items()}
    protocol, data = make_dataset(tmp_path, sample_protocol, edit_protocol=expect)
    summary = import_source(protocol, data, tmp_path / "s.json", tmp_path / "r.json", graph_builder=build_for_source)
    assert summary["queries"] == {s: len(rows) for s, rows in cohort.items()}


def test_protocol_with_a_missing_field_refused_by_the_cli(tmp_path, sample_protocol):
    protocol, data = make_dataset(tmp_path, sample_protocol,
                                  edit_protocol=lambda p: p["selection"].pop("seed"))
    result = cli("--protocol", str(protocol), "--data-dir", str(data),
                 "--output", str(tmp_path / "s.json"), "--relations", str(tmp_path / "r.json"))
    assert result.returncode == 2 and "selection.seed: missing field" in result.stderr
    assert not (tmp_path / "s.json").exists()


def test_cli_prints_counts_and_paths(tmp_path, sample_protocol):
    out, rel = tmp_path / "s.json", tmp_path / "r.json"
    result = subprocess.run([*LAB_IMPORT, "--protocol", str(SAMPLE_PROTOCOL), "--data-dir", str(SAMPLE_DIR),
                             "--output", str(out), "--relations", str(rel)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    source = load_json(out)
    for split, n in source["counts"]["queries"].items():
        assert f"queries {split}: {n} (" in result.stdout
    assert f"documents: {source['counts']['documents']}" in result.stdout
    # another process, another hash seed: the same bytes as the in-process imports
    assert f"source digest: {SAMPLE_SUMMARY['source_digest']}" in result.stdout
    assert f"relations digest: {SAMPLE_SUMMARY['relations_digest']}" in result.stdout
    assert f"wrote {out}" in result.stdout and f"wrote {rel}" in result.stdout
    # progress on stderr, one line per stage (contracts: every CLI reports progress)
    dev = SAMPLE_DIR / sample_protocol["source_files"]["dev"]["name"]
    for line in (f"hashing {dev} (", f"reading ids and questions of {dev}",
                 f"selected 67 test rows of 100 in {dev.name}", f"reading the 67 selected rows of {dev}",
                 f"building the graph over {source['counts']['documents']} documents"):
        assert line in result.stderr, (line, result.stderr)
