"""HotpotQA (distractor) and 2WikiMultihopQA beside MuSiQue (docs/design.md §4.1): readers, selection, corpus,
judgments and every refusal, on synthetic files of both shapes (no ../shared needed), then the two
shared samples end to end (skipped, naming the path, when ../shared is absent)."""

from __future__ import annotations

import copy
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from builders.title_graph import build_for_source
from ground.artifacts import SourceError, validate_source
from ground.files import load_json
from importer import import_source, synthetic
from importer.synthetic_context import generate_context_rows, render_array
from protocols.committed import DATASETS_DIR
from protocols.schema import ProtocolError, validate_protocol
from tests.builders.test_graph_builder import brute_force
from tests.conftest import SHARED_DATA, lab_cli, require_shared

PROTOCOLS = DATASETS_DIR
JOINER = {"hotpotqa": "", "2wikimultihopqa": " "}
PREFIX = {"hotpotqa": "hotpotqa-", "2wikimultihopqa": "2wikimultihopqa-"}
SYNTHETIC_COUNTS = {  # of 60 rows: hotpotqa bridge 39, comparison 21; 2wiki 21 / 18 / 12 / 9
    "hotpotqa": {"test": {"bridge": 20, "comparison": 10}, "development": {"bridge": 8, "comparison": 5}},
    "2wikimultihopqa": {
        "test": {"compositional": 10, "comparison": 8, "bridge_comparison": 6, "inference": 4},
        "development": {"compositional": 4, "comparison": 4, "bridge_comparison": 3, "inference": 2},
    },
}
FILE_NAME = {"hotpotqa": "dev.json", "2wikimultihopqa": "dev.json"}



@pytest.fixture(scope="session")
def synthetic_rows() -> dict[str, list[dict]]:
    return {shape: generate_context_rows(shape, "test-datasets", 60) for shape in JOINER}


def write_dataset(tmp: Path, shape: str, raw: bytes, counts: dict | None = None, template: str | None = None,
                  name: str = "dev.json") -> tuple[Path, Path]:
    """A data directory holding `raw` and a protocol derived from the shape's sample protocol that
    pins its hash (and the given counts)."""
    data = tmp / "data"
    data.mkdir(exist_ok=True)
    (data / name).write_bytes(raw)
    protocol = json.loads((PROTOCOLS / (template or f"{shape}-sample-v1.json")).read_text())
    protocol["source_files"] = {"dev": {"name": name, "sha256": hashlib.sha256(raw).hexdigest()}}
    for split, split_counts in (counts or SYNTHETIC_COUNTS[shape]).items():
        protocol["selection"]["splits"][split]["counts"] = dict(split_counts)
    path = tmp / "protocol.json"
    path.write_text(json.dumps(protocol))
    return path, data


def import_cli(protocol: Path, data: Path, out: Path, capsys) -> tuple[int, str, str]:
    done = lab_cli("import", "--protocol", protocol, "--data-dir", data, "--output", out / "source.json",
                   "--relations", out / "relations.json", check=False)
    return done.returncode, done.stdout, done.stderr


# --- an independent reading of docs/design.md §4.1 --------------------------------------------------------

def seeded_order(seed: str, row_id: str) -> tuple[str, str]:
    key = json.dumps([seed, row_id], separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(key).hexdigest(), row_id


def expected_cohort(rows: list[dict], protocol: dict) -> dict[str, list[dict]]:
    selection, taken, out, used = protocol["selection"], set(), {}, set()
    for split in selection["order"]:
        by_type = defaultdict(list)
        for row in rows:
            if row["_id"] not in used and row["question"].strip().casefold() not in taken:
                by_type[row["type"]].append(row)
        chosen = []
        for row_type, n in selection["splits"][split]["counts"].items():
            chosen += sorted(by_type[row_type], key=lambda r: seeded_order(selection["seed"], r["_id"]))[:n]
        out[split] = sorted(chosen, key=lambda r: r["_id"])
        taken |= {r["question"].strip().casefold() for r in chosen}
        used |= {r["_id"] for r in chosen}
    return out


def doc_id(shape: str, title: str, sentences: list[str]) -> str:
    text = JOINER[shape].join(sentences)
    body = json.dumps({"paragraph_text": text, "title": title}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()
    return PREFIX[shape] + hashlib.sha256(body).hexdigest()


def check_against_rows(shape: str, source: dict, relations: dict, rows: list[dict], protocol: dict) -> None:
    """Counts, documents, judgments, chains and relations of an import, recomputed from the rows."""
    cohort = expected_cohort(rows, protocol)
    assert source["selection"]["selected_ids"] == {s: [r["_id"] for r in chosen] for s, chosen in cohort.items()}
    assert source["counts"]["queries"] == {s: len(chosen) for s, chosen in cohort.items()}
    for split, chosen in cohort.items():
        assert source["counts"]["categories"][split] == dict(sorted(Counter(r["type"] for r in chosen).items()))
    pairs = {(t, JOINER[shape].join(s)) for chosen in cohort.values() for r in chosen for t, s in r["context"]}
    assert {(d["title"], d["paragraph_text"]) for d in source["documents"]} == pairs
    assert len(source["documents"]) == len(pairs)
    queries = {q["id"]: q for q in source["queries"]}
    for split, chosen in cohort.items():
        for row in chosen:
            query = queries[row["_id"]]
            sentences = dict((t, s) for t, s in row["context"])
            titles = list(dict.fromkeys(t for t, _ in row["supporting_facts"]))
            chain = [doc_id(shape, t, sentences[t]) for t in titles]
            assert query["evidence_chain"] == chain
            assert query["judgments"] == {d: 1 for d in sorted(chain)}
            assert (query["split"], query["category"], query["hop"]) == (split, row["type"], len(titles))
            assert (query["question"], query["answer"], query["answer_aliases"]) == (row["question"], row["answer"], [])
    docs = [{"id": PREFIX[shape] + d["id"][len(PREFIX[shape]):], "title": d["title"],
             "paragraph_text": d["paragraph_text"]} for d in source["documents"]]
    expected = brute_force(docs)
    assert relations["counts"] == {kind: len(edges) for kind, edges in expected.items()}
    for doc in source["documents"]:  # nothing of the query side reaches a document
        assert set(doc) == {"id", "title", "paragraph_text", "text"}


# --- synthetic files of both shapes ----------------------------------------------------------------

@pytest.mark.parametrize("shape", sorted(JOINER))
def test_synthetic_shapes_import_twice_with_identical_bytes_and_follow_the_rows(shape, synthetic_rows, tmp_path, capsys):
    rows = synthetic_rows[shape]
    protocol, data = write_dataset(tmp_path, shape, render_array(rows))
    outputs = []
    for name in ("first", "second"):
        code, out, err = import_cli(protocol, data, tmp_path / name, capsys)
        assert code == 0, err
        outputs.append({f: (tmp_path / name / f).read_bytes() for f in ("source.json", "relations.json")})
        assert f"wrote {tmp_path / name / 'source.json'}" in out
    assert outputs[0] == outputs[1]
    source = load_json(tmp_path / "first" / "source.json")
    relations = load_json(tmp_path / "first" / "relations.json")
    validate_source(source)
    assert source["row_format"] == json.loads(protocol.read_text())["row_format"]
    assert source["source_files"]["dev"]["rows"] == len(rows)
    assert source["dataset"] == json.loads(protocol.read_text())["dataset"]
    check_against_rows(shape, source, relations, rows, json.loads(protocol.read_text()))


@pytest.mark.parametrize("shape", sorted(JOINER))
def test_jsonl_and_array_of_the_same_rows_give_the_same_corpus_and_queries(shape, synthetic_rows, tmp_path):
    rows = synthetic_rows[shape]
    results = []
    for layout, raw in (("array", render_array(rows)),
                        ("jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode()),
                        ("one-line array", json.dumps(rows).encode())):  # the official files' layout
        tmp = tmp_path / layout.replace(" ", "-")
        tmp.mkdir()
        protocol, data = write_dataset(tmp, shape, raw)
        import_source(protocol, data, tmp / "s.json", tmp / "r.json", graph_builder=build_for_source)
        source = load_json(tmp / "s.json")
        results.append((source["documents"], source["queries"], load_json(tmp / "r.json")["relations"]))
    assert results[0] == results[1] == results[2]


def test_2wiki_rows_without_the_wikidata_id_keys_import_alike(synthetic_rows, tmp_path):
    # the first 2Wiki release has no entity_ids / evidences_id / answer_id; they are never read
    rows = synthetic_rows["2wikimultihopqa"]
    bare = [{k: v for k, v in r.items() if k not in ("entity_ids", "evidences_id", "answer_id")} for r in rows]
    results = []
    for name, variant in (("full", rows), ("bare", bare)):
        (tmp_path / name).mkdir()
        protocol, data = write_dataset(tmp_path / name, "2wikimultihopqa", render_array(variant))
        import_source(protocol, data, tmp_path / name / "s.json", tmp_path / name / "r.json", graph_builder=build_for_source)
        source = load_json(tmp_path / name / "s.json")
        results.append((source["documents"], source["queries"]))
    assert results[0] == results[1]


def test_the_synthetic_generator_is_deterministic_and_shapes_rows_officially(synthetic_rows):
    again = generate_context_rows("hotpotqa", "test-datasets", 60)
    assert render_array(again) == render_array(synthetic_rows["hotpotqa"])
    hotpot, wiki = synthetic_rows["hotpotqa"][0], synthetic_rows["2wikimultihopqa"][0]
    assert list(hotpot) == ["_id", "answer", "question", "supporting_facts", "context", "type", "level"]
    assert list(wiki) == ["_id", "type", "question", "context", "supporting_facts", "evidences", "answer",
                          "entity_ids", "evidences_id", "answer_id"]
    assert Counter(r["type"] for r in synthetic_rows["2wikimultihopqa"]) == {
        "compositional": 21, "comparison": 18, "bridge_comparison": 12, "inference": 9}
    for rows in synthetic_rows.values():
        for row in rows:
            titles = [t for t, _ in row["context"]]
            assert len(titles) == len(set(titles)) == 10
            supporting = dict.fromkeys(t for t, _ in row["supporting_facts"])
            assert len(supporting) == (4 if row["type"] == "bridge_comparison" else 2)


def test_lab_synth_writes_each_shape(tmp_path):
    done = lab_cli("synth", "--shape", "2wikimultihopqa", "--output-dir", tmp_path / "w", "--questions", "20")
    written = tmp_path / "w" / "synthetic_2wikimultihopqa_dev.json"
    assert f"wrote {written} sha256 {hashlib.sha256(written.read_bytes()).hexdigest()} rows 20" in done.stdout
    assert lab_cli("synth", "--shape", "hotpotqa", "--output-dir", tmp_path / "w", check=False).returncode == 2


# --- refusals: clear message, exit code 2, nothing written ------------------------------------------

def _edited(rows: list[dict], edit) -> list[dict]:
    rows = copy.deepcopy(rows)
    edit(rows)
    return rows


def _supporting_row(rows: list[dict]) -> dict:
    return rows[0]


def _drop_context(rows):
    del rows[3]["context"]


def _absent_supporting_title(rows):
    rows[5]["supporting_facts"][0][0] = "A Title Nowhere In This Row"


def _duplicate_id(rows):
    rows[7]["_id"] = rows[2]["_id"]


def _type_outside_strata(rows):
    rows[4]["type"] = "intersection"


def _sentence_index_beyond(rows):
    title = rows[6]["supporting_facts"][0][0]
    n = len(dict((t, s) for t, s in rows[6]["context"])[title])
    rows[6]["supporting_facts"][0][1] = n


def _duplicate_title_other_text(rows):
    rows[8]["context"].append([rows[8]["context"][0][0], ["Another text under the same title."]])


@pytest.mark.parametrize("shape", sorted(JOINER))
@pytest.mark.parametrize("edit, needles", [
    (_drop_context, ["row 4.context: missing field"]),
    (_absent_supporting_title, ["row 6.supporting_facts[0][0]: supporting title 'A Title Nowhere In This Row' "
                                "is absent from the row's context"]),
    (_duplicate_id, ["split 'test': row id", "appears twice"]),
    (_type_outside_strata, ["row 5.type: 'intersection' is outside the protocol's strata"]),
    (_sentence_index_beyond, ["row 7.supporting_facts[0][1]: sentence index", "is beyond the"]),
    (_duplicate_title_other_text, ["row 9.context[10]: title", "appears twice in the row's context with different texts"]),
], ids=["no-context", "absent-supporting-title", "duplicate-id", "type-outside-strata", "sentence-index-beyond",
        "duplicate-title-other-text"])
def test_bad_rows_are_refused_by_the_cli(shape, edit, needles, synthetic_rows, tmp_path, capsys):
    protocol, data = write_dataset(tmp_path, shape, render_array(_edited(synthetic_rows[shape], edit)))
    code, out, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2, err
    for needle in needles:
        assert needle in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("shape", sorted(JOINER))
def test_a_stratum_with_too_few_rows_is_refused(shape, synthetic_rows, tmp_path, capsys):
    counts = copy.deepcopy(SYNTHETIC_COUNTS[shape])
    available = Counter(r["type"] for r in synthetic_rows[shape])
    row_type = "comparison"
    counts["development"][row_type] = available[row_type] - counts["test"][row_type] + 1
    protocol, data = write_dataset(tmp_path, shape, render_array(synthetic_rows[shape]), counts)
    code, _, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2
    left = available[row_type] - counts["test"][row_type]
    assert (f"split 'development': stratum 'comparison' has {left} eligible rows, "
            f"{left + 1} requested") in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("layout", ["array", "one-line", "jsonl"])
def test_malformed_json_names_line_and_column(layout, synthetic_rows, tmp_path, capsys):
    rows = synthetic_rows["hotpotqa"]
    if layout == "jsonl":
        lines = [json.dumps(r) for r in rows]
        lines[4] = lines[4].replace('"question": ', '"question" ', 1)
        raw, where = ("\n".join(lines) + "\n").encode(), "line 5, column"
    elif layout == "one-line":
        text = json.dumps(rows)
        cut = text.index('"_id"', 1000)
        raw, where = (text[:cut] + "," + text[cut:]).encode(), f"line 1, column {cut + 1}"
    else:
        lines = render_array(rows).decode().split("\n")
        lines[3] = lines[3].replace('"answer": ', '"answer": ,', 1)
        column = lines[3].index('"answer": ,') + len('"answer": ') + 1
        raw, where = "\n".join(lines).encode(), f"line 4, column {column}"
    protocol, data = write_dataset(tmp_path, "hotpotqa", raw)
    code, _, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2
    assert f"malformed JSON on {where}" in err, err
    assert not (tmp_path / "out").exists()


def test_non_finite_numbers_in_an_array_are_malformed(synthetic_rows, tmp_path, capsys):
    raw = render_array(synthetic_rows["hotpotqa"]).replace(b'"level": "medium"', b'"level": NaN', 1)
    protocol, data = write_dataset(tmp_path, "hotpotqa", raw)
    code, _, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2 and "malformed JSON after row 0" in err and "NaN" in err, err


def _musique_file() -> bytes:
    return synthetic.render_rows(synthetic.generate_rows("test-datasets/musique", 40))


@pytest.mark.parametrize("shape, expected, key", [("hotpotqa", "hotpotqa_distractor_v1", "id"),
                                                  ("2wikimultihopqa", "2wikimultihopqa_v1", "id")])
def test_a_musique_file_under_a_context_protocol_names_the_format_and_the_key(shape, expected, key, tmp_path, capsys):
    protocol, data = write_dataset(tmp_path, shape, _musique_file())
    code, _, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2
    assert f"not a {expected} row: key {key!r} does not fit" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("shape, key", [("hotpotqa", "_id"), ("2wikimultihopqa", "_id")])
def test_a_context_file_under_a_musique_protocol_names_the_format_and_the_key(shape, key, synthetic_rows, tmp_path, capsys):
    raw = render_array(synthetic_rows[shape])
    data = tmp_path / "data"
    data.mkdir()
    protocol = json.loads((PROTOCOLS / "synthetic-v1.json").read_text())
    for role in ("dev", "train"):
        (data / protocol["source_files"][role]["name"]).write_bytes(raw)
        protocol["source_files"][role]["sha256"] = hashlib.sha256(raw).hexdigest()
    (tmp_path / "p.json").write_text(json.dumps(protocol))
    code, _, err = import_cli(tmp_path / "p.json", data, tmp_path / "out", capsys)
    assert code == 2
    assert f"not a musique_v1 row: key {key!r} does not fit" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("shape, other, key", [("hotpotqa", "2wikimultihopqa_v1", "answer"),
                                               ("2wikimultihopqa", "hotpotqa_distractor_v1", "type")])
def test_hotpotqa_and_2wiki_files_are_told_apart(shape, other, key, synthetic_rows, tmp_path, capsys):
    # the first key of a HotpotQA row 2Wiki lacks is `level`, but `answer` comes first in the row
    # and fits; so the check names the first key that does not fit in row order
    other_shape = "2wikimultihopqa" if shape == "hotpotqa" else "hotpotqa"
    protocol, data = write_dataset(tmp_path, other_shape, render_array(synthetic_rows[shape]))
    code, _, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2
    first_misfit = {"hotpotqa": "level", "2wikimultihopqa": "evidences"}[shape]
    assert f"not a {other} row: key {first_misfit!r} does not fit" in err, err


def test_a_file_that_is_neither_an_array_nor_json_lines_is_refused(tmp_path, capsys):
    protocol, data = write_dataset(tmp_path, "hotpotqa", b'"just a string"\n')
    code, _, err = import_cli(protocol, data, tmp_path / "out", capsys)
    assert code == 2 and "neither a JSON array nor JSON lines" in err


# --- protocol and source.json contracts of the new formats -----------------------------------------

def test_protocols_name_their_row_format_and_count_by_type():
    for name in ("hotpotqa-sample-v1", "hotpotqa-sample-v2", "2wikimultihopqa-sample-v1", "2wikimultihopqa-sample-v2"):
        protocol = json.loads((PROTOCOLS / f"{name}.json").read_text())
        validate_protocol(protocol)
        assert protocol["protocol_version"] == name
    hotpot = json.loads((PROTOCOLS / "hotpotqa-sample-v1.json").read_text())
    assert hotpot["row_format"] == "hotpotqa_distractor_v1"
    assert hotpot["selection"]["splits"]["test"]["counts"] == {"bridge": 50, "comparison": 22}
    assert hotpot["selection"]["splits"]["development"] == {"source": "dev", "counts": {"bridge": 12, "comparison": 8}}
    wiki = json.loads((PROTOCOLS / "2wikimultihopqa-sample-v1.json").read_text())
    assert wiki["selection"]["splits"]["test"]["counts"] == {
        "compositional": 20, "comparison": 16, "bridge_comparison": 12, "inference": 3}
    assert wiki["selection"]["splits"]["development"]["counts"] == {
        "compositional": 5, "comparison": 4, "bridge_comparison": 4, "inference": 1}
    # the frozen MuSiQue protocols carry no row_format and mean MuSiQue
    assert "row_format" not in json.loads((PROTOCOLS / "musique-sample-v1.json").read_text())


@pytest.mark.parametrize("edit, message", [
    (lambda p: p.update(row_format="squad_v1"), "row_format: 'squad_v1' is not one of"),
    (lambda p: p["selection"]["splits"]["test"]["counts"].update({"2": 3}), "selection.splits.test.counts.2: unexpected field"),
    (lambda p: p["selection"]["splits"]["test"]["counts"].pop("comparison"), "selection.splits.test.counts.comparison: missing field"),
    (lambda p: p["selection"].update(version="musique_identifier_strata_v1"), "selection.version: 'musique_identifier_strata_v1' is not one of 'identifier_type_strata_v1'"),
    (lambda p: p.pop("row_format"), "selection.version: 'identifier_type_strata_v1' is not one of"),
    (lambda p: p["selection"].update(expected_ids={"test": ["a", "b"]}), "selection.expected_ids.test: holds 2 ids, counts ask for 72"),
])
def test_protocol_refusals_of_the_typed_formats(edit, message):
    protocol = json.loads((PROTOCOLS / "hotpotqa-sample-v1.json").read_text())
    edit(protocol)
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    assert str(caught.value).startswith(message), str(caught.value)


@pytest.fixture(scope="module")
def synthetic_source(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("typed-source")
    rows = generate_context_rows("2wikimultihopqa", "test-datasets", 60)
    protocol, data = write_dataset(tmp, "2wikimultihopqa", render_array(rows))
    import_source(protocol, data, tmp / "s.json", tmp / "r.json", graph_builder=build_for_source)
    return load_json(tmp / "s.json")


def _first_four_hop(source: dict) -> dict:
    return next(q for q in source["queries"] if q["hop"] == 4)


@pytest.mark.parametrize("edit, message", [
    (lambda s: _first_four_hop(s).update(hop=2), "must be 4, the number of supporting documents"),
    (lambda s: _first_four_hop(s).update(category="2hop"), "'2hop' is not one of"),
    (lambda s: _first_four_hop(s)["evidence_chain"].pop(), "must order exactly the judged documents"),
    (lambda s: s["documents"][0].update(id="musique-" + s["documents"][0]["id"].split("-", 1)[1]), "documents[0].id"),
    # a source read under another format fails at its first field that differs: the counts' keys
    (lambda s: s.update(row_format="musique_v1"), "selection.splits.test.counts.2: missing field"),
    (lambda s: s.pop("row_format"), "selection.splits.test.counts.2: missing field"),
])
def test_validate_source_of_a_typed_format(synthetic_source, edit, message):
    source = copy.deepcopy(synthetic_source)
    validate_source(source)
    edit(source)
    with pytest.raises(SourceError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate_source(source)


# --- the shared samples ------------------------------------------------------------------------------

SAMPLES = {
    "hotpotqa": {
        "dir": SHARED_DATA / "hotpotqa-sample", "file": "hotpot_sample_dev.json",
        "queries": {"test": 72, "development": 20},
        "categories": {"test": {"bridge": 50, "comparison": 22}, "development": {"bridge": 12, "comparison": 8}},
        "hops": {2: 92}, "documents": 915, "judged": 184, "rows": 100,
        "relation_counts": {"same_entity": 0, "semantic_related": 450},
        "license": "CC BY-SA 4.0",
    },
    "2wikimultihopqa": {
        "dir": SHARED_DATA / "2wikimultihopqa-sample", "file": "2wiki_sample_dev.json",
        "queries": {"test": 51, "development": 14},
        "categories": {"test": {"bridge_comparison": 12, "comparison": 16, "compositional": 20, "inference": 3},
                       "development": {"bridge_comparison": 4, "comparison": 4, "compositional": 5, "inference": 1}},
        "hops": {2: 49, 4: 16}, "documents": 535, "judged": 161, "rows": 82,
        "relation_counts": {"same_entity": 0, "semantic_related": 167},
        "license": "Apache-2.0",
    },
}


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def imported_sample(request, tmp_path_factory):
    shape = request.param
    sample = SAMPLES[shape]
    require_shared(sample["dir"])
    protocol = PROTOCOLS / f"{shape}-sample-v1.json"
    runs = []
    for name in ("first", "second"):
        out = tmp_path_factory.mktemp(f"{shape}-{name}")
        summary = import_source(protocol, sample["dir"], out / "source.json", out / "relations.json",
                                graph_builder=build_for_source)
        runs.append((summary, out))
    return shape, protocol, runs


def test_samples_import_twice_into_fresh_paths_with_identical_bytes(imported_sample):
    _, _, ((first, a), (second, b)) = imported_sample
    assert first == {**second, "output": first["output"], "relations": first["relations"]}
    for name in ("source.json", "relations.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_sample_counts(imported_sample):
    shape, _, ((summary, out), _) = imported_sample
    sample = SAMPLES[shape]
    source = load_json(out / "source.json")
    assert summary["queries"] == sample["queries"]
    assert summary["categories"] == sample["categories"]
    assert summary["documents"] == sample["documents"]
    assert summary["relation_counts"] == sample["relation_counts"]
    assert dict(Counter(q["hop"] for q in source["queries"])) == sample["hops"]
    assert len({d for q in source["queries"] for d in q["judgments"]}) == sample["judged"]
    assert source["source_files"]["dev"]["rows"] == sample["rows"]
    assert source["dataset"]["license"] == sample["license"]


def test_sample_imports_follow_the_rows(imported_sample):
    shape, protocol, ((_, out), _) = imported_sample
    rows = json.loads((SAMPLES[shape]["dir"] / SAMPLES[shape]["file"]).read_text(encoding="utf-8"))
    check_against_rows(shape, load_json(out / "source.json"), load_json(out / "relations.json"), rows,
                       json.loads(protocol.read_text()))


@pytest.mark.parametrize("shape", sorted(SAMPLES))
def test_sample_protocols_pin_the_manifest_hashes(shape):
    sample = SAMPLES[shape]
    require_shared(sample["dir"])
    manifest = json.loads((sample["dir"] / "MANIFEST.json").read_text())
    protocol = json.loads((PROTOCOLS / f"{shape}-sample-v1.json").read_text())
    assert protocol["source_files"] == {"dev": {"name": manifest["file"], "sha256": manifest["sha256"]}}


# --- make demo-samples: the runner's refusals and its table (the campaigns themselves: docs/import.md) --

def test_demo_samples_refuses_an_absent_sample_directory(tmp_path):
    (tmp_path / "musique-sample").mkdir()
    done = lab_cli("demo", "--samples", "--data-dir", tmp_path, "--run-dir", tmp_path / "runs", check=False)
    assert done.returncode == 2
    assert f"sample directory {tmp_path / 'hotpotqa-sample'} is absent" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_demo_refuses_flags_that_belong_to_the_other_mode(tmp_path):
    for args in (["--version", "v3"], ["--suite", tmp_path / "s.json"], ["--samples", "--protocol", tmp_path / "p"]):
        done = lab_cli("demo", *args, "--run-dir", tmp_path / "runs", check=False)
        assert done.returncode == 2 and "--samples" in done.stderr, args
    assert not (tmp_path / "runs").exists()


def test_demo_samples_table_puts_the_primary_contrast_on_the_candidate_row():
    from lab import demo as runner

    metrics = {"ndcg@10": 0.5, "judged_recall@10": 0.75, "all_supports@10": 0.25}
    public = {"plan": {"queries": ["q1", "q2"], "methods": ["lexical", "graph"]},
              "aggregates": {"methods": {"lexical": metrics, "graph": {**metrics, "ndcg@10": 0.625}}},
              "statistics": {"contrasts": [
                  {"candidate": "graph", "baseline": "lexical", "metric": "all_supports@10", "label": "confirmatory",
                   "mean_delta": 9.0, "interval": [9.0, 9.0], "wins": 0, "losses": 0, "ties": 2},
                  {"candidate": "graph", "baseline": "lexical", "metric": "ndcg@10", "label": "confirmatory",
                   "mean_delta": 0.125, "interval": [-0.25, 0.5], "wins": 1, "losses": 0, "ties": 1}]}}
    table = runner.summary_table([
        {"dataset": "hotpotqa", "protocol": "hotpotqa-sample-v1", "ok": True, "public": public,
         "stages": "import 1.0s", "elapsed": 2.0, "log": Path("log"), "run": Path("run")},
        {"dataset": "2wikimultihopqa", "protocol": "2wikimultihopqa-sample-v1", "ok": False, "public": None,
         "stages": "", "elapsed": 1.0, "log": Path("wiki.log"), "run": Path("run2")}])
    lines = table.splitlines()
    assert "| hotpotqa | 2 | lexical | 0.500 | 0.750 | 0.250 |  |" in lines
    assert "| hotpotqa | 2 | graph | 0.625 | 0.750 | 0.250 | vs lexical: +0.125 [-0.250, +0.500] W/L/T 1/0/1 |" in lines
    assert "| 2wikimultihopqa | | FAILED (see wiki.log) | | | | |" in lines
    assert "| hotpotqa | hotpotqa-sample-v1 | import 1.0s | 2s | run |" in lines
