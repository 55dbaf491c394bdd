"""The ANN lane `cosine_hnsw_v1` against exact cosine: build time, memory, p50 and recall@10.

    lab bench ann                                # 10k and 100k, both distributions
    lab bench ann --sizes 1000000 --distributions clustered --queries 100   # 1M, bench-only
    lab bench ann --engines faiss,qdrant,usearch --sizes 20000       # the engine comparison
    lab bench ann --sizes 100000,400000 --distributions clustered    # memory and recall as the index grows
    lab bench ann --json figures.json             # headline figures for `lab bench all`

Vectors are generated directly (384-d, float32 unit rows, fixed seeds): `random` = i.i.d. Gaussian
directions (the hardest case for a graph index: no structure at all), `clustered` = a mixture of
size/100 Gaussian topics plus noise (closer to real text embeddings, which live near a
low-dimensional manifold). Queries are held-out vectors of the same distribution. The lane runs
in process exactly as the server runs it (server/families/ann: faiss HNSW from record-id order, every hit
rescored with the exact cosine); "exact" is `cosine_exact_v1` (server/retrieval/cosine.py, the
int8-prefiltered exact scan) on the same index. recall@10 = |ANN top 10 ∩ exact top 10| / 10.
Memory = growth of this process's RSS while the HNSW index is built (the graph plus faiss's own
copy of the vectors), beside the index's exact size (faiss's serialization: the float32 copy, the
neighbour lists and the levels), the bytes per row of the exact lane's arrays and the RSS growth
while the lab's in-memory index is fed (records, bindings and matrices): the memory figures do
not depend on the load, the times do (the load average ends each line). `--sizes 100000,400000`
gives the growth with size. Figures only; nothing asserts. Target: recall@10 >= 0.995 and p50 <= 1 ms
at 100k.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import psutil  # noqa: E402

from protocols.families.lists.ann import ANN_PROFILES  # noqa: E402
from server.families.ann.engine import build  # noqa: E402
from server.retrieval.cosine import cosine, prepare_query  # noqa: E402
from server.retrieval.indexes import Indexes  # noqa: E402

DIM = 384
SPACE = "space-" + "e" * 64
PROFILE = ANN_PROFILES["cosine_hnsw_v1"]


def vectors(distribution: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    centers = rng.standard_normal((max(16, n // 100), DIM)) if distribution == "clustered" else None
    for start in range(0, n, 50_000):  # chunked: 1M x 384 float64 at once would need 3 GB
        m = min(n, start + 50_000) - start
        x = rng.standard_normal((m, DIM))
        if centers is not None:
            x = centers[rng.integers(0, len(centers), m)] * 0.6 + 0.8 * x
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def matrix_bytes_per_row(space) -> float:
    """Bytes per live row of the arrays the exact lane keeps (float32 rows, int8 codes and the
    per-row scalars of the prefilter), counted at their used length: the capacity beyond it is the
    amortized doubling's slack, at most as much again."""
    arrays = (space.rows, space.codes, space.scales, space.scales32, space.residuals, space.code_norms,
              space.row_slots, space.live)
    return sum(a.nbytes / len(a) for a in arrays)


def lab_lane(n: int, distribution: str, queries: int) -> dict:
    data = vectors(distribution, n + queries, seed=n)
    docs, qs = data[:n], data[n:]
    index = Indexes().scope("bench")
    process = psutil.Process()
    rss_before_feed = process.memory_info().rss
    t0 = time.perf_counter()
    for i in range(n):
        rid = f"mem-{i:032x}"
        index.put_memory(rid, 1, "")
        index.put_binding(rid, 1, SPACE, docs[i])
    feed_s = time.perf_counter() - t0
    del data, docs
    space = index.spaces[SPACE]
    feed_mib = (process.memory_info().rss - rss_before_feed) / 2**20  # records, bindings, matrices: the lab's side
    matrix_bytes = matrix_bytes_per_row(space)
    rss0 = process.memory_info().rss
    t0, c0 = time.perf_counter(), time.process_time()
    built = build(index, space, PROFILE)
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    ann_mib = (process.memory_info().rss - rss0) / 2**20
    import faiss
    index_bytes = len(faiss.serialize_index(built.index))  # the graph and faiss's float32 copy, exactly
    from server.families.ann.engine import HnswIndex
    lane = HnswIndex(PROFILE)
    ann_ms, exact_ms, ann_cpu, exact_cpu, recalls = [], [], [], [], []
    for q in qs:
        query = prepare_query(space, q)
        t, c = time.perf_counter(), time.process_time()
        rows = lane.search(built, query.unit32, 10)
        ann_ms.append((time.perf_counter() - t) * 1000)
        ann_cpu.append((time.process_time() - c) * 1000)
        t, c = time.perf_counter(), time.process_time()
        exact = cosine(index, query, 10, -1.0)
        exact_ms.append((time.perf_counter() - t) * 1000)
        exact_cpu.append((time.process_time() - c) * 1000)
        found = {index.slot_ids[s] for s in space.row_slots[rows].tolist()}
        recalls.append(len(found & set(exact.ids)) / 10)
    return {"documents": n, "distribution": distribution, "queries": len(qs), "feed_s": feed_s,
            "build_s": build_s, "build_cpu_s": build_cpu, "ann_index_mib": ann_mib,
            "faiss_index_bytes": index_bytes, "faiss_bytes_per_vector": index_bytes / n,
            "exact_matrix_bytes_per_row": matrix_bytes, "feed_rss_mib": feed_mib,
            "process_rss_mib": process.memory_info().rss / 2**20,
            "ann_p50_ms": percentile(ann_ms, 50), "ann_p95_ms": percentile(ann_ms, 95),
            "exact_p50_ms": percentile(exact_ms, 50), "ann_over_exact": percentile(ann_ms, 50) / percentile(exact_ms, 50),
            "ann_cpu_p50_ms": percentile(ann_cpu, 50), "exact_cpu_p50_ms": percentile(exact_cpu, 50),
            "recall_at_10": float(np.mean(recalls)), "recall_at_10_min": float(np.min(recalls))}


def other_engine(engine: str, n: int, distribution: str, queries: int) -> dict:
    """The same HNSW settings in another engine, for the choice written in docs/scale.md."""
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as scratch:  # qdrant's shard files, removed after
        return _measure_engine(engine, n, distribution, queries, scratch)


def _measure_engine(engine: str, n: int, distribution: str, queries: int, scratch: str) -> dict:
    data = vectors(distribution, n + queries, seed=n)
    docs, qs = data[:n], data[n:]
    truth = np.argsort(-(qs.astype(np.float64) @ docs.astype(np.float64).T), axis=1)[:, :10]
    process = psutil.Process()
    rss0 = process.memory_info().rss
    t0, c0 = time.perf_counter(), time.process_time()
    if engine == "qdrant":
        import qdrant_edge as qe
        shard = qe.EdgeShard.create(scratch, qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Dot),
            hnsw_config=qe.HnswIndexConfig(m=PROFILE["m"], ef_construct=PROFILE["ef_construct"], full_scan_threshold=1,
                                           max_indexing_threads=1),
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=1),
            wal_enabled=False, max_search_threads=1))
        for s in range(0, n, 1000):
            shard.update(qe.UpdateOperation.upsert_points([qe.Point(i, docs[i].tolist()) for i in range(s, min(n, s + 1000))]))
        shard.optimize()

        def search(q):
            request = qe.QueryRequest(limit=10, query=qe.Query.Nearest(q.tolist()),
                                      params=qe.SearchParams(hnsw_ef=PROFILE["hnsw_ef"]))
            return [p.id for p in shard.query(request)]
    elif engine == "usearch":
        from usearch.index import Index
        ix = Index(ndim=DIM, metric="ip", dtype="f32", connectivity=PROFILE["m"],
                   expansion_add=PROFILE["ef_construct"], expansion_search=PROFILE["hnsw_ef"])
        ix.add(np.arange(n), docs, threads=1)

        def search(q):
            return ix.search(q, 10, threads=1).keys.tolist()
    else:
        import faiss
        faiss.omp_set_num_threads(1)
        flat: Any = faiss.IndexHNSWFlat(DIM, PROFILE["m"], faiss.METRIC_INNER_PRODUCT)  # SWIG: stubs differ
        flat.hnsw.efConstruction = PROFILE["ef_construct"]
        flat.add(docs)
        params = faiss.SearchParametersHNSW(efSearch=PROFILE["hnsw_ef"])  # type: ignore[attr-defined]

        def search(q):
            return flat.search(q[None], 10, params=params)[1][0].tolist()
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    mib = (process.memory_info().rss - rss0) / 2**20
    times, recalls = [], []
    for q, t in zip(qs, truth):
        started = time.perf_counter()
        got = search(q)
        times.append((time.perf_counter() - started) * 1000)
        recalls.append(len(set(got) & set(t.tolist())) / 10)
    return {"engine": engine, "documents": n, "distribution": distribution, "build_s": build_s,
            "build_cpu_s": build_cpu, "index_mib": mib, "p50_ms": percentile(times, 50),
            "recall_at_10": float(np.mean(recalls))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lab bench ann", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--distributions", default="clustered,random")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--engines", default="", help="comma list of faiss,qdrant,usearch: compare engines instead")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = []
    for n in [int(s) for s in args.sizes.split(",")]:
        for distribution in args.distributions.split(","):
            if args.engines:
                for engine in args.engines.split(","):
                    r = other_engine(engine, n, distribution, args.queries)
                    print(f"{engine} {n:,} {distribution}: build {r['build_s']:.1f} s (CPU {r['build_cpu_s']:.1f} s), "
                          f"index {r['index_mib']:.0f} MiB, p50 {r['p50_ms']:.3f} ms, recall@10 {r['recall_at_10']:.4f}",
                          flush=True)
                    results.append(r)
                continue
            r = lab_lane(n, distribution, args.queries)
            print(f"cosine_hnsw_v1 {n:,} {distribution}: build {r['build_s']:.1f} s (CPU {r['build_cpu_s']:.1f} s), "
                  f"HNSW +{r['ann_index_mib']:.0f} MiB RSS, serialized {r['faiss_index_bytes'] / 2**20:.1f} MiB "
                  f"({r['faiss_bytes_per_vector']:.0f} B/vector); exact lane {r['exact_matrix_bytes_per_row']:.0f} B/row, "
                  f"feeding the index +{r['feed_rss_mib']:.0f} MiB RSS (process {r['process_rss_mib']:.0f} MiB), "
                  f"p50 ANN {r['ann_p50_ms']:.3f} ms / exact {r['exact_p50_ms']:.3f} ms (ANN/exact "
                  f"{r['ann_over_exact']:.2f}; CPU p50 {r['ann_cpu_p50_ms']:.3f} / {r['exact_cpu_p50_ms']:.3f} ms), recall@10 {r['recall_at_10']:.4f} (min {r['recall_at_10_min']:.1f}); "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            results.append(r)
    if args.json:
        args.json.write_text(json.dumps({"bench": "ann", "load_average": os.getloadavg()[0], "runs": results}, indent=1))


if __name__ == "__main__":
    main()
