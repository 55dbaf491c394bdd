"""The PRF family (docs/prf.md): RM3 against a second, plain reading of Anserini's RM3 on a small
corpus with known expansion terms; Rocchio's moved vector by hand; the server's pages equal to the
evaluator's independent recomputation for the three profiles; a hand-edited expansion weight, an
expansion term, a feedback id or beta fails the check."""

from __future__ import annotations

import copy
import json
import math
from collections import Counter
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from evaluator.verification import recompute as rc
from evaluator.verification.verifiers.lists.prf import check_prf
from evaluator.verification.verify import Checker, RecentCache
from protocols.families.lists.prf import PRF_PROFILES
from server.families.prf.feedback import rocchio
from server.families.prf.prf_route import rm3_ranking
from server.retrieval.indexes import ScopeIndex
from server.retrieval.tokenize import bm25_tokens
from server.routes import search

# 30 documents: three about apple orchards (with cider, harvest), the rest filler; "the" and "of"
# are in every document (over 10% of them: never expansion terms), each document has its number.
ORCHARD = ["the apple orchard of the valley gives cider and harvest festivals",
           "the orchard harvest of apple trees feeds the cider press",
           "apple cider of the old press in the orchard"]
FILLER = ["the river of the north city", "the museum of modern art", "the band of the album tour",
          "the school of music and dance", "the mayor of the capital city"]


def corpus() -> dict[str, str]:
    texts = {f"d{i:02d}": ORCHARD[i] + f" n{i}" for i in range(len(ORCHARD))}
    for i in range(len(ORCHARD), 30):
        texts[f"d{i:02d}"] = FILLER[i % len(FILLER)] + f" n{i}"
    return texts


def plain_rm3(texts: dict[str, str], question: str, fb_docs=10, fb_terms=10, weight=0.5) -> list[tuple[str, float]]:
    """RM3 as Anserini documents it, written out again with dicts and loops: BM25 (k1 1.2, b 0.75)
    top fbDocs; per document P(w|d) = tf / kept length over terms in at most 10% of documents and
    2-20 characters long; feedback weight sum_d P(w|d) * score(d); keep fbTerms, L1-normalize;
    interpolate with the L1-normalized query: weight * q + (1 - weight) * rm."""
    tokens = {d: bm25_tokens(t) for d, t in texts.items()}
    n = len(texts)
    avgdl = sum(len(v) for v in tokens.values()) / n
    df = Counter(term for v in tokens.values() for term in set(v))
    terms = list(dict.fromkeys(bm25_tokens(question)))

    def bm25(d):
        tf = Counter(tokens[d])
        return sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * tf[t] * 2.2
                   / (tf[t] + 1.2 * (0.25 + 0.75 * len(tokens[d]) / avgdl)) for t in terms if tf[t])

    scored = sorted(((bm25(d), d) for d in texts if bm25(d) > 0), key=lambda x: (-x[0], x[1]))[:fb_docs]
    rm: dict[str, float] = {}
    for score, d in scored:
        kept = {t: c for t, c in Counter(tokens[d]).items() if 2 <= len(t) <= 20 and df[t] <= 0.1 * n}
        total = sum(kept.values())
        for t, c in kept.items():
            rm[t] = rm.get(t, 0.0) + c / total * score
    top = sorted(rm.items(), key=lambda x: (-x[1], x[0]))[:fb_terms]
    mass = sum(w for _, w in top)
    rm = {t: w / mass for t, w in top}
    final = {t: weight * (1 / len(terms) if t in terms else 0.0) + (1 - weight) * rm.get(t, 0.0)
             for t in set(terms) | set(rm)}
    return sorted(final.items(), key=lambda x: (-x[1], x[0]))


def setup(texts: dict[str, str], dims: int = 8):
    rng = np.random.default_rng(3)
    vectors = {d: rng.standard_normal(dims).astype(np.float32) for d in texts}
    index = ScopeIndex("lab")
    for d, text in texts.items():
        index.put_memory(d, 1, text, {"content": text, "metadata": {}})
        index.put_binding(d, 1, "space-t", vectors[d])
    checker: Any = Checker.__new__(Checker)  # only what the checks under test read, set by hand
    checker.profiles = copy.deepcopy(PRF_PROFILES)
    checker.bm25 = rc.Bm25.build(texts)
    checker.vectors = {k: v.astype(np.float64) for k, v in vectors.items()}
    checker.cosine_index = rc.CosineIndex(checker.vectors)
    checker._work, checker.derived = RecentCache(64), {}
    checker.revision_of = {d: 1 for d in texts}
    return index, checker, rng


def page_for(index, checker, rng, profile: str, question: str, limit: int = 10):
    vector = rng.standard_normal(8).astype(np.float32)
    qid = f"q{len(checker.frozen.query_vectors) if hasattr(checker, 'frozen') else 0}"
    vectors = dict(getattr(getattr(checker, "frozen", None), "query_vectors", {}) or {})
    vectors[qid] = vector
    checker.frozen = SimpleNamespace(query_vectors=vectors)
    page = search(index, "prf", {"profile": profile, "query": question, "query_vector": vector.tolist(),
                              "space_id": "space-t", "limit": limit})
    return {"id": qid, "question": question}, page


def failures(checker, query, page, profile: str, limit: int = 10) -> list[tuple]:
    return list(check_prf(checker, query, page, {"profile": profile, "limit": limit}))


@pytest.mark.parametrize("settings", [(3, 10, 0.7), (10, 10, 0.5), (2, 4, 0.3)],
                         ids=["frozen", "anserini-defaults", "other"])
def test_rm3_expansion_equals_a_plain_reading_of_anserini_rm3(settings):
    texts = corpus()
    index, _, _ = setup(texts)
    fb_docs, fb_terms, weight = settings
    profile = {**PRF_PROFILES["bm25_rm3_v1"], "fb_docs": fb_docs, "fb_terms": fb_terms,
               "original_query_weight": weight}
    if settings == (3, 10, 0.7):
        assert profile == PRF_PROFILES["bm25_rm3_v1"]
    for question in ("apple orchard", "cider press valley", "the apple", "museum n7"):
        _, block = rm3_ranking(index, question, profile, 10)
        have = [(e["term"], e["weight"]) for e in block["expansion"]]
        want = plain_rm3(texts, question, fb_docs, fb_terms, weight)
        assert [t for t, _ in have] == [t for t, _ in want]
        for (_, a), (_, b) in zip(have, want):
            assert a == pytest.approx(b, rel=1e-12)


def test_rm3_finds_the_known_expansion_terms():
    texts = corpus()
    index, checker, rng = setup(texts)
    _, page = page_for(index, checker, rng, "bm25_rm3_v1", "apple orchard")
    terms = {e["term"] for e in page["feedback"]["lexical"]["expansion"]}
    # the known expansion terms: the orchard documents' own words; never the everywhere words
    assert {"apple", "orchard", "cider", "harvest", "press"} <= terms
    assert not {"the", "of"} & terms
    assert [d["id"] for d in page["feedback"]["lexical"]["documents"]] == ["d00", "d01", "d02"] or \
        {d["id"] for d in page["feedback"]["lexical"]["documents"]} == {"d00", "d01", "d02"}
    # weights sum to 1 (both models are L1-normalized before the interpolation)
    assert math.fsum(e["weight"] for e in page["feedback"]["lexical"]["expansion"]) == pytest.approx(1.0)


def test_rocchio_moves_the_query_toward_the_mean_of_its_feedback():
    q = np.array([1.0, 0.0, 0.0])
    docs = [np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])]
    moved = rocchio(q, docs, 0.5)
    want = np.array([1.0, 0.25, 0.25]) / math.sqrt(1.125)
    assert np.allclose(moved, want, rtol=0, atol=1e-15)
    assert np.allclose(rocchio(q, [], 0.5), q)


@pytest.mark.parametrize("profile", ["bm25_rm3_v1", "cosine_rocchio_v1", "prf_hybrid_v1"])
def test_server_pages_equal_the_independent_recomputation(profile):
    texts = corpus()
    index, checker, rng = setup(texts)
    for question in ("apple orchard", "cider press valley", "museum of the city", "n7 band"):
        for limit in (3, 10, 30):
            query, page = page_for(index, checker, rng, profile, question, limit)
            assert page["hits"], (profile, question)
            assert failures(checker, query, page, profile, limit) == []


def test_a_hand_edited_expansion_weight_term_or_feedback_id_fails_the_check():
    texts = corpus()
    index, checker, rng = setup(texts)
    query, page = page_for(index, checker, rng, "prf_hybrid_v1", "apple orchard")
    assert failures(checker, query, page, "prf_hybrid_v1") == []
    edits = {
        "feedback.lexical.expansion": lambda p: p["feedback"]["lexical"]["expansion"][1].update(
            weight=p["feedback"]["lexical"]["expansion"][1]["weight"] * 1.001),
        "feedback.lexical.expansion ": lambda p: p["feedback"]["lexical"]["expansion"][-1].update(term="banana"),
        "feedback.lexical.documents": lambda p: p["feedback"]["lexical"]["documents"][0].update(id="d29"),
        "feedback.semantic.documents": lambda p: p["feedback"]["semantic"]["documents"][0].update(id="d28"),
        "feedback.semantic.beta": lambda p: p["feedback"]["semantic"].update(beta=0.25),
    }
    for field, edit in edits.items():
        tampered = copy.deepcopy(page)
        edit(tampered)
        assert field.strip() in {f for _, f, _ in failures(checker, query, tampered, "prf_hybrid_v1")}, field


from ground.canonical import digest  # noqa: E402

HTTP_SPACE = {"provider": "test", "model": "prf-hand-corpus", "revision": "r1", "dimensions": 8}


def test_prf_route_over_http_matches_the_verifier(fresh_scope):
    client = fresh_scope()
    texts = corpus()
    rng = np.random.default_rng(3)
    vectors = {d: rng.standard_normal(8).astype(np.float32) for d in texts}
    receipts = client.create_memories([{"idempotency_key": d, "external_id": d,
                                        "payload": {"content": t, "metadata": {}}} for d, t in texts.items()])["receipts"]
    record = {d: r["id"] for d, r in zip(texts, receipts)}
    client.attach_embeddings([{"idempotency_key": "e" + d, "record_id": record[d], "revision": 1,
                               "space": HTTP_SPACE, "vector": [float(x) for x in vectors[d]]} for d in texts])
    checker: Any = Checker.__new__(Checker)  # only what the checks under test read, set by hand
    checker.profiles = copy.deepcopy(PRF_PROFILES)
    checker.bm25 = rc.Bm25.build({record[d]: t for d, t in texts.items()})
    checker.vectors = {record[d]: v.astype(np.float64) for d, v in vectors.items()}
    checker.cosine_index = rc.CosineIndex(checker.vectors)
    checker._work, checker.derived = RecentCache(64), {}
    checker.revision_of = {record[d]: 1 for d in texts}
    qvec = np.random.default_rng(9).standard_normal(8).astype(np.float32)
    checker.frozen = SimpleNamespace(query_vectors={"q": qvec})
    for profile in PRF_PROFILES:
        body = {"profile": profile, "query": "apple orchard", "query_vector": [float(x) for x in qvec],
                "space_id": "space-" + digest(HTTP_SPACE), "limit": 10}
        page, micros, size, _ = client.search("prf", body)
        assert micros > 0 and size > 0 and page["method"] == "prf" and page["profile"] == profile
        assert failures(checker, {"id": "q", "question": "apple orchard"}, page, profile) == []
        assert client.catalog()["profiles"][profile] == json.loads(json.dumps(PRF_PROFILES[profile]))
