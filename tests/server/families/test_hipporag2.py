"""HippoRAG 2's graph, seeds and whole-graph PageRank (docs/hipporag2.md), against HippoRAG's rules and igraph."""

from __future__ import annotations

import json
from fractions import Fraction

import igraph
import numpy as np
import pytest

from builders import hipporag2_graph as hg
from protocols.families.graphs.hipporag2 import HIPPORAG2, PASSAGE, PHRASE
from server.families.hipporag2.linking import LinkedFact, phrase_weights, seeds
from server.families.hipporag2.ranking import passage_rows, rank, seed_vector
from server.retrieval.whole_graph_pagerank import pagerank, reset_of, reset_vector, transitions

RULES = HIPPORAG2["pagerank"]


def test_phrases_and_fact_texts_are_hipporags():
    assert hg.phrase("  Barack Obama's (44th) ") == "barack obama s  44th"
    assert hg.fact_text(("barack obama", "born in", "hawaii")) == "('barack obama', 'born in', 'hawaii')"


def small_graph() -> hg.Hipporag2Graph:
    triples = {
        "a": [["Alpha", "is in", "Beta"], ["alpha", "IS IN", "beta!"], ["Alpha", "likes", "Alpha"]],
        "b": [["Beta", "near", "Gamma"], ["???", "is", "Gamma"]],
        "c": [["Gamma", "holds", "Delta"]],
        "d": [],
    }
    return hg.build(["d", "c", "b", "a"], triples)


def test_the_graph_holds_hipporags_edges_and_weights():
    graph = small_graph()
    assert graph.passages == ["a", "b", "c", "d"]
    assert graph.phrases == ["alpha", "beta", "delta", "gamma"]
    assert graph.left_out == {"empty_subject_or_object": 1}
    # two raw triples process to the same fact: one fact, a relation counted twice in each direction
    assert ("alpha", "is in", "beta") in graph.facts and len(graph.facts) == 4
    assert graph.stats[(PHRASE + "alpha", PHRASE + "beta")] == 2.0 == graph.stats[(PHRASE + "beta", PHRASE + "alpha")]
    assert (PHRASE + "alpha", PHRASE + "alpha") not in graph.stats  # the self loop is dropped
    assert graph.stats[(PASSAGE + "a", PHRASE + "alpha")] == 1.0
    assert graph.holders["gamma"] == ["b", "c"]
    undirected = graph.undirected()
    assert undirected[(PHRASE + "alpha", PHRASE + "beta")] == 4.0  # igraph's two parallel edges
    # a synonym found from one end replaces that order's relation count only
    hg.add_synonyms(graph, {"alpha": [("beta", 0.875)]})
    assert graph.undirected()[(PHRASE + "alpha", PHRASE + "beta")] == 2.875


def test_synonyms_follow_the_threshold_the_short_phrase_rule_and_the_cap():
    rng = np.random.default_rng(3)
    base = rng.standard_normal(16)
    names = [f"twin {i:03d}" for i in range(103)] + ["ab", "far"]
    vectors = np.vstack([base] * 103 + [base, -base]).astype(np.float32)
    found = hg.synonyms(names, vectors)
    assert "ab" not in found  # two alphanumeric characters: seeks none (but can be found)
    assert "far" not in found  # cosine -1
    assert len(found["twin 000"]) == 101  # all 104 others at cosine 1: the cap
    assert all(name != "twin 000" for name, _ in found["twin 000"])
    assert [name for name, _ in found["twin 000"]][:3] == ["ab", "twin 001", "twin 002"]  # ties by phrase


def test_a_cosine_just_below_the_threshold_is_no_synonym():
    below = np.array([[1.0, 0.0], [0.79, float(np.sqrt(1 - 0.79 ** 2))]], dtype=np.float32)
    above = np.array([[1.0, 0.0], [0.81, float(np.sqrt(1 - 0.81 ** 2))]], dtype=np.float32)
    assert hg.synonyms(["one", "two"], below) == {}
    assert set(hg.synonyms(["one", "two"], above)) == {"one", "two"}


def igraph_mass(graph: hg.Hipporag2Graph, nodes: list[str], vector: np.ndarray) -> np.ndarray:
    position = {n: i for i, n in enumerate(nodes)}
    g = igraph.Graph(directed=False)
    g.add_vertices(len(nodes))
    g.add_edges([(position[a], position[b]) for a, b in graph.stats],
                attributes={"weight": list(graph.stats.values())})
    return np.asarray(g.personalized_pagerank(directed=False, damping=0.5, weights="weight",
                                              reset=vector.astype(float).tolist(), implementation="prpack"))


def random_graph(seed: int, passages: int = 300) -> hg.Hipporag2Graph:
    rng = np.random.default_rng(seed)
    ids = [f"p{i:04d}" for i in range(passages)]
    picks = np.minimum(rng.zipf(1.5, size=(passages, 4, 2)), 400)
    graph = hg.build(ids, {pid: [[f"x{a}", "r", f"x{b}"] for a, b in picks[i]] for i, pid in enumerate(ids[:-5])})
    vectors = rng.standard_normal((len(graph.phrases), 8)).astype(np.float32)
    vectors[1::7] = vectors[0::7][: len(vectors[1::7])] + np.float32(0.05)
    return hg.add_synonyms(graph, hg.synonyms(graph.phrases, vectors))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_integer_walk_agrees_with_igraph(seed):
    graph = random_graph(seed)
    nodes = [PHRASE + p for p in graph.phrases] + [PASSAGE + p for p in graph.passages]
    walk = transitions(nodes, graph.undirected(), RULES["transition_bits"])
    rng = np.random.default_rng(seed + 100)
    vector = np.zeros(len(nodes), dtype=np.int64)
    vector[len(graph.phrases):] = rng.integers(0, 1 << 16, len(graph.passages))
    vector[rng.choice(len(graph.phrases), 5, replace=False)] += 1 << 20
    ours = pagerank(walk, reset_vector(vector, RULES["grid_bits"]), RULES["max_iterations"])
    theirs = igraph_mass(graph, nodes, vector)
    share = ours.mass / ours.mass.sum()
    assert np.abs(share - theirs / theirs.sum()).max() < 1e-6
    passages = slice(len(graph.phrases), None)
    top = lambda values: np.lexsort((np.arange(len(graph.passages)), -values[passages]))[:10].tolist()
    assert top(ours.mass.astype(float)) == top(theirs)
    assert ours.iterations <= RULES["max_iterations"] and ours.mass.dtype == np.int64


def test_the_walk_is_the_same_whatever_order_the_edges_arrive_in():
    graph = random_graph(5)
    nodes = [PHRASE + p for p in graph.phrases] + [PASSAGE + p for p in graph.passages]
    edges = graph.undirected()
    shuffled = dict(reversed(list(edges.items())))
    vector = np.arange(len(nodes), dtype=np.int64) % 97
    one = pagerank(transitions(nodes, edges, 26), reset_vector(vector, 36), 40)
    two = pagerank(transitions(nodes, shuffled, 26), reset_vector(vector, 36), 40)
    assert np.array_equal(one.mass, two.mass) and one.last_change == two.last_change


def test_an_edge_weight_that_is_not_exact_on_the_grid_is_refused():
    with pytest.raises(ValueError, match="not a positive multiple"):
        transitions(["a", "b"], {("a", "b"): 1e-300}, 26)


def test_phrase_weights_average_score_over_passage_count():
    facts = [("alpha", "r", "beta"), ("beta", "r", "gamma")]
    holders = {"alpha": ["a"], "beta": ["a", "b"], "gamma": ["b", "c", "d"]}
    linked = [LinkedFact(0, 0.9, 1 << 31), LinkedFact(1, 0.8, 1 << 30)]  # scores 1/2 and 1/4
    weights = phrase_weights(facts, linked, holders, 32)
    assert weights == {"alpha": Fraction(1, 2), "beta": (Fraction(1, 4) + Fraction(1, 8)) / 2, "gamma": Fraction(1, 12)}


def test_seeds_link_the_best_facts_and_every_passage():
    graph = small_graph()
    fact_cos = np.array([0.1, 0.9, 0.9, 0.5])[: len(graph.facts)]
    dense_cos = np.array([0.2, 0.6, 0.4, 0.2])
    found = seeds(fact_cos, dense_cos, graph.facts, graph.holders, HIPPORAG2)
    assert [f.index for f in found.facts] == [1, 2, 3, 0]  # cosine desc, position asc: fewer than 5 facts, all
    assert found.facts[0].score == 1 << 32 and found.facts[-1].score == 0
    assert found.dense.tolist() == [0, 1 << 16, 1 << 15, 0]
    assert found.phrases == sorted(found.phrases, key=lambda item: (-item[1], item[0]))
    nodes = [PHRASE + p for p in graph.phrases] + [PASSAGE + p for p in graph.passages]
    walk = transitions(nodes, graph.undirected(), 26)
    vector = seed_vector(walk, passage_rows(walk, graph.passages), found)
    assert vector[walk.position[PASSAGE + "b"]] == 1 << 16
    ranked = rank(walk, graph.passages, dense_cos, found, HIPPORAG2, 4)
    theirs = igraph_mass(graph, nodes, vector)[len(graph.phrases):]
    assert ranked.mass is not None
    assert [pid for pid, _ in ranked.order] == [graph.passages[i] for i in np.lexsort((np.arange(4), -theirs))]


def test_no_linked_fact_gives_the_dense_order():
    graph = hg.build(["a", "b", "c"], {})
    dense_cos = np.array([0.2, 0.7, 0.7])
    found = seeds(np.array([]), dense_cos, graph.facts, graph.holders, HIPPORAG2)
    walk = transitions([PASSAGE + p for p in graph.passages], {}, 26)
    ranked = rank(walk, graph.passages, dense_cos, found, HIPPORAG2, 3)
    assert ranked.mass is None and ranked.order == [("b", None), ("c", None), ("a", None)]


def test_the_igraph_benchmark_runs_and_reports_each_case(tmp_path):
    from bench.peers import hipporag2_pagerank

    out = tmp_path / "figures.json"
    assert hipporag2_pagerank.main(["--sizes", "400", "--queries", "4", "--json", str(out)]) == 0
    (case,) = json.loads(out.read_text())
    assert case["passages"] == 400 and case["queries"] == 4
    assert case["top10_identical"] + len(case["disagreements"]) == 4
    assert case["lab_p50_ms"] > 0 and case["igraph_p50_ms"] > 0


@pytest.mark.parametrize("seed", [11, 12])
def test_the_verifiers_walk_is_another_algorithm_with_the_same_bits(seed):
    from evaluator.verification import whole_graph_walk as verifier

    graph = random_graph(seed, passages=500)
    nodes = [PHRASE + p for p in graph.phrases] + [PASSAGE + p for p in graph.passages]
    rng = np.random.default_rng(seed)
    vector = rng.integers(0, 1 << 16, len(nodes)).astype(np.int64)
    server = pagerank(transitions(nodes, graph.undirected(), 26), reset_vector(vector, 36), 40)
    mass, iterations, change = verifier.walk(verifier.edge_arrays(nodes, graph.undirected(), 26), vector, 36, 26, 40)
    assert np.array_equal(mass, server.mass) and (iterations, change) == (server.iterations, server.last_change)


@pytest.mark.parametrize(("seeds", "bound", "stops_at"), [
    ([1, 0, 0, 0], 60, 37), ([3, 1, 0, 2], 60, 12), ([1, 1, 1, 1], 60, 10),  # a fixed point before the bound
    ([1, 0, 0, 0], 20, 20), ([3, 1, 0, 2], 5, 5), ([3, 1, 0, 2], 0, 0),  # the bound first: its change is printed
])
def test_the_walk_stops_at_its_fixed_point_or_its_bound_as_the_verifier_does(seeds, bound, stops_at):
    from evaluator.verification import whole_graph_walk as verifier

    nodes = ["a", "b", "c", "d"]
    edges = {("a", "b"): 1.0, ("b", "c"): 2.0, ("c", "d"): 1.0, ("a", "d"): 0.5}
    vector = np.array(seeds, dtype=np.int64)
    server = pagerank(transitions(nodes, edges, 26), reset_vector(vector, 36), bound)
    mass, iterations, change = verifier.walk(verifier.edge_arrays(nodes, edges, 26), vector, 36, 26, bound)
    assert np.array_equal(mass, server.mass) and (iterations, change) == (server.iterations, server.last_change)
    assert server.iterations == stops_at
    assert (server.last_change == 0) == (stops_at < bound or bound == 0)


def _stepped(walk, reset: np.ndarray, bound: int) -> tuple[np.ndarray, int, int]:
    """The walk's rule stepped to the bound with no shortcut: the oracle of the settled stop."""
    shift, kept, mass = walk.transition_bits + 1, reset >> 1, reset
    for step in range(1, bound + 1):
        following = ((walk.incoming @ mass) >> shift) + kept
        change = int(np.abs(following - mass).sum())
        mass = following
        if change == 0:
            return mass, step, 0
    return mass, bound, change


def test_a_walk_caught_in_a_cycle_returns_what_stepping_to_the_bound_returns():
    """The floors can hold the walk in a cycle (here 2-cycles of small random graphs on coarse grids,
    as on LinearRAG's graph): the server and the verifier stop once a state repeats and return the
    state, iteration count and last change that stepping to the bound gives, bit for bit."""
    import random
    from fractions import Fraction

    from evaluator.verification import whole_graph_walk as verifier

    cycles = 0
    for seed in range(300):
        rng = random.Random(seed)
        nodes = [f"n{i}" for i in range(rng.randint(3, 7))]
        edges = {(a, b): Fraction(rng.randint(1, 5)) for i, a in enumerate(nodes) for b in nodes[i + 1:]
                 if rng.random() < 0.5}
        seeds = [rng.randint(0, 5) for _ in nodes]
        if not edges or not sum(seeds):
            continue
        transition_bits, grid_bits, bound = rng.randint(2, 6), rng.randint(3, 10), rng.choice([7, 40, 41])
        walk = transitions(nodes, edges, transition_bits)
        reset = reset_of(seeds, grid_bits)
        want = _stepped(walk, reset, bound)
        server = pagerank(walk, reset, bound)
        mass, iterations, change = verifier.walk(verifier.edge_arrays(nodes, edges, transition_bits),
                                                 np.array(seeds, dtype=np.int64), grid_bits, transition_bits, bound)
        assert np.array_equal(server.mass, want[0]) and (server.iterations, server.last_change) == want[1:], seed
        assert np.array_equal(mass, want[0]) and (iterations, change) == want[1:], seed
        cycles += want[1] == bound and want[2] > 0 and _stepped(walk, reset, 200)[1] == 200
    assert cycles >= 3  # the cases the stop is for were met


def test_the_walk_stops_at_a_constructed_two_cycle_with_the_bounds_state():
    """Two nodes that hand their whole mass to each other with no reset kept: m alternates between
    (1, 0) and (0, 1); at an even bound the walk ends on (1, 0), at an odd one on (0, 1)."""
    import scipy.sparse as sparse

    from server.retrieval.whole_graph_pagerank import Transitions

    full = 1 << 27  # t = 2^(T + 1): the step's halving undone, every unit passed on
    walk = Transitions(["a", "b"], {"a": 0, "b": 1}, sparse.csr_matrix(np.array([[0, full], [full, 0]], dtype=np.int64)),
                       26)
    for bound, state in ((40, [1, 0]), (41, [0, 1])):
        found = pagerank(walk, np.array([1, 0], dtype=np.int64), bound)
        assert found.mass.tolist() == state and (found.iterations, found.last_change) == (bound, 2)
        assert _stepped(walk, np.array([1, 0], dtype=np.int64), bound)[0].tolist() == state


def test_dense_seeds_on_a_grid_boundary_are_decided_by_the_pages_digest():
    from evaluator.verification.verifiers.graphs.hipporag2 import hipporag2_verifier as verifier
    from evaluator.verification.whole_graph_walk import dense_digest

    cosines = np.array([0.0, 0.5, 1.0, 0.25 + 2 ** -40])
    server_floors = np.array([0, 1 << 15, 1 << 16, (1 << 14) - 1], dtype=np.int64)  # one ulp-level disagreement
    chosen = verifier.dense_seeds(cosines, 0.0, 1.0, 16, dense_digest(server_floors))
    assert chosen is not None and np.array_equal(chosen, server_floors)
    far = server_floors.copy()
    far[1] -= 7  # not an ulp: no choice reaches it
    assert verifier.dense_seeds(cosines, 0.0, 1.0, 16, dense_digest(far)) is None


def test_the_fact_prefilter_gives_the_seeds_every_exact_cosine_gives():
    """server/families/hipporag2/hipporag2_route.py `fact_cosines`: exact wherever the top facts or the
    range's ends are decided, near ties and duplicated facts included."""
    from server.families.hipporag2.hipporag2_route import fact_cosines
    from server.retrieval import cosine
    from server.retrieval.indexes import Binding, SpaceMatrix, unit_row

    rng = np.random.default_rng(7)
    count, dimensions = 3000, 64
    space = SpaceMatrix("s", dimensions)
    base = rng.standard_normal((count, dimensions))
    for i in range(count):
        vector = base[i] if i % 5 else base[i - 1] + 1e-7 * rng.standard_normal(dimensions)  # near ties
        space.put(Binding(None, f"f{i}", 1, "s", "x", i), unit_row(vector.astype(np.float32)), i, True)
    rows = np.arange(count)
    for _ in range(30):
        query = cosine.prepare_query(space, rng.standard_normal(dimensions))
        exact, fast = cosine.exact_cosines(query, rows), fact_cosines(query, rows, 5)
        top = lambda values: np.lexsort((np.arange(count), -values))[:5].tolist()  # noqa: E731
        assert (fast.min(), fast.max(), top(fast)) == (exact.min(), exact.max(), top(exact))
        assert fast[top(fast)].tolist() == exact[top(exact)].tolist()


def test_top_facts_sorts_only_the_cut_and_keeps_every_tie_there():
    from server.families.hipporag2.linking import top_facts

    rng = np.random.default_rng(3)
    for size in (1, 4, 5, 6, 50, 2000):
        cosines = np.round(rng.random(size), 2)  # many exact ties, also at the cut
        whole = np.lexsort((np.arange(size), -cosines))[:5].tolist()
        assert top_facts(cosines, 5) == whole
