"""The reach/ceiling section (evaluator/derived/reach.py) on hand-built rows: reached vs
re-ranked gold, seed shares, both oracles over the base pool, and its table bound to the public
report's paths."""

from __future__ import annotations

import pytest

from evaluator.derived.reach import derive_reach
from evaluator.numbers import metrics
from evaluator.views.reach_table import reach_tables

PROTOCOL = {"methods": {"weighted_rrf_v2": {"route": "hybrid", "profile": "weighted_rrf_v2", "limit": 10},
                        "walk": {"route": "walk", "profile": "seeded_walk_v1", "limit": 10}}}
QUERIES = {"q1": {"judgments": {"a": 2, "b": 1, "z": 1}}, "q2": {"judgments": {"c": 1}}}
POOLS = {"q1": ["x", "a", "y", "b"], "q2": ["c", "x"]}


def row(query, method, ranking, seeds=()):
    records = [f"r-{d}" for d in ranking]
    return {"query_id": query, "method": method, "ranking": ranking, "records": records,
            "page": {"anchors": [{"id": f"r-{d}"} for d in seeds]}}


def test_reach_splits_gold_by_the_base_pool_and_counts_seeds():
    rows = [row("q1", "weighted_rrf_v2", ["x", "a", "y", "b"]), row("q2", "weighted_rrf_v2", ["c", "x"]),
            row("q1", "walk", ["z", "a", "x"], seeds=["a", "x"]), row("q2", "walk", ["c"], seeds=["c"])]
    reach = derive_reach(rows, QUERIES, POOLS, PROTOCOL)
    walk = reach["methods"]["walk"]
    assert (walk["gold@10"], walk["reached"], walk["reranked"]) == (3, 1, 2)  # z is outside q1's pool
    assert walk["reached_share"] == pytest.approx(1 / 3) and walk["seed_share"] == pytest.approx(3 / 4)
    base = reach["methods"]["weighted_rrf_v2"]
    assert base["reached"] == 0 and base["seed_share"] is None
    ideal = (metrics.ndcg(["a", "b", "x", "y"], QUERIES["q1"]["judgments"], 10) + 1.0) / 2
    assert reach["oracle"]["rerank_ndcg@10"] == pytest.approx(ideal)
    assert (reach["oracle"]["gold"], reach["oracle"]["gold_outside"]) == (4, 1)
    assert reach["base"]["method"] == "weighted_rrf_v2"
    table, ceiling = reach_tables({"reach": reach})
    assert [c.text() for c in table.rows[-1]] == ["weighted_rrf_v2", "3", "0.000", "1.000", "-"]
    # every value sits under the header that names it: counts under gold@10, shares under shares
    assert [c.text() for c in table.rows[0]][1:4] == ["3", "0.333", "0.667"]
    assert all(c.text().startswith("0.") or c.text() in ("1.000", "-") for r in table.rows for c in r[2:])
    assert [c.text() for c in ceiling.rows[0]] == ["nDCG@10 of a perfect re-rank of the pool", f"{ideal:.3f}"]
    assert [c.text() for c in ceiling.rows[2]] == ["gold passages outside the pool", "1"]


def test_no_pools_no_section():
    assert derive_reach([], QUERIES, None, PROTOCOL) is None
    assert reach_tables({"reach": None}) == []


def test_audit_recomputes_the_base_pools_and_catches_an_edited_one():
    import copy
    from types import SimpleNamespace

    import numpy as np

    from evaluator.audit.reach_audit import base_pool_failures
    from evaluator.verification import recompute as rc
    from evaluator.verification.verify import Checker, RecentCache
    from protocols.routes import PROFILES

    rng = np.random.default_rng(4)
    texts = {f"r{i:03d}": f"word{i % 7} common text{i % 13} n{i}" for i in range(150)}
    checker = Checker.__new__(Checker)
    checker.profiles = {"weighted_rrf_v2": PROFILES["weighted_rrf_v2"]}
    checker.bm25 = rc.Bm25.build(texts)
    checker.cosine_index = rc.CosineIndex({r: rng.standard_normal(8) for r in texts})
    checker._work, checker.derived, checker._keep, checker._kept = RecentCache(8), {}, frozenset(), {}
    checker.queries = {"q1": {"id": "q1", "question": "word3 text5"}}
    checker.frozen = SimpleNamespace(query_vectors={"q1": rng.standard_normal(8)},
                                     protocol={"evaluation": {"min_score": -1.0}})
    checker.record_of = {f"d{r}": r for r in texts}
    checker.doc_of = {r: f"d{r}" for r in texts}
    _, order, _ = checker.fused(checker.queries["q1"], "weighted_rrf_v2")
    report = {"protocol": PROTOCOL, "plan": {"queries": ["q1"]},
              "base_pools": {"q1": [f"d{r}" for r in order[:100]]}}
    def check_pools(items):
        return [checker.pool_difference(*item) for item in items]
    assert base_pool_failures(report, check_pools, checker.doc_of) == []
    edited = copy.deepcopy(report)
    edited["base_pools"]["q1"][3], edited["base_pools"]["q1"][60] = report["base_pools"]["q1"][60], report["base_pools"]["q1"][3]
    failures = base_pool_failures(edited, check_pools, checker.doc_of)
    assert failures == [f"base_pools[q1]: position 4 holds d{order[60]}, recomputed d{order[3]}"]
    assert base_pool_failures({**report, "base_pools": None}, check_pools, checker.doc_of) == [
        "base_pools: absent, but the protocol has a base method"]


def test_the_checker_keeps_the_base_profiles_lists_past_its_work_cache():
    """`Checker(keep=...)`: the base pools, checked after every timed job, reread the base
    profile's fused lists of each query instead of recomputing them once the query's scores are
    evicted; another profile is recomputed as before, and either way the lists are the same."""
    from types import SimpleNamespace

    import numpy as np

    from evaluator.verification import recompute as rc
    from evaluator.verification.verify import Checker, RecentCache
    from protocols.routes import PROFILES

    rng = np.random.default_rng(5)
    texts = {f"r{i:03d}": f"word{i % 5} text{i % 11} n{i}" for i in range(60)}
    checker = Checker.__new__(Checker)
    checker.profiles = {name: PROFILES[name] for name in ("weighted_rrf_v2", "weighted_rrf_v1")}
    checker.bm25 = rc.Bm25.build(texts)
    checker.cosine_index = rc.CosineIndex({r: rng.standard_normal(8) for r in texts})
    checker._work, checker.derived = RecentCache(1), {}
    checker._keep, checker._kept = frozenset({"weighted_rrf_v2"}), {}
    checker.queries = {q: {"id": q, "question": f"word{i} text{i}"} for i, q in enumerate(["q1", "q2"])}
    checker.frozen = SimpleNamespace(query_vectors={q: rng.standard_normal(8) for q in checker.queries},
                                     protocol={"evaluation": {"min_score": -1.0}})
    calls = []
    recompute = Checker._fused
    checker._fused = lambda query, profile: calls.append((query["id"], profile)) or recompute(checker, query, profile)
    first = {p: checker.fused(checker.queries["q1"], p) for p in checker.profiles}
    checker.fused(checker.queries["q2"], "weighted_rrf_v2")  # evicts q1's work (a cache of one query)
    again = {p: checker.fused(checker.queries["q1"], p) for p in checker.profiles}
    assert again == first and again["weighted_rrf_v2"] is first["weighted_rrf_v2"]
    assert calls == [("q1", "weighted_rrf_v2"), ("q1", "weighted_rrf_v1"), ("q2", "weighted_rrf_v2"), ("q1", "weighted_rrf_v1")]
