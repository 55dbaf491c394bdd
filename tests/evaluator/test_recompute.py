"""The evaluator's independent recomputation: tokenizer, BM25 (bm25s as oracle), exact RRF, paths."""

from __future__ import annotations

from fractions import Fraction

import bm25s
import numpy as np
import pytest
from bm25s.tokenization import Tokenized
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.verification import fused_lists
from evaluator.verification import recompute as rc
from evaluator.verification.verifiers.graphs.graph import typed_paths as tp

BALANCED = {
    "kind_weights": {"same_entity": 1.0, "semantic_related": 1.0, "contradicts": 0.0},
    "anchor_strength": {"numerator": 1.0, "offset": 2},
    "step_factor": 0.5,
    "affinity": {"base": 0.5, "scale": 0.5, "missing_embedding_cosine": 0.0, "lexical_seed_affinity": 1.0},
    "final_score": {"base_weight": 0.25, "graph_weight": 0.75, "offset": 2},
}
LIMITS = {"max_depth": 2, "max_nodes": 128, "max_edges": 256, "max_scan": 1024}


def test_tokens_are_letter_digit_runs_lowercased():
    assert rc.bm25_tokens("Don't STOP_here: Ünïcode 2² ½ e\u0301") == ["don", "t", "stop", "here", "ünïcode", "2²", "½", "e"]
    assert rc.bm25_tokens("") == [] and rc.bm25_tokens("--") == []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcdefg"), min_size=0, max_size=12), min_size=2, max_size=12),
       st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=5))
def test_bm25_matches_bm25s_lucene(docs, query):
    texts = {f"r{i:02d}": " ".join(doc) for i, doc in enumerate(docs)}
    mine = rc.Bm25.build(texts).scores(" ".join(query))
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in docs]
    if not vocab:
        return
    oracle = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    oracle.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    terms = [t for t in dict.fromkeys(query) if t in vocab]
    expected = oracle.get_scores(terms) if terms else np.zeros(len(docs))
    for i, doc in enumerate(docs):
        rid = f"r{i:02d}"
        if set(doc) & set(query):
            # bm25s' lucene variant drops the constant (k1 + 1) factor of the term weight
            assert mine[rid] == pytest.approx(float(expected[i]) * 2.2, rel=1e-5)
        else:
            assert rid not in mine  # only documents holding a query term are returned


def test_rrf_equal_scores_are_exactly_equal_and_ordered_by_id():
    lexical = ["y", "x"] + [f"l{i}" for i in range(98)]
    semantic = [f"s{i}" for i in range(17)] + ["x"] + [f"t{i}" for i in range(24)] + ["y"]
    fused = rc.rrf({"lexical": lexical, "semantic": semantic}, {"lexical": 0.25, "semantic": 0.75}, 2)
    assert fused["x"]["score"] == fused["y"]["score"] == Fraction(1, 10)
    assert fused["x"]["ranks"] == {"lexical": 2, "semantic": 18} and fused["y"]["ranks"] == {"lexical": 1, "semantic": 43}
    order = rc.fused_order(fused)
    assert order.index("x") + 1 == order.index("y")
    # the float sums disagree, which is why the fusion is exact
    assert 0.25 / 4 + 0.75 / 20 != 0.25 / 3 + 0.75 / 45


def test_ordered_breaks_ties_by_id_and_honours_min_score():
    assert rc.ordered({"b": 1.0, "a": 1.0, "c": 2.0, "d": -0.5}, min_score=0.0) == [("c", 2.0), ("a", 1.0), ("b", 1.0)]
    assert rc.ordered({"b": 1.0, "a": 1.0}, depth=1) == [("a", 1.0)]


def test_cosine_is_float64_and_clamped():
    q = np.array([1.0, 0.0], dtype=np.float32)
    got = rc.cosines(q, {"same": np.array([2.0, 0.0], dtype=np.float32), "opp": np.array([-1.0, 0.0], dtype=np.float32),
                         "diag": np.array([1.0, 1.0], dtype=np.float32)})
    assert got == {"same": 1.0, "opp": -1.0, "diag": pytest.approx(2 ** -0.5, rel=1e-15)}


def graph():
    edges = {e.relation_id: e for e in [
        rc.Edge("rel-1", "same_entity", "A", "C"),
        rc.Edge("rel-2", "semantic_related", "C", "D"),
        rc.Edge("rel-3", "same_entity", "B", "D"),
        rc.Edge("rel-4", "contradicts", "A", "E"),
        rc.Edge("rel-5", "semantic_related", "F", "A"),
    ]}
    return edges, rc.adjacency(edges.values())


def test_strongest_paths_by_hand():
    edges, adj = graph()
    expansion = tp.expand(["A", "B"], adj, edges, BALANCED["kind_weights"], LIMITS)
    assert set(expansion.depth_of) == {"A", "B", "C", "D", "F"}  # contradicts (weight 0) is never followed
    assert set(expansion.edges) == {"rel-1", "rel-2", "rel-3", "rel-5"} and expansion.stop_reasons == []
    aff = {"A": Fraction(1), "B": Fraction(1), "C": Fraction(3, 4), "D": Fraction(1, 2), "F": Fraction(1, 2)}
    paths = tp.strongest_paths(["A", "B"], expansion, aff, BALANCED, 2)
    assert paths["A"].strength == Fraction(1, 3) and paths["B"].strength == Fraction(1, 4)
    assert paths["C"].strength == Fraction(1, 3) * Fraction(1, 2) * Fraction(3, 4)
    # D: via B in one step (1/4 * 1/2 * 1/2 = 1/16) beats A-C-D (1/8 * 1/2 * 1/2 = 1/32)
    assert paths["D"].strength == Fraction(1, 16) and paths["D"].steps == (("rel-3", "forward", "D"),)
    assert paths["F"].steps == (("rel-5", "backward", "F"),)
    assert paths["F"].strength == Fraction(1, 3) * Fraction(1, 2) * Fraction(1, 2)  # 1/12
    # graph rank: strength desc: A 1/3, B 1/4, C 1/8, F 1/12, D 1/16
    assert tp.graph_order(paths) == ["A", "B", "C", "F", "D"]


def test_expansion_budgets_stop_and_are_reported():
    edges, adj = graph()
    weights = BALANCED["kind_weights"]
    assert tp.expand(["A", "B"], adj, edges, weights, {**LIMITS, "max_nodes": 3}).stop_reasons == ["node_limit"]
    scan = tp.expand(["A", "B"], adj, edges, weights, {**LIMITS, "max_scan": 2})
    assert scan.stop_reasons == ["scan_limit"] and scan.adjacency_examined == 2
    assert tp.expand(["A", "B"], adj, edges, weights, {**LIMITS, "max_edges": 1}).stop_reasons == ["edge_limit"]
    shallow = tp.expand(["A", "B"], adj, edges, weights, {**LIMITS, "max_depth": 1})
    assert shallow.stop_reasons == ["depth_limit"] and "C" in shallow.depth_of
    zero = tp.expand(["A", "B"], adj, edges, weights, {**LIMITS, "max_depth": 0})
    assert set(zero.depth_of) == {"A", "B"} and zero.edges == {}


def test_depth_zero_final_order_is_the_base_order():
    base = ["A", "B", "C", "D", "E", "F"]
    anchors = base[:4]
    expansion = tp.expand(anchors, {}, {}, BALANCED["kind_weights"], {**LIMITS, "max_depth": 0})
    paths = tp.strongest_paths(anchors, expansion, {a: Fraction(1) for a in anchors}, BALANCED, 0)
    graph_rank = {rid: r for r, rid in enumerate(tp.graph_order(paths), start=1)}
    final = {rid: tp.final_graph_score(r, graph_rank.get(rid), BALANCED) for r, rid in enumerate(base, start=1)}
    assert sorted(final, key=lambda rid: (-final[rid], rid)) == base


def test_affinity_and_factor_are_exact():
    assert tp.affinity(-0.3, BALANCED, lexical_seed=False) == Fraction(1, 2)
    assert tp.affinity(0.5, BALANCED, lexical_seed=False) == Fraction(3, 4)
    assert tp.affinity(None, BALANCED, lexical_seed=False) == Fraction(1, 2)
    assert tp.affinity(0.9, BALANCED, lexical_seed=True) == 1
    assert tp.step_factor("contradicts", Fraction(1), BALANCED) == 0
    assert rc.parse_fraction("3/80", "x") == Fraction(3, 80)
    with pytest.raises(ValueError, match="exact rational"):
        rc.parse_fraction("0.1", "score_exact")


def test_near_tie_ids_are_only_the_neighbours_that_differ_by_rounding():
    from evaluator.verification.recompute import near_tie_ids

    ranked = [("a", 0.5), ("b", 0.5000000001), ("c", 0.4), ("d", 0.4), ("e", 0.1)]
    # a/b differ by rounding; c/d are exactly equal (the tie rule decides, no room); e stands alone
    assert near_tie_ids(ranked, 2e-6) == {"a", "b"}


def test_lane_budget_cut_is_recomputed_from_the_relations():
    from evaluator.verification.verifiers.lists.rescue import lane_budget_cut

    pairs = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]
    edges = {f"r{i}": rc.Edge(f"r{i}", "same_entity", s, t) for i, (s, t) in enumerate(pairs)}
    spec = {"kinds": ["same_entity"], "max_hops": 2, "max_scan": 6, "max_nodes": 4}
    # from seed a: a (hop 0), b and c (hop 1), d (hop 2); entries examined = those of a, b, c = 6
    assert lane_budget_cut(["a"], edges, spec) is False
    assert lane_budget_cut(["a"], edges, {**spec, "max_scan": 5}) is True
    assert lane_budget_cut(["a"], edges, {**spec, "max_nodes": 3}) is True
    assert lane_budget_cut(["a"], edges, {**spec, "kinds": ["semantic_related"]}) is False
    # two seeds: d is at hop 1 from c, so its entries are examined too, and e is reached
    assert lane_budget_cut(["a", "c"], edges, spec) is True


@pytest.mark.parametrize("max_scan, max_nodes", [(10, 10**6), (60, 10**6), (10**6, 8), (10**6, 40), (10**6, 10**6)])
def test_lane_budget_cut_agrees_with_the_servers_traversal(monkeypatch, max_scan, max_nodes):
    """The server's multi-source traversal reports a cut exactly when the evaluator's recomputation
    (one BFS per seed, counted independently) says the budgets are exceeded."""
    import copy

    from evaluator.verification.verifiers.lists.rescue import expected_rescue, lane_budget_cut
    from ground.canonical import digest
    from protocols.families.lists.rescue import RESCUE_PROFILES
    from server.families.rescue.rescue_route import search_rescue
    from server.retrieval.request import Search
    from tests.server.families.test_rescue import QUERIES, hand_corpus, hand_index, vectors_for

    profile = copy.deepcopy(RESCUE_PROFILES["graph_rescue_v1"])
    profile["lane"].update(max_scan=max_scan, max_nodes=max_nodes)
    docs, relations = hand_corpus()
    vectors = vectors_for(docs)
    index = hand_index(docs, relations, vectors)
    edges = {r["id"]: rc.Edge(r["id"], r["kind"], r["source"], r["target"]) for r in relations["relations"]}
    bm25 = rc.Bm25.build({d["id"]: d["text"] for d in docs})
    outcomes = set()
    for query in QUERIES:
        qvec = np.ones(8, dtype=np.float32)
        body = {"query": query, "space_id": "space-t", "query_vector": [1.0] * 8, "graph_mode": "force"}
        page = search_rescue(index, Search("rescue", "graph_rescue_v1", profile, digest(profile), 150, body))
        lexical = rc.ordered(bm25.scores(query), 100)
        semantic = rc.ordered(rc.cosines(qvec, {k: v.astype(np.float64) for k, v in vectors.items()}), 100)
        want = expected_rescue(query, lexical, semantic, {d["id"]: d["title"] for d in docs}, edges, profile, "force")
        cut = lane_budget_cut([s["id"] for s in want.seeds], edges, profile["lane"])
        assert bool({"max_scan", "max_nodes"} & set(page["stop_reasons"])) is cut, (query, page["stop_reasons"])
        assert page["coverage"]["graph"] is (not cut)
        outcomes.add(cut)
    if max_scan == max_nodes == 10**6:
        assert outcomes == {False}
    elif max_scan == 10 or max_nodes == 8:
        assert outcomes == {True}


def test_a_near_tie_explains_a_swap_but_never_a_missing_hit():

    lists = {"lexical": [("a", 2.0), ("b", 2.0 + 1e-12), ("c", 1.0)], "semantic": []}
    tolerance = {"lexical": 1e-9, "semantic": 2e-6}
    assert fused_lists.explained_by_near_ties(["b", "a", "c"], ["a", "b", "c"], lists, tolerance)
    assert not fused_lists.explained_by_near_ties(["b", "a"], ["a", "b", "c"], lists, tolerance)  # c left out
    assert not fused_lists.explained_by_near_ties(["c", "b", "a"], ["a", "b", "c"], lists, tolerance)  # c is no tie


def test_a_near_tie_swap_that_moves_a_third_document_past_the_cut_is_the_fusion_of_the_reported_lists():
    """Seen at full scale on a base pool (limit 100): two near-equal cosines swapped by the server's
    float32 arithmetic change both fused scores, and the lower one then ties a lexical hit that
    wins on id, so a document in no near tie crosses the page's cut."""

    semantic = [("a1", 0.9), ("a2", 0.8), ("a3", 0.7), ("a4", 0.6), ("a5", 0.5), ("t", 0.4000001), ("c", 0.4),
                ("a8", 0.3)]
    lists = {"lexical": [("m", 3.0)], "semantic": semantic}
    tolerance = {"lexical": 1e-9, "semantic": 2e-6}
    weights, k = {"lexical": 0.25, "semantic": 0.75}, 2  # lexical rank 1 and semantic rank 7 tie at 1/12

    def order(channels: dict) -> list[str]:
        return rc.fused_order(rc.fuse("weighted_reciprocal_rank", channels, weights, k))[:7]

    want = order({c: [rid for rid, _ in lst] for c, lst in lists.items()})
    assert want == ["a1", "a2", "a3", "a4", "a5", "t", "c"]
    ranks = {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5, "c": 6, "t": 7}  # the server's: t and c swapped
    hits = [{"id": rid, "channels": {"semantic": {"rank": ranks[rid]}}} for rid in ["a1", "a2", "a3", "a4", "a5", "c"]]
    hits.append({"id": "m", "channels": {"lexical": {"rank": 1}}})
    have = [h["id"] for h in hits]
    assert not fused_lists.explained_by_near_ties(have, want, lists, tolerance)  # m is in no near tie
    reported = fused_lists.lists_as_reported(hits, lists)
    assert reported["semantic"] == ["a1", "a2", "a3", "a4", "a5", "c", "t", "a8"]
    assert order(reported) == have
    # two hits claiming one channel rank fit no list
    assert fused_lists.lists_as_reported(hits + [{"id": "a8", "channels": {"semantic": {"rank": 6}}}], lists) is None
    # a stored base pool keeps ids only: the audit searches the near-tie swaps instead
    profile = {"fusion": "weighted_reciprocal_rank", "k": k,
               "channels": {c: {"weight": w} for c, w in weights.items()}}
    assert fused_lists.reached_by_near_tie_swaps(have, lists, tolerance, profile, 7)
    assert fused_lists.reached_by_near_tie_swaps(want, lists, tolerance, profile, 7)
    assert not fused_lists.reached_by_near_tie_swaps(["a2", "a1", *have[2:]], lists, tolerance, profile, 7)  # no tie


def test_near_tie_neighbours_pair_only_adjacent_rounding_ties():
    from evaluator.verification.recompute import near_tie_neighbours

    ranked = [("a", 0.5), ("b", 0.5000000001), ("c", 0.4), ("d", 0.4000000001)]
    assert near_tie_neighbours(ranked, 2e-6) == {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}


def _scalar_bm25(index: rc.Bm25, query: str) -> dict[str, float]:
    """The BM25 sum written per record and term in plain Python (the formula of docs/design.md §7)."""
    avgdl = index.average_length
    out: dict[str, float] = {}
    for term in dict.fromkeys(rc.bm25_tokens(query)):
        idf = index.idf(term)
        for rid in index.postings.get(term, ()):
            tf = index.term_frequencies[rid][term]
            norm = index.k1 * (1.0 - index.b + index.b * index.lengths[rid] / avgdl)
            out[rid] = out.get(rid, 0.0) + idf * tf * (index.k1 + 1.0) / (tf + norm)
    return out


def test_vectorized_bm25_sums_are_the_scalar_sums_bit_for_bit():
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(40)] + ["the", "of", "a"]
    texts = {f"r{i:03d}": " ".join(rng.choice(words, size=int(rng.integers(1, 60)))) for i in range(300)}
    index = rc.Bm25.build(texts)
    for _ in range(25):
        query = " ".join(rng.choice(words + ["absent"], size=int(rng.integers(1, 8))))
        assert index.scores(query) == _scalar_bm25(index, query)  # == on floats: exact


def test_cosine_index_agrees_with_the_per_record_cosine():
    rng = np.random.default_rng(5)
    vectors = {f"r{i}": rng.normal(size=16).astype(np.float32) for i in range(200)}
    index = rc.CosineIndex({k: v.astype(np.float64) for k, v in vectors.items()})
    for _ in range(5):
        q = rng.normal(size=16).astype(np.float32)
        fast, slow = index.scores(q), rc.cosines(q, vectors)
        assert list(fast) == list(slow)
        assert max(abs(fast[k] - slow[k]) for k in slow) < 1e-15


def test_ordered_with_a_depth_is_the_prefix_of_the_full_sort():
    rng = np.random.default_rng(6)
    for _ in range(30):
        # few distinct values: long runs of exact ties that the depth cut falls inside
        scores = {f"r{int(i):05d}": float(v) for i, v in zip(rng.permutation(500), rng.integers(0, 12, size=500) / 4)}
        for depth in (1, 10, 100):
            for min_score in (None, 1.0):
                full = rc.ordered(scores, min_score=min_score)
                assert rc.ordered(scores, depth, min_score) == full[:depth]
                assert rc.count_at_least(scores, min_score) == len(full)


def test_the_checkers_recomputation_caches_keep_only_their_most_recent_entries():
    from evaluator.verification.verify import RecentCache

    cache = RecentCache(2)
    cache["a"], cache["b"] = 1, 2
    assert cache["a"] == 1  # a is now the most recent
    cache["c"] = 3
    assert list(cache) == ["a", "c"] and "b" not in cache
    cache["a"] = 4
    cache["d"] = 5
    assert dict(cache) == {"a": 4, "d": 5}


def test_bm25_tokens_are_the_runs_a_character_loop_finds():
    """The evaluator's tokenizer (a regular expression) against its definition, character by
    character with `str.isalnum`, on every Unicode character and on random mixtures of them."""
    import random

    from evaluator.verification.recompute import bm25_tokens

    def by_loop(text: str) -> list[str]:
        tokens, current = [], []
        for char in text:
            if char.isalnum():
                current.append(char)
            elif current:
                tokens.append("".join(current).lower())
                current = []
        if current:
            tokens.append("".join(current).lower())
        return tokens

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert bm25_tokens(every) == by_loop(every)
    assert bm25_tokens(" ".join(every)) == by_loop(" ".join(every))
    rng = random.Random(3)
    pool = "aZ09_-. İßΣσς\u0301\u00b2\u2163\u0660\u4e00\U0001d7ce\u200d\t\n"
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(12)))
        assert bm25_tokens(text) == by_loop(text), text
