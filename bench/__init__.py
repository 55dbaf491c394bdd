"""Benchmarks and design harnesses, run as `lab bench NAME [ITS FLAGS]` (`lab bench all` for every
benchmark in its standard form). Figures are printed beside their targets and the machine's load;
nothing here asserts (docs/scale.md).

This module only names them: each benchmark's own module (and its heavy imports) loads when it runs.
"""

from __future__ import annotations

# name -> (module with `main(argv)`, one line for `lab bench --help`)
BENCHES: dict[str, tuple[str, str]] = {
    "all": ("bench.run_all", "every benchmark below in its standard form, then one summary table (`make bench`)"),
    "graph-build": ("bench.bench_graph_build", "graph build time at 100,000 documents"),
    "graph-import": ("bench.bench_graph_import", "import of an external graph at 100,000 passages: time and peak memory"),
    "leaderboard": ("bench.bench_leaderboard", "a leaderboard of 20 methods x 2,417 queries x 3 datasets: time against 60 s"),
    "embedding": ("bench.bench_embedding", "embedding throughput (any provider, any corpus, a thread/batch sweep) and agreement between spaces"),
    "store-writes": ("bench.bench_store_writes", "batch-write throughput over HTTP and GET /health round trip"),
    "retrieval": ("bench.bench_retrieval", "retrieval latency per method and corpus, in process and over HTTP"),
    "ann": ("bench.bench_ann", "the ANN lane against exact cosine: build, memory, p50, recall@10"),
    "kill-restart": ("bench.kill_restart", "SIGKILL the lab during a batch load, reopen, replay: nothing lost"),
    "full-scale": ("bench.bench_full_scale", "the full-scale protocol's synthetic twin, end to end: time and RSS per stage"),
    "corpus-scale": ("bench.bench_corpus_scale", "import, graph, embedding and indexes on the real 6,119-passage 2Wiki corpus"),
    "hipporag2-pagerank": ("bench.peers.hipporag2_pagerank", "HippoRAG 2's whole-graph PageRank beside igraph's (prpack): p50 ratio and top-10 agreement"),
    "encoding-plan": ("bench.peers.encoding_plan", "every text the lab encodes, by section and encoder: recipe 1, recipe 2 and sentence-transformers' encode(), tokens/s and the machine's limit"),
    "linearrag-pagerank": ("bench.peers.linearrag_pagerank", "LinearRAG's walk beside igraph's (prpack) over finished linearrag runs: p50 ratio and top-10 agreement"),
    "validate": ("bench.bench_validate", "ms per page of the independent checks of a finished run, in process and on Dask"),
    "compare-campaigns": ("bench.design.compare_campaigns", "are two reports' rankings, scores and pages byte-identical?"),
    "api-examples": ("bench.api_examples", "generate docs/api.md's store-route examples (--search: a page of every search route) from a fresh lab"),
    "graph-v3-dev": ("bench.design.graph_v3_dev", "graph-v3 design harness over development queries only"),
    "graph-v4-dev": ("bench.design.graph_v4_dev", "graph-v4 design harness (entity relations) over development queries only"),
    "prf-dev": ("bench.design.prf_dev", "PRF design harness (RM3, Rocchio, their fusion) over development queries only"),
    "hipporag2-dev": ("bench.design.hipporag2_dev", "hipporag2_v1 beside dense on HippoRAG's GPT-3.5 graph, development rows only (exploratory)"),
    "linearrag-draws": ("bench.design.linearrag_draws", "LinearRAG's result over draws of the orders its code leaves to chance: each draw's nDCG@10 and their spread, on finished linearrag_v2 runs"),
    "threshold-calibration": ("bench.design.threshold_calibration", "a similarity threshold carried to another encoder: the same quantile of unrelated development pairs"),
    "field-graphs-dev": ("bench.design.field_graphs_dev", "field-graphs design table (ppr profiles beside three baselines) over development queries only"),
}
