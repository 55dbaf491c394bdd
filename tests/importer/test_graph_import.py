"""Importing an external graph (docs/graph-import.md): every format reads the same tiny graph to the
same section, triples are kept as HippoRAG keeps them and counted when left out, and every bad input
is refused with one line before anything is written."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest

from importer.graph_formats import READERS
from importer.graph_formats.base import GraphFileError
from importer.graph_import import import_graph, pinned_paths
from importer.pipeline import import_source
from protocols.graph_file import GRAPH_FORMATS, PASSAGE_RULES
from protocols.new import graph_builder_pin
from tests.conftest import SHARED_DATA, require_shared

# three corpus passages; the graph names two entities they share
CORPUS = [
    {"id": "doc-a", "title": "Orin River", "paragraph_text": "The Orin River flows into Lake Tessa."},
    {"id": "doc-b", "title": "Lake Tessa", "paragraph_text": "Lake Tessa lies in Velmar."},
    {"id": "doc-c", "title": "Velmar", "paragraph_text": "Velmar is a republic."},
]
TRIPLES = {
    "doc-a": [["Orin River", "flows into", "Lake Tessa"]],
    "doc-b": [["Lake Tessa", "lies in", "Velmar"]],
    "doc-c": [["Velmar", "is a", "republic"]],
}


def _passage(doc: dict) -> str:
    return f"{doc['title']}\n{doc['paragraph_text']}"


def write_v1(folder: Path, docs: list[dict] | None = None, extra: dict | None = None) -> Path:
    entries = [{"title": d["title"], "text": d["paragraph_text"], "passage": _passage(d),
                "extracted_entities": [], "extracted_triples": TRIPLES[d["id"]]} for d in (docs or CORPUS)]
    path = folder / "openie_v1.json"
    # HippoRAG's own files hold the literal NaN at the top level; the reader takes it as HippoRAG's does
    path.write_text(json.dumps({"docs": entries, "avg_ent_chars": float("nan"), **(extra or {})}), encoding="utf-8")
    return path


def write_v2(folder: Path) -> Path:
    entries = [{"idx": "chunk-" + hashlib.md5(_passage(d).encode()).hexdigest(), "passage": _passage(d),
                "extracted_entities": [], "extracted_triples": TRIPLES[d["id"]]} for d in CORPUS]
    path = folder / "openie_v2.json"
    path.write_text(json.dumps({"docs": entries}), encoding="utf-8")
    return path


def write_plain(folder: Path, by_id: bool = False) -> Path:
    lines = []
    for doc in CORPUS:
        passage = doc["id"] if by_id else {"title": doc["title"], "text": doc["paragraph_text"]}
        for s, p, o in TRIPLES[doc["id"]]:
            lines.append(json.dumps({"passage": passage, "subject": s, "predicate": p, "object": o}))
    path = folder / "triples.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_graphrag(folder: Path, unit_of_relationship: str | None = None) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": [f"d{i}" for i in range(3)], "title": [d["title"] for d in CORPUS],
                             "text": [d["paragraph_text"] for d in CORPUS]}), folder / "documents.parquet")
    pq.write_table(pa.table({"id": [f"u{i}" for i in range(3)], "text": [d["paragraph_text"] for d in CORPUS],
                             "document_ids": [[f"d{i}"] for i in range(3)]}), folder / "text_units.parquet")
    names = sorted({x for triples in TRIPLES.values() for s, _, o in triples for x in (s, o)})
    pq.write_table(pa.table({"title": names}), folder / "entities.parquet")
    rows = [(s, p, o, [f"u{i}"]) for i, d in enumerate(CORPUS) for s, p, o in TRIPLES[d["id"]]]
    if unit_of_relationship is not None:
        rows[0] = rows[0][:3] + ([unit_of_relationship],)
    pq.write_table(pa.table({"source": [r[0] for r in rows], "description": [r[1] for r in rows],
                             "target": [r[2] for r in rows], "text_unit_ids": [r[3] for r in rows]}),
                   folder / "relationships.parquet")
    return folder


def builder_for(path: Path, graph_format: str, allow: tuple[str, ...] = ()) -> dict:
    return graph_builder_pin(path, graph_format, "a test", list(allow))


def imported(path: Path, graph_format: str, allow: tuple[str, ...] = (), corpus: list[dict] = CORPUS) -> dict:
    builder = builder_for(path, graph_format, allow)
    folder = path if path.is_dir() else path.parent
    return import_graph(builder, pinned_paths(builder, folder), corpus)


def test_the_registry_reads_every_declared_format():
    assert list(READERS) == list(GRAPH_FORMATS)


@pytest.mark.parametrize("graph_format, write", [
    ("hipporag_openie_v1", write_v1), ("hipporag_openie_v2", write_v2), ("lab_triples_v1", write_plain),
    ("lab_triples_v1", lambda folder: write_plain(folder, by_id=True)),
    ("graphrag_parquet_v1", lambda folder: write_graphrag(folder / "graphrag")),
])
def test_every_format_reads_the_same_graph(tmp_path, graph_format, write):
    section = imported(write(tmp_path), graph_format)
    assert section["documents"] == [{"id": k, "triples": v} for k, v in sorted(TRIPLES.items())]
    assert section["counts"] == {"graph_passages": 3, "matched_passages": 3, **{rule: 0 for rule in PASSAGE_RULES},
                                 "triples_in_file": 3, "triples_kept": 3, "triples_left_out": 0}
    assert section["format"] == graph_format and section["producer"] == "a test"


def test_triples_are_kept_as_hipporag_keeps_them_and_the_rest_counted(tmp_path):
    saved = copy.deepcopy(TRIPLES)
    try:
        TRIPLES["doc-a"] += [["Orin River", "flows into"], ["a", "b", "c", "d"], ["Orin River", "flows into", "Lake Tessa"]]
        section = imported(write_v1(tmp_path), "hipporag_openie_v1")
    finally:
        TRIPLES.clear()
        TRIPLES.update(saved)
    assert section["left_out"] == {"not_three_elements:2": 1, "not_three_elements:4": 1, "repeated_in_passage": 1}
    assert section["counts"]["triples_in_file"] == 6 and section["counts"]["triples_kept"] == 3
    assert section["documents"][0]["triples"] == [["Orin River", "flows into", "Lake Tessa"]]


@pytest.mark.parametrize("bad, message", [
    (["Orin River", "", "Lake Tessa"], r"docs\[0\]\.extracted_triples\[0\], predicate: '' is not a non-blank string"),
    (["Orin River", "flows into", 7], r"extracted_triples\[0\], object: int is not a non-blank string"),
    (["Orin River", "flows into", "   "], "object: '   ' is not a non-blank string"),
    ("Orin River flows into Lake Tessa", r"extracted_triples\[0\]: expected a list, got str"),
])
def test_a_triple_that_names_nothing_is_refused(tmp_path, bad, message):
    saved = copy.deepcopy(TRIPLES)
    try:
        TRIPLES["doc-a"] = [bad]
        path = write_v1(tmp_path)
    finally:
        TRIPLES.clear()
        TRIPLES.update(saved)
    with pytest.raises(GraphFileError, match=message):
        imported(path, "hipporag_openie_v1")


def test_a_truncated_or_non_json_file_is_refused_in_one_line(tmp_path):
    path = write_v1(tmp_path)
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(GraphFileError, match=r"not JSON: .* \(line 1, column \d+\); the file ends early: truncated\?") as info:
        imported(path, "hipporag_openie_v1")
    assert "\n" not in str(info.value)
    path.write_text("title,text\nOrin River,flows\n", encoding="utf-8")
    with pytest.raises(GraphFileError, match="not JSON"):
        imported(path, "hipporag_openie_v1")
    plain = tmp_path / "triples.jsonl"
    plain.write_text('{"passage": "doc-a", "subject": "x"\n', encoding="utf-8")
    with pytest.raises(GraphFileError, match="line 1: not a JSON object"):
        imported(plain, "lab_triples_v1")


def test_a_v2_file_whose_chunk_id_is_not_its_passage_md5_is_refused(tmp_path):
    path = write_v2(tmp_path)
    value = json.loads(path.read_text())
    value["docs"][1]["idx"] = "chunk-" + "0" * 32
    path.write_text(json.dumps(value))
    with pytest.raises(GraphFileError, match=r"docs\[1\]: idx 'chunk-0+' is not chunk- \+ md5 of its passage"):
        imported(path, "hipporag_openie_v2")


def test_a_graphrag_relationship_whose_text_unit_does_not_exist_is_refused(tmp_path):
    folder = write_graphrag(tmp_path / "graphrag", unit_of_relationship="u-missing")
    with pytest.raises(GraphFileError, match="row 1: text unit 'u-missing' is not in the text_units table"):
        imported(folder, "graphrag_parquet_v1")


def test_a_blank_field_is_named_by_the_row_and_table_it_is_in_counted_from_1_in_every_format(tmp_path):
    """A blank description in relationships.parquet's second row is that row's fault, not its
    passage's; the same triple as the second line of a JSON-lines file is line 2."""
    import pyarrow.parquet as pq

    folder = write_graphrag(tmp_path / "graphrag")
    table = pq.read_table(folder / "relationships.parquet").to_pydict()
    table["description"][1] = ""
    import pyarrow as pa

    pq.write_table(pa.table(table), folder / "relationships.parquet")
    with pytest.raises(GraphFileError, match="relationships row 2, predicate: '' is not a non-blank string"):
        imported(folder, "graphrag_parquet_v1")
    lines = tmp_path / "triples.jsonl"
    rows = [{"passage": "doc-a", "subject": "Orin River", "predicate": "flows into", "object": "Lake Tessa"},
            {"passage": "doc-a", "subject": "Lake Tessa", "predicate": "", "object": "Velmar"}]
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(GraphFileError, match="line 2, predicate: '' is not a non-blank string"):
        imported(lines, "lab_triples_v1")


def test_each_passage_disagreement_is_refused_by_default_and_counted_when_allowed(tmp_path):
    docs = [CORPUS[0], CORPUS[0], CORPUS[1],
            {"id": "doc-x", "title": "Nowhere", "paragraph_text": "Not in the corpus."}]
    TRIPLES["doc-x"] = [["Nowhere", "is", "absent"]]
    try:
        path = write_v1(tmp_path, docs)
    finally:
        del TRIPLES["doc-x"]
    with pytest.raises(GraphFileError) as info:
        imported(path, "hipporag_openie_v1")
    message = str(info.value)
    assert "1 graph passages not in corpus (first: docs[3] (Nowhere / Not in the corpus.))" in message
    assert "1 graph passages repeated (first: docs[1] repeats docs[0] (doc-a))" in message
    assert "1 corpus passages not in graph (first: doc-c (Velmar))" in message
    section = imported(path, "hipporag_openie_v1",
                       allow=("graph_passages_not_in_corpus", "graph_passages_repeated", "corpus_passages_not_in_graph"))
    assert section["counts"]["graph_passages_not_in_corpus"] == 1
    assert section["counts"]["graph_passages_repeated"] == 1
    assert section["counts"]["corpus_passages_not_in_graph"] == 1
    assert [d["id"] for d in section["documents"]] == ["doc-a", "doc-b"]
    assert section["policy"]["graph_passages_repeated"] == "allow"
    assert section["policy"]["corpus_passages_without_triples"] == "refuse"


def test_a_file_other_than_the_pinned_one_is_refused_before_it_is_read(tmp_path):
    path = write_v1(tmp_path)
    builder = builder_for(path, "hipporag_openie_v1")
    path.write_text(path.read_text().replace("Velmar", "Vilmar"), encoding="utf-8")
    with pytest.raises(GraphFileError, match="not the pinned graph, refused before reading it"):
        pinned_paths(builder, tmp_path)
    path.unlink()
    with pytest.raises(GraphFileError, match="the graph file .* is not in .*: pass the folder that holds it as "
                                             "--graph-dir DIR"):
        pinned_paths(builder, tmp_path)
    (tmp_path / "elsewhere").mkdir()
    path = write_v1(tmp_path / "elsewhere")  # the hint as printed: the folder that holds it
    assert pinned_paths(builder, tmp_path / "elsewhere") == {"graph": path}


def test_a_refused_graph_leaves_no_file(tmp_path):
    """lab import over a twin whose graph misses its corpus: exit 2 material, nothing written."""
    from builders.graph_builders import SOURCE_BUILDERS
    from protocols.new import new_protocol
    from tests.hipporag_fixtures import musique_twin

    _, passages = musique_twin(tmp_path / "data", questions=4)
    graph = tmp_path / "graph" / "triples.jsonl"
    graph.parent.mkdir()
    title, text = passages[0]
    graph.write_text(json.dumps({"passage": {"title": title, "text": text}, "subject": title,
                                 "predicate": "is", "object": "a place"}) + "\n", encoding="utf-8")
    protocol = new_protocol(questions=tmp_path / "data" / "questions.json", corpus=tmp_path / "data" / "corpus.json",
                            layout="hipporag_musique_v1", test="all", development=None, version="twin-graph-v1",
                            graph_builder=builder_for(graph, "lab_triples_v1"))
    protocol_path = tmp_path / "twin-graph-v1.json"
    protocol_path.write_text(json.dumps(protocol), encoding="utf-8")
    out, relations = tmp_path / "run" / "source.json", tmp_path / "run" / "relations.json"
    (tmp_path / "run").mkdir()
    with pytest.raises(GraphFileError, match=rf"{len(passages) - 1} corpus passages not in graph"):
        import_source(protocol_path, tmp_path / "data", out, relations,
                      graph_builder=SOURCE_BUILDERS["imported_triples_v1"], graph_dir=graph.parent)
    assert list((tmp_path / "run").iterdir()) == []


def test_the_shared_openie_file_imports_with_the_counts_of_its_manifest():
    folder = require_shared(SHARED_DATA / "hipporag-musique-openie")
    manifest = json.loads((folder / "MANIFEST.json").read_text())["files"]
    name, facts = next(iter(manifest.items()))
    corpus = json.loads((SHARED_DATA / "hipporag-musique-sample" / "musique_train_corpus.json").read_text())
    documents = [{"id": f"p{i:05d}", "title": p["title"], "paragraph_text": p["text"]} for i, p in enumerate(corpus)]
    section = imported(folder / name, "hipporag_openie_v1", allow=("corpus_passages_without_triples",),
                       corpus=documents)
    counts = section["counts"]
    assert counts["graph_passages"] == counts["matched_passages"] == facts["passages"]
    assert counts["triples_in_file"] == facts["triples"]
    assert counts["corpus_passages_without_triples"] == facts["passages_without_triples"]
    not_three = sum(n for key, n in section["left_out"].items() if key.startswith("not_three_elements:"))
    assert not_three == facts["malformed_triples"]
    assert counts["triples_kept"] + counts["triples_left_out"] == facts["triples"]
