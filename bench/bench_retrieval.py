"""Retrieval latency: in-process ranking, server header and HTTP round trip, per method and corpus.

    lab bench retrieval                      # sample + 10k
    lab bench retrieval --corpora sample,10000,100000 --queries 200
    lab bench retrieval --json figures.json   # also the headline figures (`lab bench all`)

Corpora: the shared MuSiQue sample (real questions as queries) and synthetic corpora of the
embedded generator (`importer.synthetic.corpus_of_size`; queries are a document's title plus five
of its words). Vectors are deterministic random unit vectors of dimension 384; relations come
from the real `document_title_graph_v1` builder. Every query runs every protocol method.
Also printed: bm25s (method lucene, same k1, b and our tokens, top 100) against our BM25 top 100
on the same queries, and our cosine against a bare float32 matrix-vector product on the same
matrix. Targets (about 2,000 documents): BM25, cosine, hybrid HTTP p50 < 2 ms, graph < 5 ms;
ours/bm25s <= 1.5; ours/bare matvec <= 2. Figures only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

# One BLAS thread, set before numpy loads (and inherited by the lab subprocess): a matrix-vector
# product is memory-bound, and OpenBLAS worker threads spinning on a busy 2-CPU machine made it
# 40x slower (10 ms instead of 0.25 ms) in this very benchmark.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import psutil  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

from builders.title_graph import build_relations  # noqa: E402
from evaluator.connection.client import LabClient, vector_base64  # noqa: E402
from evaluator.connection.lab_process import start_lab  # noqa: E402
from ground.canonical import digest  # noqa: E402
from protocols.committed import committed_file
from server.retrieval import cosine as cosine_module  # noqa: E402
from server.retrieval.bm25 import bm25  # noqa: E402
from server.retrieval.cosine import cosine, prepare_query  # noqa: E402
from server.retrieval.indexes import Indexes  # noqa: E402
from server.retrieval.tokenize import bm25_tokens  # noqa: E402
from server.routes import search  # noqa: E402

SAMPLE = REPO.parent / "shared" / "data" / "musique-sample"
PROTOCOL = json.loads(committed_file("graph-multihop-protocol-v1.json").read_text())
# the PRF methods as the v5 protocols freeze them (docs/prf.md), timed beside the v1 methods
PRF_METHODS = {name: spec for name, spec in json.loads(committed_file("musique-sample-v5.json").read_text())
               ["methods"].items() if spec["route"] == "prf"}
METHODS = {**PROTOCOL["methods"], **PRF_METHODS}
PRF_TARGET = 2.0  # each PRF method's in-process p50 within 2x weighted_rrf_v2's: a second step that costs more than a second retrieval is not a fair baseline
DIM = 384
SPACE = {"provider": "bench", "model": "random-unit", "revision": "seed-20260921", "dimensions": DIM}


# ------------------------------------------------------------------------------ corpora


def sample_corpus() -> tuple[list[tuple[str, str]], list[str]]:
    pairs: dict[tuple[str, str], None] = {}
    questions = []
    for name in ("musique_sample_dev.jsonl", "musique_sample_train.jsonl"):
        for line in (SAMPLE / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            questions.append(row["question"])
            for p in row["paragraphs"]:
                pairs.setdefault((p["title"], p["paragraph_text"]), None)
    return list(pairs), questions


def synthetic_corpus(size: int, queries: int) -> tuple[list[tuple[str, str]], list[str]]:
    from importer.synthetic import corpus_of_size
    pairs = corpus_of_size("bench-retrieval", size)
    rng = np.random.default_rng(size)
    texts = []
    for i in rng.choice(len(pairs), size=queries, replace=False).tolist():
        title, text = pairs[i]
        words = text.split()
        texts.append(title + " " + " ".join(rng.choice(words, size=min(5, len(words)), replace=False)))
    return pairs, texts


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


# ------------------------------------------------------------------------------ measurement


def percentiles(values: list[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def method_bodies(question: str, vector: list[float], space_id: str) -> dict[str, tuple[str, dict]]:
    bodies = {}
    for name, spec in METHODS.items():
        body = {"query": question, "limit": spec["limit"]}
        if spec["route"] != "lexical":
            body.update(query_vector=vector, space_id=space_id)
        if spec["route"] == "semantic":
            body = {"query_vector": vector, "space_id": space_id, "limit": spec["limit"], "min_score": spec["min_score"]}
        if spec["route"] in ("hybrid", "graph", "prf"):
            body["profile"] = spec["profile"]
        if spec["route"] == "graph":
            body.update(seed=spec["seed"], expansion=spec["expansion"])
        bodies[name] = (spec["route"], body)
    return bodies


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def timed_both(fn) -> tuple[float, float]:
    """(wall ms, CPU ms of this process): CPU time stays meaningful on a machine busy with others."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def run_corpus(label: str, pairs: list[tuple[str, str]], questions: list[str], http_max_docs: int
               ) -> tuple[list[str], dict]:
    """The printed lines of one corpus and its machine-readable figures (for --json)."""
    rng = np.random.default_rng(20260921)
    projection = sorted(({"id": "musique-" + digest({"title": t, "paragraph_text": p}), "title": t,
                          "paragraph_text": p} for t, p in pairs), key=lambda d: d["id"])
    ids = [d["id"] for d in projection]
    texts = [d["title"] + "\n" + d["paragraph_text"] for d in projection]
    doc_vectors = unit_vectors(rng, len(ids))
    query_vectors = unit_vectors(rng, len(questions))
    t0 = time.perf_counter()
    relations = build_relations(projection, "bench")["relations"]
    build_s = time.perf_counter() - t0
    space_id = "space-" + digest(SPACE)

    index = Indexes().scope("lab")
    t0 = time.perf_counter()
    for rid, text, vec in zip(ids, texts, doc_vectors):
        index.put_memory(rid, 1, text, {"content": text, "metadata": {}})
        index.put_binding(rid, 1, space_id, vec, binding_id="emb-" + rid[-32:])
    for r in relations:
        index.put_relation({"id": r["id"], "revision": 1, "kind": r["kind"], "source": {"id": r["source"], "revision": 1},
                            "target": {"id": r["target"], "revision": 1}, "provenance": r["provenance"]})
    index_s = time.perf_counter() - t0
    lines = [f"## {label}: {len(ids)} documents, {len(relations)} relations, {len(questions)} queries "
             f"(graph build {build_s:.1f} s, in-memory index {index_s:.1f} s)"]

    vec_lists = [[float(x) for x in v] for v in query_vectors]
    per_query = [method_bodies(q, v, space_id) for q, v in zip(questions, vec_lists)]
    for bodies in per_query[:3]:  # warm caches (postings, norms, id order)
        for route, body in bodies.values():
            search(index, route, body)
    in_process = {name: [timed_both(lambda: search(index, route, body)) for route, body in
                         (bodies[name] for bodies in per_query)] for name in METHODS}

    bm25_line, bm25_ratio = compare_bm25s(index, texts, questions)
    matvec_line, matvec_ratio = compare_matvec(index, space_id, query_vectors)
    scan_line, scan_ratio = compare_scans(index, space_id, query_vectors)
    lines += [bm25_line, matvec_line, scan_line]

    header: dict[str, list[float]] = {name: [] for name in METHODS}
    http: dict[str, list[float]] = {name: [] for name in METHODS}
    server_cpu: dict[str, float] = {}
    client: dict[str, tuple[float, float]] = {}  # per method: client CPU ms per request, mean response bytes
    rss = None
    if len(ids) <= http_max_docs:
        rss = run_http(ids, texts, doc_vectors, relations, per_query, header, http, server_cpu, space_id, lines, client)

    lines.append(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    lines.append("")
    lines.append("| method | in-process p50 / p95 ms | in-process CPU p50 ms | server header p50 / p95 ms "
                 "| HTTP p50 / p95 ms | HTTP - header p50 ms | server CPU per request ms | client CPU per request ms "
                 "| response bytes |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    fmt = (lambda p: f"{p[0]:.3f} / {p[1]:.3f}" if p else "not run")
    figures: dict[str, Any] = {"corpus": label, "documents": len(ids), "queries": len(questions), "bm25_ratio": bm25_ratio,
               "matvec_ratio": matvec_ratio, "quantized_over_float32": scan_ratio,
               "load_average": os.getloadavg()[0], "rss_mib": rss and rss / 2**20, "methods": {}}
    for name in METHODS:
        ip = percentiles([w for w, _ in in_process[name]])
        cpu = float(np.percentile([c for _, c in in_process[name]], 50))
        hd = percentiles(header[name]) if header[name] else None
        ht = percentiles(http[name]) if http[name] else None
        sc = f"{server_cpu[name]:.3f}" if name in server_cpu else "not run"
        wire = f"{np.percentile(np.array(http[name]) - np.array(header[name]), 50):.3f}" if http[name] else "not run"
        cc, size = (f"{client[name][0]:.3f}", f"{client[name][1]:,.0f}") if name in client else ("not run", "-")
        lines.append(f"| {name} | {fmt(ip)} | {cpu:.3f} | {fmt(hd)} | {fmt(ht)} | {wire} | {sc} | {cc} | {size} |")
        wire_ms = float(np.percentile(np.array(http[name]) - np.array(header[name]), 50)) if http[name] else None
        figures["methods"][name] = {"in_process_p50_ms": ip[0], "in_process_cpu_p50_ms": cpu, "header_p50_ms": hd and hd[0],
                                    "http_p50_ms": ht and ht[0], "http_p95_ms": ht and ht[1],
                                    "http_minus_header_p50_ms": wire_ms,
                                    "server_cpu_per_request_ms": server_cpu.get(name),
                                    "client_cpu_per_request_ms": client[name][0] if name in client else None,
                                    "response_bytes_mean": client[name][1] if name in client else None}
    if rss is not None:
        lines.append(f"server RSS after load and queries: {rss / 2**20:.0f} MiB")
    base = figures["methods"]["weighted_rrf_v2"]["in_process_p50_ms"]
    base_cpu = figures["methods"]["weighted_rrf_v2"]["in_process_cpu_p50_ms"]
    for name in PRF_METHODS:
        mine = figures["methods"][name]["in_process_p50_ms"]
        cpu = figures["methods"][name]["in_process_cpu_p50_ms"]
        figures["methods"][name]["over_weighted_rrf_v2"] = mine / base
        figures["methods"][name]["cpu_over_weighted_rrf_v2"] = cpu / base_cpu
        # CPU time beside wall time: on a loaded machine the wall ratio mostly measures the others
        lines.append(f"{name}: in-process p50 {mine:.3f} ms = {mine / base:.2f}x weighted_rrf_v2's {base:.3f} ms "
                     f"(CPU p50 {cpu:.3f} ms = {cpu / base_cpu:.2f}x its {base_cpu:.3f} ms; target: at most "
                     f"{PRF_TARGET:.0f}x; load average {os.getloadavg()[0]:.1f})")
    return lines, figures


def compare_bm25s(index, texts: list[str], questions: list[str]) -> tuple[str, float]:
    import bm25s
    corpus_tokens = [bm25_tokens(t) for t in texts]
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
    retriever.index(corpus_tokens, show_progress=False)
    vocab = retriever.vocab_dict
    k = min(100, len(texts))
    ours, theirs, worst = [], [], 0.0
    for q in questions:
        tokens = [t for t in dict.fromkeys(bm25_tokens(q)) if t in vocab]
        if not tokens:
            continue
        ours.append(timed(lambda: bm25(index, q, 100)))
        result = {}

        def run():
            result["r"] = retriever.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        theirs.append(timed(run))
        top_ours = bm25(index, q, 10).scores
        top_theirs = sorted(result["r"][1][0].tolist(), reverse=True)[: len(top_ours)]
        # Lucene (and so bm25s "lucene") drops BM25's constant (k1 + 1) numerator factor
        worst = max([worst] + [abs(a / 2.2 - b) for a, b in zip(top_ours, top_theirs)])
    o, t = np.median(ours), np.median(theirs)
    faster = "ours" if o < t else "bm25s"
    return (f"BM25 top-100 query time p50: ours {o:.3f} ms, bm25s (lucene, same tokens) {t:.3f} ms; "
            f"ours/bm25s = {o / t:.2f} ({faster} faster); max |ours/(k1+1) - bm25s| over top-10 scores = {worst:.2e}",
            float(o / t))


def compare_matvec(index, space_id: str, query_vectors: np.ndarray) -> tuple[str, float]:
    space = index.spaces[space_id]
    matrix = space.rows[: space.count]
    ours, bare = [], []
    for q in query_vectors:
        query = prepare_query(space, q)
        ours.append(timed(lambda: cosine(index, query, 10, -1.0)))
        q32 = query.unit32
        bare.append(timed(lambda: matrix @ q32))
    o, b = np.median(ours), np.median(bare)
    return (f"cosine top-10 p50: ours {o:.3f} ms, bare numpy float32 matvec on the same matrix {b:.3f} ms; "
            f"ours/bare = {o / b:.2f}", float(o / b))


def compare_scans(index, space_id: str, query_vectors: np.ndarray) -> tuple[str, float]:
    """The int8-prefiltered exact scan against the float32-prefiltered one, same queries, top 100
    (the depth fusion and graph seeds ask for), alternated query by query."""
    space = index.spaces[space_id]
    quantized: list[float] = []
    float32: list[float] = []
    for q in query_vectors:
        query = prepare_query(space, q)
        for threshold, into in ((0, quantized), (10**12, float32)):
            saved, cosine_module.QUANTIZED_MIN_ROWS = cosine_module.QUANTIZED_MIN_ROWS, threshold
            try:
                into.append(timed(lambda: cosine(index, query, 100, -1.0)))
            finally:
                cosine_module.QUANTIZED_MIN_ROWS = saved
    a, b = np.median(quantized), np.median(float32)
    return (f"exact cosine top-100 p50: int8 prefilter {a:.3f} ms, float32 prefilter {b:.3f} ms; "
            f"quantized/float32 = {a / b:.2f} (the server uses int8 from {cosine_module.QUANTIZED_MIN_ROWS:,} rows)",
            float(a / b))


def http_body(body: dict) -> dict:
    """What the evaluator sends: the query vector as base64 of its float64 bytes."""
    return {**body, "query_vector": vector_base64(body["query_vector"])} if "query_vector" in body else body


def run_http(ids, texts, doc_vectors, relations, per_query, header, http, server_cpu, space_id, lines,
             client_figures: dict) -> int:
    """Load the corpus into a real lab over HTTP, then time every method's searches. Besides wall
    times, the CPU each side spends per request (the server's process, the client's thread: encode,
    send, parse of the HTTP answer and of its JSON page), which the machine's load barely moves."""
    with tempfile.TemporaryDirectory() as tmp:
        lab = start_lab(Path(tmp) / "db", Path(tmp) / "access.json")
        try:
            client = LabClient(lab.access)
            t0 = time.perf_counter()
            key_of = {}
            for start in range(0, len(ids), 500):
                chunk = list(range(start, min(len(ids), start + 500)))
                receipts = client.create_memories([{"idempotency_key": ids[i], "external_id": ids[i], "payload": {"content": texts[i],
                                                    "metadata": {}}} for i in chunk])["receipts"]
                key_of.update({ids[i]: r["id"] for i, r in zip(chunk, receipts)})
            for start in range(0, len(ids), 100):
                chunk = list(range(start, min(len(ids), start + 100)))
                client.attach_embeddings([{"idempotency_key": "e" + ids[i], "record_id": key_of[ids[i]], "revision": 1,
                                           "space": SPACE, "vector": [float(x) for x in doc_vectors[i]]}
                                          for i in chunk])
            for start in range(0, len(relations), 1000):
                client.assert_relations([{"idempotency_key": r["id"], "external_id": r["id"], "kind": r["kind"],
                                          "source": {"id": key_of[r["source"]], "revision": 1},
                                          "target": {"id": key_of[r["target"]], "revision": 1},
                                          "provenance": r["provenance"]} for r in relations[start:start + 1000]])
            lines.append(f"HTTP load of memories, embeddings and relations: {time.perf_counter() - t0:.1f} s")
            for bodies in per_query[:3]:
                for route, body in bodies.values():
                    client.search(route, http_body(body))
            server = psutil.Process(lab.pid)
            for name in METHODS:
                before = sum(server.cpu_times()[:2])
                client_cpu, size = 0.0, 0
                for bodies in per_query:
                    route, body = bodies[name]
                    started = time.thread_time()
                    _, micros, size_one, seconds = client.search(route, http_body(body))
                    client_cpu += time.thread_time() - started
                    size += size_one
                    header[name].append(micros / 1000)
                    http[name].append(seconds * 1000)
                server_cpu[name] = (sum(server.cpu_times()[:2]) - before) * 1000 / len(per_query)
                client_figures[name] = (client_cpu * 1000 / len(per_query), size / len(per_query))
            rss = server.memory_info().rss
            client.close()
        finally:
            lab.stop()
    return rss


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lab bench retrieval", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="sample,10000", help="comma list of sample and/or sizes")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--http-max-docs", type=int, default=20000, help="skip the HTTP part above this size")
    parser.add_argument("--json", type=Path, help="also write the headline figures here (`lab bench all` reads it)")
    args = parser.parse_args(argv)
    results = []
    for corpus in args.corpora.split(","):
        if corpus == "sample":
            pairs, questions = sample_corpus()
            questions = questions[: max(args.queries, len(questions))]
            label = "MuSiQue sample"
        else:
            pairs, questions = synthetic_corpus(int(corpus), args.queries)
            label = f"synthetic {int(corpus):,}"
        lines, figures = run_corpus(label, pairs, questions, args.http_max_docs)
        for line in lines:
            print(line, flush=True)
        print(flush=True)
        results.append(figures)
    if args.json:
        args.json.write_text(json.dumps({"bench": "retrieval", "corpora": results}, indent=1))


if __name__ == "__main__":
    main()
