"""Retrieval methods in process: each checked against an independent implementation in this file.

The sample corpus is the shared MuSiQue sample (skipped when ../shared is absent), with
deterministic random 384-d vectors and the real `document_title_graph_v1` relations; the small
corpora are hand-built so every branch of the graph method is exercised on purpose.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ground.canonical import canonical, digest
from protocols.routes import PROFILES
from server.errors import ApiError
from server.families.graph.typed_paths import Anchor, Limits, affinities, expand, strongest_paths
from server.retrieval.cosine import exact_cosines, prepare_query
from server.retrieval.fusion import fuse
from server.retrieval.indexes import Indexes, ScopeIndex
from server.retrieval.tokenize import bm25_tokens
from server.routes import CATALOG, search
from tests.conftest import SAMPLE_DIR, require_shared
from tests.protocol_files import declared_protocol_files, frozen_families

SPACE = "space-" + "a" * 64
DIM = 384


def _protocols() -> dict[str, dict]:
    """Every frozen protocol the registry declares (suites hold no profiles)."""
    paths = declared_protocol_files()
    return {p.name: json.loads(p.read_text()) for p in paths}


# ----------------------------------------------------------------------------- helpers


def unit_vector(rng: np.random.Generator, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal(dim)
    return (v / np.linalg.norm(v)).astype(np.float32)


def relation(rid: str, kind: str, source: str, target: str, source_rev: int = 1, target_rev: int = 1) -> dict:
    return {"id": rid, "revision": 1, "kind": kind, "source": {"id": source, "revision": source_rev},
            "target": {"id": target, "revision": target_rev},
            "provenance": {"origin": "tool_observation", "method": "test", "method_revision": "t",
                           "evidence_ref": "t", "model": None}}


def page_bytes(index: ScopeIndex, route: str, body: dict) -> bytes:
    return canonical(search(index, route, body))


def vec_list(v: np.ndarray) -> list[float]:
    return [float(x) for x in v]


@pytest.fixture(scope="module")
def sample():
    """(index, documents, queries, doc vectors, query vectors, relations) over the shared sample."""
    require_shared(SAMPLE_DIR)
    from builders.title_graph import build_relations

    pairs: dict[tuple[str, str], None] = {}
    questions = []
    for name in ("musique_sample_dev.jsonl", "musique_sample_train.jsonl"):
        for line in (SAMPLE_DIR / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            questions.append(row["question"])
            for p in row["paragraphs"]:
                pairs.setdefault((p["title"], p["paragraph_text"]), None)
    projection = sorted(({"id": "musique-" + digest({"title": t, "paragraph_text": p}), "title": t,
                          "paragraph_text": p} for t, p in pairs), key=lambda d: d["id"])
    rng = np.random.default_rng(20260921)
    docs = {d["id"]: d["title"] + "\n" + d["paragraph_text"] for d in projection}
    doc_vectors = {rid: unit_vector(rng) for rid in docs}
    query_vectors = [unit_vector(rng) for _ in questions]
    relations = [relation(r["id"], r["kind"], r["source"], r["target"])
                 for r in build_relations(projection, "sample")["relations"]]
    index = Indexes().scope("lab")
    for rid, text in docs.items():
        index.put_memory(rid, 1, text, {"content": text, "metadata": {}})
        index.put_binding(rid, 1, SPACE, doc_vectors[rid], binding_id="emb-" + rid[-32:])
    for r in relations:
        index.put_relation(r)
    return index, docs, questions, doc_vectors, query_vectors, relations


# ----------------------------------------------------------------------------- catalog and tokens


def test_catalog_equals_protocol_ranking_profiles():
    protocols = _protocols()
    assert "graph-multihop-protocol-v1.json" in protocols
    for protocol in protocols.values():  # every frozen profile of every version is served unchanged
        for name, frozen in protocol["ranking_profiles"].items():
            assert canonical(CATALOG[name]) == canonical(frozen), name  # floats stay floats, ints ints
    union = {name: profile for protocol in protocols.values() for name, profile in protocol["ranking_profiles"].items()}
    # and a family a frozen protocol ranks with serves nothing no frozen protocol names (a family
    # being added serves its profiles before a protocol freezes them: docs/extend-a-method.md)
    measured = {name: profile for name, profile in CATALOG.items() if profile["family"] in frozen_families()}
    assert digest(measured) == digest(union)


def test_tokens_are_lowercased_isalnum_runs():
    assert bm25_tokens("Hello, WORLD_42 x²!") == ["hello", "world", "42", "x²"]
    assert bm25_tokens("Ⅻ ½ Ünïcode") == ["ⅻ", "½", "ünïcode"]
    assert bm25_tokens("cafe\u0301") == ["cafe"]  # a combining mark is not a letter: it splits
    text = "".join(chr(c) for c in range(0x20, 0x3000))
    expected, run = [], ""
    for ch in text + " ":
        if ch.isalnum():
            run += ch
        elif run:
            expected.append(run.lower())
            run = ""
    assert bm25_tokens(text) == expected


# ----------------------------------------------------------------------------- BM25


def reference_bm25(docs: dict[str, str], query: str, k1: float = 1.2, b: float = 0.75) -> dict[str, float]:
    """Straightforward BM25 over every document, written independently of server/retrieval/bm25.py."""
    tokenized = {rid: [t.lower() for t in _isalnum_runs(text)] for rid, text in docs.items()}
    n = len(docs)
    avgdl = sum(len(t) for t in tokenized.values()) / n
    terms = []
    for t in _isalnum_runs(query):
        if t.lower() not in terms:
            terms.append(t.lower())
    df = {t: sum(1 for toks in tokenized.values() if t in toks) for t in terms}
    scores = {}
    for rid, toks in tokenized.items():
        counts = Counter(toks)
        matched = [t for t in terms if counts[t]]
        if not matched:
            continue
        scores[rid] = sum(
            math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            * counts[t] * (k1 + 1) / (counts[t] + k1 * (1 - b + b * len(toks) / avgdl))
            for t in matched)
    return scores


def _isalnum_runs(text: str) -> list[str]:
    runs, run = [], ""
    for ch in text + " ":
        if ch.isalnum():
            run += ch
        elif run:
            runs.append(run)
            run = ""
    return runs


def assert_ranking_matches(hits: list[dict], reference: dict[str, float], limit: int, tol: float) -> None:
    expected = sorted(reference.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    assert len(hits) == len(expected)
    for hit, (rid, score) in zip(hits, expected):
        assert abs(hit["score"] - score) <= tol
        assert abs(reference[hit["id"]] - hit["score"]) <= tol
        if hit["id"] != rid:  # only a near tie may swap between two float implementations
            assert abs(reference[hit["id"]] - score) <= 2 * tol
    for a, b in zip(hits, hits[1:]):
        assert (a["score"] > b["score"]) or (a["score"] == b["score"] and a["id"] < b["id"])


@pytest.mark.heavy  # every sample query
def test_bm25_equals_reference_on_every_sample_query(sample):
    index, docs, questions, *_ = sample
    tokenized = {rid: Counter(t.lower() for t in _isalnum_runs(text)) for rid, text in docs.items()}
    lengths = {rid: sum(c.values()) for rid, c in tokenized.items()}
    n, avgdl = len(docs), sum(lengths.values()) / len(docs)
    holders: dict[str, set[str]] = {}
    for rid, counts in tokenized.items():
        for t in counts:
            holders.setdefault(t, set()).add(rid)
    for question in questions:
        terms = list(dict.fromkeys(t.lower() for t in _isalnum_runs(question)))
        df = {t: len(holders.get(t, ())) for t in terms}
        reference = {}
        for rid in set().union(*(holders.get(t, set()) for t in terms)):
            counts = tokenized[rid]
            if any(counts[t] for t in terms):
                reference[rid] = sum(
                    math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * counts[t] * 2.2
                    / (counts[t] + 1.2 * (1 - 0.75 + 0.75 * lengths[rid] / avgdl)) for t in terms if counts[t])
        page = search(index, "lexical", {"query": question, "limit": 100})
        assert_ranking_matches(page["hits"], reference, 100, 1e-9)
        assert page["work"]["records_examined"] == len(reference)


def test_bm25_small_corpus_ties_by_id_and_unmatched_excluded():
    index = Indexes().scope("s")
    docs = {"mem-c": "alpha beta", "mem-a": "beta alpha", "mem-b": "gamma", "mem-d": "alpha alpha beta"}
    for rid, text in docs.items():
        index.put_memory(rid, 1, text)
    hits = search(index, "lexical", {"query": "Alpha ALPHA", "limit": 10})["hits"]
    assert [h["id"] for h in hits] == ["mem-d", "mem-a", "mem-c"]  # gamma never matches
    assert hits[1]["score"] == hits[2]["score"]
    assert_ranking_matches(hits, reference_bm25(docs, "alpha"), 10, 1e-12)
    assert search(index, "lexical", {"query": "zeta", "limit": 10})["hits"] == []


# ----------------------------------------------------------------------------- cosine


def test_cosine_equals_numpy_float64_on_stored_vectors(sample):
    index, docs, _, doc_vectors, query_vectors, _ = sample
    ids = sorted(doc_vectors)
    matrix = np.stack([doc_vectors[i] for i in ids]).astype(np.float64)
    norms = np.linalg.norm(matrix, axis=1)
    for q in query_vectors[:40]:
        q64 = q.astype(np.float64)
        reference = dict(zip(ids, (matrix @ q64) / (norms * np.linalg.norm(q64))))
        page = search(index, "semantic", {"query_vector": vec_list(q), "space_id": SPACE, "limit": 100})
        assert_ranking_matches(page["hits"], reference, 100, 1e-6)
        assert page["work"]["records_examined"] == len(ids)
        for hit in page["hits"]:
            assert hit["embedding_receipt"]["record_id"] == hit["id"]


def test_cosine_ties_by_id_min_score_and_clamp():
    index = Indexes().scope("s")
    rng = np.random.default_rng(1)
    v = unit_vector(rng, 8)
    for rid in ("mem-z", "mem-b", "mem-m"):
        index.put_memory(rid, 1, rid)
        index.put_binding(rid, 1, SPACE, v * 3)
    index.put_memory("mem-neg", 1, "neg")
    index.put_binding("mem-neg", 1, SPACE, -v)
    page = search(index, "semantic", {"query_vector": vec_list(v), "space_id": SPACE, "limit": 10})
    assert [h["id"] for h in page["hits"]] == ["mem-b", "mem-m", "mem-z", "mem-neg"]
    assert all(-1.0 <= h["score"] <= 1.0 for h in page["hits"])
    assert page["hits"][-1]["score"] == -1.0
    page = search(index, "semantic", {"query_vector": vec_list(v), "space_id": SPACE, "limit": 10, "min_score": 0.5})
    assert [h["id"] for h in page["hits"]] == ["mem-b", "mem-m", "mem-z"]


def test_exact_cosine_of_a_row_does_not_depend_on_the_batch(sample):
    index, *_, query_vectors, _ = sample
    space = index.spaces[SPACE]
    query = prepare_query(space, query_vectors[0])
    rows = np.arange(space.count)
    together = exact_cosines(query, rows)
    for r in range(0, space.count, 97):
        assert exact_cosines(query, np.array([r]))[0] == together[r]
        assert exact_cosines(query, rows[r:r + 5])[0] == together[r]


def test_prefilter_keeps_every_hit_on_a_large_random_matrix():
    index = Indexes().scope("s")
    rng = np.random.default_rng(7)
    base = unit_vector(rng, 64)
    for i in range(3000):  # many near-duplicates make float32 ties and near ties
        index.put_memory(f"mem-{i:05d}", 1, "x")
        index.put_binding(f"mem-{i:05d}", 1, SPACE, (base + 1e-4 * rng.standard_normal(64)).astype(np.float32))
    q = base + 1e-4 * rng.standard_normal(64)
    page = search(index, "semantic", {"query_vector": vec_list(q.astype(np.float32)), "space_id": SPACE, "limit": 50})
    space = index.spaces[SPACE]
    exact_all = exact_cosines(prepare_query(space, q.astype(np.float32)), np.arange(space.count))
    expected = sorted(zip(exact_all.tolist(), index.slot_ids), key=lambda sr: (-sr[0], sr[1]))[:50]
    assert [(h["score"], h["id"]) for h in page["hits"]] == expected


# ----------------------------------------------------------------------------- fusion


def test_rrf_k2_tie_example_orders_by_id():
    # docs/design.md §7: lexical rank 2 + semantic rank 18 and lexical rank 1 + semantic rank 43 are both 1/10
    filler = [f"mem-f{i:02d}" for i in range(60)]
    lexical = ["mem-b", "mem-z"]  # mem-b lexical 1, mem-z lexical 2
    semantic = filler[:17] + ["mem-z"] + filler[17:41] + ["mem-b"]  # mem-z semantic 18, mem-b 43
    assert semantic.index("mem-z") == 17 and semantic.index("mem-b") == 42
    assert 0.25 / 4 + 0.75 / 20 != 0.25 / 3 + 0.75 / 45  # floats disagree; exact values do not
    fused = fuse("weighted_reciprocal_rank", PROFILES["weighted_rrf_v2"], {"lexical": (lexical, [2.0, 1.0]),
                                               "semantic": (semantic, [1.0 - i / 100 for i in range(len(semantic))])})
    by_id = {f.id: f for f in fused}
    assert Fraction(*by_id["mem-b"].score) == Fraction(1, 10) == Fraction(*by_id["mem-z"].score)
    order = [f.id for f in fused]
    assert order.index("mem-b") + 1 == order.index("mem-z")


def test_hybrid_contributions_equal_w_over_k_plus_rank(sample):
    index, _, questions, _, query_vectors, _ = sample
    for profile in ("weighted_rrf_v1", "weighted_rrf_v2"):
        spec = PROFILES[profile]
        for question, q in list(zip(questions, query_vectors))[:30]:
            body = {"profile": profile, "query": question, "query_vector": vec_list(q), "space_id": SPACE, "limit": 100}
            page = search(index, "hybrid", body)
            lexical = [h["id"] for h in search(index, "lexical", {"query": question, "limit": 100})["hits"]]
            semantic = [h["id"] for h in search(index, "semantic", {"query_vector": vec_list(q), "space_id": SPACE,
                                                                     "limit": 100})["hits"]]
            previous = None
            for hit in page["hits"]:
                total = Fraction(0)
                for channel, ranking in (("lexical", lexical), ("semantic", semantic)):
                    part = hit["channels"][channel]
                    expected_rank = ranking.index(hit["id"]) + 1 if hit["id"] in ranking else None
                    assert part["rank"] == expected_rank
                    w = Fraction(str(spec["channels"][channel]["weight"]))
                    value = Fraction(0) if expected_rank is None else w / (spec["k"] + expected_rank)
                    assert Fraction(part["contribution_exact"]) == value
                    assert part["contribution"] == float(value)
                    total += value
                assert Fraction(hit["score_exact"]) == total and hit["score"] == float(total)
                if previous is not None:
                    assert previous[0] > total or (previous[0] == total and previous[1] < hit["id"])
                previous = (total, hit["id"])


# ----------------------------------------------------------------------------- graph: brute force


def brute_force_paths(index: ScopeIndex, anchors: list[tuple[str, int]], weights: dict, depth: int,
                      cosines: dict[str, float | None] | None) -> dict[str, tuple]:
    """Strongest simple path per node by enumerating every simple path (independent of graph.py)."""
    edges = []
    for r in index.relations.values():
        s, t = r["source"], r["target"]
        ok = all(index.records.get(e["id"]) and index.records[e["id"]].revision == e["revision"] for e in (s, t))
        if ok and weights[r["kind"]] > 0:
            edges.append(r)

    def affinity(node):
        if cosines is None:
            return Fraction(1)
        c = cosines.get(node)
        return Fraction(1, 2) + Fraction(1, 2) * Fraction(max(c, 0.0) if c is not None else 0.0)

    best: dict[str, tuple] = {}

    def consider(node, key):
        if node not in best or key < best[node]:
            best[node] = key

    def walk(anchor, rank, node, strength, visited, rels):
        consider(node, (-strength, len(rels), rank, tuple(rels), anchor))
        if len(rels) == depth:
            return
        for r in edges:
            for here, there in ((r["source"]["id"], r["target"]["id"]), (r["target"]["id"], r["source"]["id"])):
                if here == node and there not in visited:
                    factor = Fraction(1, 2) * Fraction(str(weights[r["kind"]])) * affinity(there)
                    walk(anchor, rank, there, strength * factor, visited | {there}, rels + [r["id"]])

    for anchor, rank in anchors:
        walk(anchor, rank, anchor, Fraction(1, 2 + rank), {anchor}, [])
    return best


def random_graph_index(seed: int, nodes: int, with_vectors: bool) -> tuple[ScopeIndex, np.ndarray | None]:
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    index = Indexes().scope("g")
    ids = [f"mem-{i:02d}" for i in range(nodes)]
    for rid in ids:
        index.put_memory(rid, 1, rid)
        if with_vectors and rnd.random() < 0.85:  # some nodes have no embedding
            index.put_binding(rid, 1, SPACE, unit_vector(rng, 16))
    kinds = list(PROFILES["typed_path_balanced_v1"]["kind_weights"])
    for e in range(rnd.randint(nodes, 3 * nodes)):
        a, b = rnd.sample(ids, 2)
        stale = rnd.random() < 0.1
        index.put_relation(relation(f"rel-{e:03d}", rnd.choice(kinds), a, b, source_rev=2 if stale else 1))
    return index, (unit_vector(rng, 16) if with_vectors else None)


@pytest.mark.parametrize("seed", range(60))
def test_graph_strengths_equal_brute_force_on_small_graphs(seed):
    index, q = random_graph_index(seed, nodes=random.Random(seed).randint(5, 11), with_vectors=seed % 2 == 0)
    profile = PROFILES["typed_path_entity_v1" if seed % 3 == 0 else "typed_path_balanced_v1"]
    anchors = [Anchor(f"mem-{i:02d}", r) for r, i in enumerate(random.Random(seed).sample(range(5), 4), start=1)]
    depth = seed % 4
    expansion = expand(index, anchors, profile["kind_weights"], Limits(depth, 1024, 4096, 16384))
    assert expansion.stop_reasons in ([], ["depth_limit"])
    query = None if q is None else prepare_query(index.spaces[SPACE], q)
    aff = affinities(index, list(expansion.depth_of), query, profile)
    found = strongest_paths(anchors, expansion, aff, profile, depth).paths
    cosines = None
    if q is not None:  # independent float64 cosines; equal to the server's within 1e-12
        cosines = {}
        for rid in index.records:
            b = index.live_binding(SPACE, rid)
            cosines[rid] = None if b is None else float(
                np.dot(index.spaces[SPACE].rows[b.row].astype(np.float64), q.astype(np.float64) / np.linalg.norm(q.astype(np.float64))))
            if cosines[rid] is not None and rid in aff:
                assert abs(cosines[rid] - aff[rid].cosine) < 1e-12
                cosines[rid] = aff[rid].cosine  # compare paths on identical inputs
    expected = brute_force_paths(index, [(a.id, a.rank) for a in anchors], profile["kind_weights"], depth, cosines)
    assert set(found) == set(expected)
    for node, path in found.items():
        neg_strength, hops, rank, rels, anchor = expected[node]
        assert Fraction(*path.strength) == -neg_strength
        assert (path.hops, path.anchor.rank, path.relation_ids(), path.anchor.id) == (hops, rank, rels, anchor)
        nodes = [path.anchor.id] + [s.target for s in path.steps]
        assert len(set(nodes)) == len(nodes)  # simple


# ----------------------------------------------------------------------------- graph: hand-built


def hand_index(relations: list[dict], bindings: dict[str, np.ndarray] | None = None) -> ScopeIndex:
    """Documents a..h; the query "alpha" ranks a (4 alphas), b (3), c (2), d (1) as anchors 1-4."""
    index = Indexes().scope("h")
    texts = {"a": "alpha alpha alpha alpha", "b": "alpha alpha alpha x", "c": "alpha alpha x x",
             "d": "alpha x x x", "e": "e", "f": "f", "g": "g", "h": "h"}
    for name, text in texts.items():
        index.put_memory(f"mem-{name}", 1, text)
    for name, vector in (bindings or {}).items():
        index.put_binding(f"mem-{name}", 1, SPACE, vector)
    for r in relations:
        index.put_relation(r)
    return index


def graph_page(index: ScopeIndex, profile="typed_path_balanced_v1", limit=20, **expansion) -> dict:
    return search(index, "graph", {"profile": profile, "seed": "lexical", "query": "alpha", "limit": limit,
                                   "expansion": expansion})


def by_id(page: dict) -> dict:
    return {h["id"]: h for h in page["hits"]}


def test_both_kinds_both_directions_and_relations_used():
    rels = [relation("rel-1", "same_entity", "mem-a", "mem-e"), relation("rel-2", "semantic_related", "mem-f", "mem-a"),
            relation("rel-3", "semantic_related", "mem-e", "mem-g"), relation("rel-9", "same_entity", "mem-h", "mem-h2")]
    page = graph_page(hand_index(rels))
    hits = by_id(page)
    assert hits["mem-e"]["proof"]["steps"][0]["direction"] == "forward"
    assert hits["mem-f"]["proof"]["steps"][0]["direction"] == "backward"
    assert [s["relation_id"] for s in hits["mem-g"]["proof"]["steps"]] == ["rel-1", "rel-3"]
    assert hits["mem-e"]["proof"]["strength"] == pytest.approx(1 / 3 * 0.5)
    assert [r["id"] for r in page["relations"]] == ["rel-1", "rel-2", "rel-3"]
    assert [a["id"] for a in page["anchors"]] == ["mem-a", "mem-b", "mem-c", "mem-d"]
    entity = by_id(graph_page(hand_index(rels), profile="typed_path_entity_v1"))
    assert entity["mem-f"]["proof"]["strength"] == pytest.approx(1 / 3 * 0.25)  # semantic_related weighs 0.5


def test_same_title_clique_and_cycle_keep_simple_strongest_paths():
    clique = ["e", "f", "g"]
    rels = [relation(f"rel-c{i}{j}", "same_entity", f"mem-{x}", f"mem-{y}")
            for i, x in enumerate(clique) for j, y in enumerate(clique) if i < j]
    rels += [relation("rel-ae", "same_entity", "mem-a", "mem-e"), relation("rel-cycle", "semantic_related", "mem-g", "mem-a")]
    page = graph_page(hand_index(rels), max_depth=3)
    hits = by_id(page)
    assert hits["mem-g"]["proof"]["hops"] == 1 and hits["mem-g"]["proof"]["steps"][0]["relation_id"] == "rel-cycle"
    assert hits["mem-f"]["proof"]["hops"] == 2
    # f is reached from a via e (rel-ae, rel-cef) or via g (rel-cycle, rel-cfg): equal strength, relation ids decide
    assert [s["relation_id"] for s in hits["mem-f"]["proof"]["steps"]] == ["rel-ae", "rel-c01"]
    for hit in page["hits"]:
        if hit["proof"]:
            nodes = [hit["proof"]["anchor"]["id"]] + [s["to"]["id"] for s in hit["proof"]["steps"]]
            assert len(nodes) == len(set(nodes))


def test_node_reachable_from_two_anchors_keeps_the_stronger():
    rels = [relation("rel-1", "same_entity", "mem-d", "mem-e"), relation("rel-2", "same_entity", "mem-b", "mem-e")]
    hits = by_id(graph_page(hand_index(rels)))
    assert hits["mem-e"]["proof"]["anchor"] == {"id": "mem-b", "revision": 1, "rank": 2}
    assert Fraction(hits["mem-e"]["proof"]["strength_exact"]) == Fraction(1, 4) / 2


def test_zero_weight_kind_is_never_followed_nor_scanned():
    page = graph_page(hand_index([relation("rel-1", "contradicts", "mem-a", "mem-e")]))
    assert "mem-e" not in by_id(page)
    assert page["work"]["adjacency_examined"] == 0 and page["stop_reasons"] == []


def test_stale_relation_is_ignored():
    index = hand_index([relation("rel-1", "same_entity", "mem-a", "mem-e")])
    assert "mem-e" in by_id(graph_page(index))
    index.put_memory("mem-e", 2, "e updated")
    page = graph_page(index)
    assert "mem-e" not in by_id(page)
    assert page["work"]["stale_relations_skipped"] == 1


def test_missing_embedding_gives_affinity_half_and_is_reported():
    rng = np.random.default_rng(3)
    q = unit_vector(rng, 8)
    other = unit_vector(rng, 8)
    # a-d point along the query (semantic ranks 1-4, so they stay the anchors); f leans away; e has none
    bindings = {n: q for n in "abcd"} | {"f": (q + other).astype(np.float32)}
    rels = [relation("rel-1", "same_entity", "mem-a", "mem-e"), relation("rel-2", "same_entity", "mem-a", "mem-f")]
    index = hand_index(rels, bindings)
    page = search(index, "graph", {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": "alpha",
                                   "query_vector": vec_list(q), "space_id": SPACE, "limit": 20})
    hits = by_id(page)
    step = hits["mem-e"]["proof"]["steps"][0]
    assert step["affinity"] == {"cosine": None, "value": 0.5, "embedding_receipt": None}
    f_step = hits["mem-f"]["proof"]["steps"][0]
    assert f_step["affinity"]["value"] == 0.5 + 0.5 * max(f_step["affinity"]["cosine"], 0.0)
    assert f_step["affinity"]["embedding_receipt"]["record_id"] == "mem-f"
    assert page["coverage"]["embeddings"] is False and page["coverage"]["complete"] is False
    assert page["work"]["affinity_missing"] >= 1


def star(count: int) -> list[dict]:
    return [relation(f"rel-s{i:02d}", "same_entity", "mem-a", f"mem-n{i:02d}") for i in range(count)]


def star_index(count: int) -> ScopeIndex:
    index = hand_index([])
    for i in range(count):
        index.put_memory(f"mem-n{i:02d}", 1, "n")
    for r in star(count):
        index.put_relation(r)
    return index


@pytest.mark.parametrize("budget, reason, admitted_nodes", [
    ({"max_scan": 5}, "scan_limit", 4 + 5),
    ({"max_edges": 3}, "edge_limit", 4 + 3),
    ({"max_nodes": 6}, "node_limit", 6),
])
def test_each_budget_cuts_and_is_reported(budget, reason, admitted_nodes):
    page = graph_page(star_index(10), **budget)
    assert page["stop_reasons"] == [reason]
    assert page["coverage"]["graph"] is False and page["coverage"]["complete"] is False
    assert page["work"]["nodes_admitted"] == admitted_nodes
    full = graph_page(star_index(10))
    assert full["stop_reasons"] == [] and full["coverage"]["graph"] is True
    assert full["work"]["nodes_admitted"] == 14 and full["work"]["adjacency_examined"] == 20


def test_depth_limit_only_when_an_edge_was_left_unfollowed():
    index = star_index(3)
    assert graph_page(index, max_depth=1)["stop_reasons"] == []  # the leaves only lead back to a
    index.put_relation(relation("rel-deep", "semantic_related", "mem-n00", "mem-e"))
    shallow = graph_page(index, max_depth=1)
    assert shallow["stop_reasons"] == ["depth_limit"] and shallow["coverage"]["graph"] is True
    assert "mem-e" not in by_id(shallow)
    deep = graph_page(index, max_depth=2)
    assert deep["stop_reasons"] == [] and by_id(deep)["mem-e"]["proof"]["hops"] == 2


def test_depth_limit_reported_and_depth_zero_equals_base():
    index = star_index(3)
    page = graph_page(index, max_depth=0)
    assert page["stop_reasons"] == ["depth_limit"]
    base = search(index, "lexical", {"query": "alpha", "limit": 20})
    assert [h["id"] for h in page["hits"]] == [h["id"] for h in base["hits"]]


@pytest.mark.heavy  # every sample query
def test_depth_zero_equals_base_order_on_every_sample_query(sample):
    index, _, questions, _, query_vectors, _ = sample
    for question, q in zip(questions, query_vectors):
        common = {"query": question, "limit": 100}
        hybrid = search(index, "hybrid", {**common, "profile": "weighted_rrf_v2", "query_vector": vec_list(q),
                                          "space_id": SPACE})
        lexical = search(index, "lexical", common)
        for seed, base in (("hybrid", hybrid), ("lexical", lexical)):
            body = {**common, "profile": "typed_path_balanced_v1", "seed": seed,
                    "expansion": {"max_depth": 0}}
            if seed == "hybrid":
                body.update(query_vector=vec_list(q), space_id=SPACE)
            page = search(index, "graph", body)
            assert [h["id"] for h in page["hits"]] == [h["id"] for h in base["hits"]]
            assert [a["id"] for a in page["anchors"]] == [h["id"] for h in base["hits"][:4]]


def test_graph_on_sample_proofs_recompute(sample):
    index, _, questions, _, query_vectors, _ = sample
    for question, q in list(zip(questions, query_vectors))[:40]:
        page = search(index, "graph", {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": question,
                                       "query_vector": vec_list(q), "space_id": SPACE, "limit": 10})
        used = set()
        for hit in page["hits"]:
            proof = hit["proof"]
            if proof is None:
                continue
            strength = Fraction(1, 2 + proof["anchor"]["rank"])
            for step in proof["steps"]:
                used.add(step["relation_id"])
                cos = step["affinity"]["cosine"]
                affinity = Fraction(1, 2) + Fraction(1, 2) * Fraction(max(cos, 0.0) if cos is not None else 0.0)
                strength *= Fraction(1, 2) * Fraction(str(step["weight"])) * affinity
            assert Fraction(proof["strength_exact"]) == strength
            assert proof["strength"] == float(strength)
            g, b = hit["channels"]["graph"], hit["channels"]["base"]
            total = Fraction(b["contribution_exact"]) + Fraction(g["contribution_exact"])
            assert Fraction(hit["score_exact"]) == total
        assert {r["id"] for r in page["relations"]} == used


# ----------------------------------------------------------------------------- determinism and rebuild


def bodies(questions, query_vectors, count=25):
    for question, q in list(zip(questions, query_vectors))[:count]:
        v = vec_list(q)
        yield "lexical", {"query": question, "limit": 10}
        yield "semantic", {"query_vector": v, "space_id": SPACE, "limit": 10}
        yield "hybrid", {"profile": "weighted_rrf_v1", "query": question, "query_vector": v, "space_id": SPACE, "limit": 10}
        yield "graph", {"profile": "typed_path_entity_v1", "seed": "hybrid", "query": question, "query_vector": v,
                        "space_id": SPACE, "limit": 10}
        yield "graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": question, "limit": 10}


def test_repeated_calls_give_identical_bytes(sample):
    index, _, questions, _, query_vectors, _ = sample
    for route, body in bodies(questions, query_vectors, 10):
        assert page_bytes(index, route, body) == page_bytes(index, route, body)


@pytest.mark.heavy  # rebuilds the sample's index
def test_rebuilt_index_answers_like_the_incrementally_updated_one(sample):
    _, docs, questions, doc_vectors, query_vectors, relations = sample
    ids = list(docs)
    rng = np.random.default_rng(11)
    live = Indexes().scope("lab")
    # live history: documents arrive in reverse, some are updated after queries, embeddings re-attached
    for rid in reversed(ids):
        live.put_memory(rid, 1, docs[rid], {"content": docs[rid], "metadata": {}})
        live.put_binding(rid, 1, SPACE, doc_vectors[rid], binding_id="emb-" + rid[-32:])
    for r in relations[: len(relations) // 2]:
        live.put_relation(r)
    search(live, "lexical", {"query": questions[0], "limit": 10})
    search(live, "semantic", {"query_vector": vec_list(query_vectors[0]), "space_id": SPACE, "limit": 10})
    updated = ids[::50]
    final_text = {rid: docs[rid] + " revised" if rid in updated else docs[rid] for rid in ids}
    final_vec = {rid: unit_vector(rng) if rid in updated else doc_vectors[rid] for rid in ids}
    for rid in updated:
        live.put_memory(rid, 2, final_text[rid], {"content": final_text[rid], "metadata": {}})
    for rid in updated[::2]:  # the other half keep a stale binding: excluded from search
        live.put_binding(rid, 2, SPACE, final_vec[rid], binding_id="emb2-" + rid[-32:])
    for r in relations[len(relations) // 2:]:
        live.put_relation(r)

    rebuilt = Indexes().scope("lab")  # from "disk": id order, final state only
    for rid in sorted(ids):
        rev = 2 if rid in updated else 1
        rebuilt.put_memory(rid, rev, final_text[rid], {"content": final_text[rid], "metadata": {}})
    for rid in sorted(ids):
        if rid in updated[::2]:
            rebuilt.put_binding(rid, 2, SPACE, final_vec[rid], binding_id="emb2-" + rid[-32:])
        elif rid not in updated:
            rebuilt.put_binding(rid, 1, SPACE, doc_vectors[rid], binding_id="emb-" + rid[-32:])
    for r in sorted(relations, key=lambda r: r["id"]):
        rebuilt.put_relation(r)
    for route, body in bodies(questions, query_vectors, 25):
        assert page_bytes(live, route, body) == page_bytes(rebuilt, route, body)


# ----------------------------------------------------------------------------- validation


_RESCUE = {"profile": "graph_rescue_v1", "query": "x", "query_vector": [1.0] * 8, "space_id": SPACE, "limit": 5,
           "graph_mode": "force"}


@pytest.mark.parametrize("route, body, code", [
    ("lexical", {"query": "x", "limit": 0}, "out_of_range"),
    ("lexical", {"query": "x", "limit": 101}, "out_of_range"),
    ("lexical", {"query": "x", "limit": True}, "wrong_type"),
    ("lexical", {"query": "x" * 4097, "limit": 5}, "out_of_range"),
    ("lexical", {"query": "x", "limit": 5, "extra": 1}, "unknown_field"),
    ("lexical", {"limit": 5}, "missing_field"),
    ("lexical", ["not", "an", "object"], "wrong_type"),
    ("semantic", {"query_vector": [1.0] * 7, "space_id": SPACE, "limit": 5}, "dimension_mismatch"),
    ("semantic", {"query_vector": [float("nan")] * 8, "space_id": SPACE, "limit": 5}, "invalid_vector"),
    ("semantic", {"query_vector": [1e39] * 8, "space_id": SPACE, "limit": 5}, "invalid_vector"),
    ("semantic", {"query_vector": [0.0] * 8, "space_id": SPACE, "limit": 5}, "invalid_vector"),
    ("semantic", {"query_vector": [10 ** 400] + [1] * 7, "space_id": SPACE, "limit": 5}, "invalid_vector"),
    ("semantic", {"query_vector": [True] * 8, "space_id": SPACE, "limit": 5}, "wrong_type"),
    # a string is the base64 form (docs/api.md); this one is not base64
    ("semantic", {"query_vector": "1,1,1,1,1,1,1,1", "space_id": SPACE, "limit": 5}, "invalid_base64"),
    ("semantic", {"query_vector": [1.0] * 8, "space_id": SPACE, "limit": 5, "min_score": 10 ** 400}, "out_of_range"),
    ("semantic", {"query_vector": [1.0] * 8, "space_id": ["x"], "limit": 5}, "wrong_type"),
    ("hybrid", {"profile": ["weighted_rrf_v2"], "query": "x", "query_vector": [1.0] * 8, "space_id": SPACE,
                "limit": 5}, "unknown_profile"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": [1]}, "wrong_type"),
    ("lexical", {"query": 7, "limit": 5}, "wrong_type"),
    ("semantic", {"query_vector": [1.0] * 8, "space_id": "space-nope", "limit": 5}, "unknown_space"),
    ("semantic", {"query_vector": [1.0] * 8, "space_id": SPACE, "limit": 5, "min_score": 1.5}, "out_of_range"),
    ("hybrid", {"profile": "bm25_v1", "query": "x", "query_vector": [1.0] * 8, "space_id": SPACE, "limit": 5},
     "unknown_profile"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"max_depth": 4}}, "out_of_range"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"max_nodes": 1025}}, "out_of_range"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"max_edges": 4097}}, "out_of_range"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"max_scan": 16385}}, "out_of_range"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "lexical", "query": "x", "limit": 5,
               "expansion": {"breadth": 1}}, "unknown_field"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": "hybrid", "query": "x", "limit": 5}, "missing_field"),
    ("graph", {"profile": "typed_path_balanced_v1", "seed": ["x"], "query": "x", "limit": 5}, "unknown_profile"),
    # rescue: an unhashable profile or mode must be a 422, never a TypeError (a 500 over HTTP)
    ("rescue", {**_RESCUE, "profile": ["graph_rescue_v1"]}, "unknown_profile"),
    ("rescue", {**_RESCUE, "profile": {"graph_rescue_v1": 1}}, "unknown_profile"),
    ("rescue", {**_RESCUE, "graph_mode": ["force"]}, "out_of_range"),
    ("rescue", {**_RESCUE, "query": 7}, "wrong_type"),
    ("rescue", {**_RESCUE, "query": ""}, "out_of_range"),
    ("rescue", {**_RESCUE, "limit": 151}, "out_of_range"),
    ("rescue", {**_RESCUE, "limit": 2.0}, "wrong_type"),
    ("rescue", {**_RESCUE, "space_id": ["x"]}, "wrong_type"),  # as on every route
    ("rescue", {**_RESCUE, "query_vector": [0.0] * 8}, "invalid_vector"),
    ("rescue", {**_RESCUE, "query_vector": [1.0] * 9}, "dimension_mismatch"),
    ("rescue", {k: v for k, v in _RESCUE.items() if k != "graph_mode"}, "missing_field"),
])
def test_bad_bodies_are_422(route, body, code):
    index = Indexes().scope("v")
    index.put_memory("mem-a", 1, "x")
    index.put_binding("mem-a", 1, SPACE, np.ones(8, np.float32))
    with pytest.raises(ApiError) as caught:
        search(index, route, body)
    assert (caught.value.status, caught.value.code) == (422, code)


def test_unknown_route_is_404():
    with pytest.raises(ApiError) as caught:
        search(Indexes().scope("v"), "fuzzy", {})
    assert caught.value.status == 404


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10 ** 500, max_value=10 ** 500)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=10) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30)
_KEYS = ["query", "limit", "query_vector", "space_id", "min_score", "profile", "seed", "expansion", "graph_mode",
         "extra"]


@settings(max_examples=300, deadline=None)
@given(route=st.sampled_from(["lexical", "semantic", "hybrid", "graph", "rescue"]),
       body=st.dictionaries(st.sampled_from(_KEYS), _JSON | st.sampled_from(
           ["weighted_rrf_v2", "typed_path_balanced_v1", "graph_rescue_v1", "hybrid", "lexical", "force", SPACE, 5,
            [0.5] * 8]), max_size=10))
@pytest.mark.heavy  # a sweep of hostile bodies over every route
def test_hostile_bodies_only_ever_raise_api_errors(route, body):
    index = Indexes().scope("f")
    index.put_memory("mem-a", 1, "x y")
    index.put_binding("mem-a", 1, SPACE, np.ones(8, np.float32))
    try:
        page = search(index, route, body)
    except ApiError as error:
        assert error.status == 422
    else:
        canonical(page)  # a page is always valid JSON (no NaN, no numpy types)
