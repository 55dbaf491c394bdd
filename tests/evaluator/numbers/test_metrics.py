"""evaluator.numbers.metrics against ir_measures (pytrec_eval) as an oracle on the same runs."""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import Qrel, R, ScoredDoc, Success, nDCG

from evaluator.numbers import metrics

DOCS = [f"d{i:02d}" for i in range(30)]


@st.composite
def runs(draw):
    """A few queries, each with a ranking of up to 15 distinct docs and 1-4 judged documents."""
    queries = {}
    for q in range(draw(st.integers(1, 4))):
        ranking = draw(st.lists(st.sampled_from(DOCS), min_size=0, max_size=15, unique=True))
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=4, unique=True))
        grades = {doc: draw(st.integers(1, 3)) for doc in judged}
        queries[f"q{q}"] = (ranking, dict(sorted(grades.items())))
    return queries


def oracle(queries, measure):
    qrels = [Qrel(q, doc, g) for q, (_, judg) in queries.items() for doc, g in judg.items()]
    # strictly decreasing scores so trec_eval's own tie-breaking never reorders the ranking
    run = [ScoredDoc(q, doc, 100.0 - r) for q, (ranking, _) in queries.items() for r, doc in enumerate(ranking)]
    values = {q: 0.0 for q in queries}
    for row in ir_measures.iter_calc([measure], qrels, run):
        values[row.query_id] = row.value
    return values


@settings(max_examples=60, deadline=None)
@given(runs())
def test_ndcg_matches_ir_measures_with_exponential_gain(queries):
    expected = oracle(queries, nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10)
    for q, (ranking, judgments) in queries.items():
        assert metrics.ndcg(ranking, judgments, 10) == pytest.approx(expected[q], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from([2, 5, 10]))
def test_recall_matches_ir_measures(queries, cutoff):
    expected = oracle(queries, R @ cutoff)
    for q, (ranking, judgments) in queries.items():
        assert metrics.recall(ranking, judgments, cutoff) == pytest.approx(expected[q], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(runs())
def test_support_metrics_match_ir_measures(queries):
    """no support@10 = 1 - Success@10; all supports@10 = [R@10 == 1] (every judged document is relevant)."""
    success, recall = oracle(queries, Success @ 10), oracle(queries, R @ 10)
    for q, (ranking, judgments) in queries.items():
        assert metrics.no_support(ranking, judgments, 10) == 1.0 - success[q]
        assert metrics.all_supports(ranking, judgments, 10) == (1.0 if recall[q] == 1.0 else 0.0)


def test_ndcg_hand_computed():
    judgments = {"a": 1, "b": 1, "c": 1}
    # hits at ranks 2 and 4; ideal has the three at ranks 1-3
    value = metrics.ndcg(["x", "a", "y", "b"], judgments, 10)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert value == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    # a relevant document below the cutoff earns nothing
    assert metrics.ndcg([f"z{i}" for i in range(10)] + ["a"], judgments, 10) == 0.0


def test_support_and_chain_metrics():
    judgments = {"a": 1, "b": 1}
    chain = ["a", "b", "a"]
    top = ["a", "x", "y"]
    m = metrics.query_metrics(top, judgments, chain)
    assert m["all_supports@10"] == 0.0 and m["no_support@10"] == 0.0
    assert m["chain_coverage@10"] == pytest.approx(2 / 3)
    assert m["full_chain_hit@10"] == 0.0
    assert m["recall@2"] == 0.5 and m["judged_recall@10"] == 0.5
    both = metrics.query_metrics(["b", "a"], judgments, chain)
    assert both["all_supports@10"] == 1.0 and both["full_chain_hit@10"] == 1.0
    none = metrics.query_metrics(["x"], judgments, chain)
    assert none["no_support@10"] == 1.0 and none["chain_coverage@10"] == 0.0
    assert list(m) == list(metrics.METRIC_ORDER)


def test_a_ranking_with_a_repeated_document_is_refused():
    with pytest.raises(ValueError, match="twice"):
        metrics.query_metrics(["a", "a"], {"a": 1}, ["a"])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50), st.sampled_from([0.0, 0.5, 0.95, 1.0]))
def test_percentile_is_numpy_linear(values, p):
    assert metrics.percentile(values, p) == pytest.approx(float(np.percentile(values, 100 * p)), rel=1e-12, abs=1e-9)


def test_aggregate_per_method_and_category():
    rows = [
        {"query_id": "2hop__1", "category": "2hop", "method": "m", "metrics": {"ndcg@10": 1.0}},
        {"query_id": "2hop__2", "category": "2hop", "method": "m", "metrics": {"ndcg@10": 0.0}},
        {"query_id": "3hop1__3", "category": "3hop1", "method": "m", "metrics": {"ndcg@10": 0.5}},
    ]
    agg = metrics.aggregate(rows)
    assert agg["methods"]["m"] == {"queries": 3, "ndcg@10": pytest.approx(0.5)}
    assert agg["categories"]["2hop"]["m"]["ndcg@10"] == 0.5
    assert agg["categories"]["3hop1"]["m"]["queries"] == 1
