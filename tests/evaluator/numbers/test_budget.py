"""Token-budget selection (evaluator/derived/budget.py) and the oracle bound (evaluator/derived/oracle.py)."""

from __future__ import annotations

import itertools
import random

from evaluator.derived import budget
from evaluator.derived.oracle import oracle_ranking
from protocols.committed import committed_file


def corpus(n: int, seed: int) -> tuple[list[str], dict[str, str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(60)]
    texts = {}
    for i in range(n):
        length = rng.randint(3, 40)
        texts[f"d{i:03d}"] = f"Title {i}\n" + " ".join(rng.choice(words) for _ in range(length))
    ranking = sorted(texts)
    rng.shuffle(ranking)
    return ranking, texts


def run_packed(ranking, texts, b):
    tokens = {d: budget.token_count(texts[d]) for d in ranking}
    sets = {d: frozenset(budget.bm25_tokens(texts[d])) for d in ranking}
    return budget.select_packed(ranking, tokens, budget.Similarity(sets), b), tokens


def test_token_count_is_bm25_tokens_of_the_text():
    assert budget.token_count("Ab_c\nDé 12,x") == 5  # ab, c, dé, 12, x


def test_budget_is_never_exceeded_and_selection_is_deterministic():
    for seed, b in itertools.product(range(5), (10, 50, 200, 1000)):
        ranking, texts = corpus(40, seed)
        first, tokens = run_packed(ranking, texts, b)
        again, _ = run_packed(ranking, texts, b)
        assert first == again
        assert first.tokens == sum(tokens[d] for d in first.ids) <= b
        assert len(set(first.ids)) == len(first.ids)
        plain = budget.select_none(ranking, tokens, b)
        assert plain.tokens <= b and plain.ids == ranking[: len(plain.ids)]


def test_backfill_spends_what_fits():
    ranking, texts = corpus(40, 7)
    for b in (30, 120, 400):
        selection, tokens = run_packed(ranking, texts, b)
        left = [d for d in ranking if d not in selection.ids]
        # nothing left over would still fit: the unspent budget was backfilled
        assert all(selection.tokens + tokens[d] > b for d in left)


def test_backfill_takes_skipped_redundant_documents_in_rank_order():
    texts = {"a": "x\nsame words here", "b": "x\nsame words here", "c": "y\nother text entirely"}
    ranking = ["a", "b", "c"]
    selection, _ = run_packed(ranking, texts, 100)
    # b duplicates a (Jaccard 1 >= 0.5): skipped by the greedy pass, taken by the backfill
    assert selection.ids == ["a", "c", "b"] and selection.backfilled == 1


def test_redundancy_penalty_changes_the_pick():
    # a and b are near-duplicates and equally long; c is different and slightly longer.
    texts = {"a": "t\nalpha beta gamma delta", "b": "t\nalpha beta gamma epsilon", "c": "u\nzeta eta theta iota kappa"}
    ranking = ["a", "b", "c"]
    tokens = {d: budget.token_count(texts[d]) for d in ranking}
    sets = {d: frozenset(budget.bm25_tokens(texts[d])) for d in ranking}
    with_penalty = budget.select_packed(ranking, tokens, budget.Similarity(sets), 11)
    no_overlap = budget.Similarity({d: frozenset([d]) for d in ranking})
    without = budget.select_packed(ranking, tokens, no_overlap, 11)
    assert with_penalty.ids == ["a", "c"]
    assert without.ids == ["a", "b"]


def test_ties_break_by_record_id():
    # z at rank 1 (value 1, 2 tokens) and a at rank 3 (value 1/log2(4) = 1/2, 1 token) both give
    # exactly 0.5 per token: the smaller id goes first
    ranking = ["z", "m", "a"]
    tokens = {"z": 2, "m": 100, "a": 1}
    flat = budget.Similarity({d: frozenset([d]) for d in ranking})
    chosen = budget.select_packed(ranking, tokens, flat, 3)
    assert chosen.ids == ["a", "z"]
    # and the other way round: the rank-1 document wins the tie when its id is the smaller one
    assert budget.select_packed(["a", "m", "z"], {"a": 2, "m": 100, "z": 1}, flat, 3).ids == ["a", "z"]


def test_outcome_and_oracle():
    sel = budget.Selection(["a", "b"], 10)
    out = budget.outcome(sel, {"a": 1, "c": 1}, ["c", "a"])
    assert out["evidence_recall"] == 0.5 and out["chain_coverage"] == 0.5 and out["tokens_spent"] == 10
    ranking = ["a", "b", "c", "d", "e"]
    rescued = [False, False, False, True, True]
    assert oracle_ranking(ranking, rescued, {"e": 1, "a": 1, "c": 1}) == ["e", "a", "b", "c", "d"]
    assert oracle_ranking(ranking, rescued, {}) == ranking


def test_rescue_report_block_from_rows():
    import json

    from evaluator.derived.rescue import derive_rescue
    from evaluator.views.rescue_tables import tables
    from evaluator.views.tables import markdown
    protocol = json.loads(committed_file("musique-sample-v2.json").read_text())
    queries = {"q1": {"judgments": {"a": 1, "e": 1}, "evidence_chain": ["a", "e"]},
               "q2": {"judgments": {"x": 1}, "evidence_chain": ["x"]}}

    def row(qid, method, ranking, rescued, reasons, fired=True):
        hits = [{"rescued": r, "payload": {"content": f"{d}\n{d} words here"}} for d, r in zip(ranking, rescued)]
        gate = {"fired": fired, "auto_decision": fired, "vetoed": False, "reasons": reasons}
        return {"query_id": qid, "method": method, "ranking": ranking, "page": {"hits": hits, "gate": gate}}

    rows = [row("q1", "graph_rescue", ["a", "b", "c", "d", "e"], [False, False, False, True, True], ["relation_cue"]),
            row("q2", "graph_rescue", ["y", "x"], [False, False], [], fired=False)]
    block = derive_rescue(rows, protocol, queries)
    d = block["methods"]["graph_rescue"]
    assert d["queries_with_rescued"] == 1 and d["first_rescued_rank_mean"] == 4.0
    assert d["rescued_judged_supports"] == 1 and d["supports_missing_from_base_block"] == 1
    assert d["gate"]["fired_rate"] == 0.5 and d["gate"]["reason_rates"]["relation_cue"] == 0.5
    oracle = block["oracle_bound"]["graph_rescue"]
    assert oracle["label"] == "upper_bound_uses_labels"
    assert oracle["oracle"]["ndcg@10"] >= oracle["actual"]["ndcg@10"]
    curve = block["budget_curve"]["graph_rescue"]["whole_page"]["none"]
    assert set(curve) == {"2000", "4000", "8000", "16000"} and curve["2000"]["evidence_recall"] == 1.0
    assert block == derive_rescue(list(reversed(rows)), protocol, queries)  # order-free, deterministic
    assert "UPPER BOUND" in "".join(markdown(t) for t in tables({"rescue": block}))
    v1 = json.loads(committed_file("musique-sample-v1.json").read_text())
    assert derive_rescue(rows, v1, queries) is None
