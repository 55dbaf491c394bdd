"""The rescue family on hand-built corpora: the four invariants, fusion at weight 0, gate, bonuses.

In-process tests drive `server.families.rescue.rescue_method.rank_rescue` with explicit channel lists and a hand-built
relation graph; the HTTP test at the end runs the real lab and checks a page with the evaluator's
independent verifier.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest

from ground.canonical import canonical, digest
from protocols.families.lists import rescue as rescue_profiles
from protocols.families.lists.rescue import RESCUE_PROFILES
from server.families.rescue.rescue_method import Edge, rank_rescue
from server.families.rescue.titles import title_table

APPEND = RESCUE_PROFILES["graph_rescue_v1"]


def doc(i: int) -> str:
    return f"mem-{i:032x}"


class Graph:
    """A relation list seen as the rescue code's neighbour lookup."""

    def __init__(self, edges: list[tuple[str, str, int, int]]):
        self.by_node: dict[str, list[Edge]] = {}
        for n, (kind, _, source, target) in enumerate(edges):
            edge = Edge(f"rel-{n:032x}", 1, kind, doc(source), doc(target))
            self.by_node.setdefault(edge.source, []).append(edge)
            self.by_node.setdefault(edge.target, []).append(edge)

    def __call__(self, node: str) -> list[Edge]:
        return list(reversed(self.by_node.get(node, [])))  # any order: the method must sort


def channels(lexical: list[int], semantic: list[int]) -> tuple[list, list]:
    return ([(doc(i), 10.0 - r) for r, i in enumerate(lexical)],
            [(doc(i), 0.9 - r / 100) for r, i in enumerate(semantic)])


def titles(named: dict[int, str]) -> dict[str, list[str]]:
    return title_table((doc(i), f"{title}\nparagraph") for i, title in named.items())


def profile_with(base: dict, path: tuple[str, ...], value) -> dict:
    changed = copy.deepcopy(base)
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return changed


def expected_rrf(lexical: list[int], semantic: list[int]) -> list[str]:
    score: dict[str, Fraction] = {}
    for ranking in (lexical, semantic):
        for rank, i in enumerate(ranking, start=1):
            score[doc(i)] = score.get(doc(i), Fraction(0)) + Fraction(1, 2) / (60 + rank)
    return sorted(score, key=lambda rid: (-score[rid], rid))


# a base of 6 documents (1..6), a chain 1 -> 20 -> 21 -> 22 and a hub 30 linked from 2
LEX, SEM = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
EDGES = [("semantic_related", "", 1, 20), ("semantic_related", "", 20, 21),
         ("semantic_related", "", 21, 22), ("same_entity", "", 2, 30), ("semantic_related", "", 3, 1),
         ("semantic_related", "", 4, 2), ("semantic_related", "", 4, 1), ("contradicts", "", 5, 40)]


def run(query="who founded the company", lex=LEX, sem=SEM, edges=EDGES, named=None, profile=APPEND, mode="force"):
    lexical, semantic = channels(lex, sem)
    return rank_rescue(query, lexical, semantic, titles(named or {}), Graph(edges), profile, mode)


def test_base_block_equals_base_exactly_without_bonus():
    flat = profile_with(APPEND, ("expander", "hop_weight"), 0)
    ranked = run(profile=flat)
    base_block = [rid for rid, _, rescued in ranked.final if not rescued]
    assert base_block == expected_rrf(LEX, SEM)
    assert [rid for rid, _, _ in ranked.final[: len(base_block)]] == base_block


def test_rescue_never_promotes_and_scores_are_rank_derived():
    ranked = run()
    flags = [rescued for _, _, rescued in ranked.final]
    assert any(flags) and not all(flags)
    assert flags == sorted(flags)  # every False before every True
    for rank, (_, score, _) in enumerate(ranked.final, start=1):
        assert score == Fraction(1, 60 + rank)
    rescued = [rid for rid, _, r in ranked.final if r]
    assert set(rescued).isdisjoint(expected_rrf(LEX, SEM))


def test_closest_hop_and_lane_order():
    ranked = run()
    lane = {hit.id: hit for hit in ranked.lane}
    # 20 is one hop from seed 1, 21 two hops; 22 is three hops away: not reached
    assert lane[doc(20)].hops == 1 and lane[doc(21)].hops == 2 and doc(22) not in lane
    seed1 = next(s for s in ranked.seeds if s.id == doc(1))
    assert lane[doc(20)].score == seed1.score / 2 and lane[doc(21)].score == seed1.score / 4
    # contradicts is never followed
    assert doc(40) not in lane
    scores = [(-h.score, h.hops, h.id) for h in ranked.lane]
    assert scores == sorted(scores)
    steps = lane[doc(21)].steps
    assert [(f, t) for _, f, t in steps] == [(doc(1), doc(20)), (doc(20), doc(21))]


def test_tail_capped_at_fifty():
    star = [("semantic_related", "", 1, 100 + i) for i in range(80)]
    ranked = run(edges=star)
    assert len(ranked.lane) == 50 and ranked.lane_before_cap == 80
    assert "lane_cap" in ranked.work.stop_reasons
    assert [h.id for h in ranked.lane] == sorted(doc(100 + i) for i in range(80))[:50]


def test_expander_bonus_counts_distinct_top_seeds_with_relations():
    ranked = run()
    base = {hit.id: hit for hit in ranked.base}
    # 1 is linked to top-5 seeds 3 and 4; 2 to 4 (30 is outside the base)
    assert [sid for sid, _ in base[doc(1)].bonus_seeds] == [doc(3), doc(4)]
    assert base[doc(1)].rescored == base[doc(1)].normalized + Fraction(2, 20)
    assert [e.relation_id for e in base[doc(1)].bonus_seeds[0][1]] == [f"rel-{4:032x}"]
    assert base[doc(6)].bonus_seeds == [] and base[doc(6)].rescored == base[doc(6)].normalized
    order = [(-h.rescored, h.id) for h in ranked.base]
    assert order == sorted(order)
    assert [rid for rid, _, r in ranked.final if not r] == [h.id for h in ranked.base]


def test_fusion_at_weight_zero_equals_base_and_positive_weight_interleaves():
    zero = profile_with(RESCUE_PROFILES["graph_rescue_fuse_100_v1"], ("fusion", "graph_weight"), 0.0)
    ranked = run(profile=zero)
    base = expected_rrf(LEX, SEM)
    assert [rid for rid, _, _ in ranked.final] == base
    full = run(profile=RESCUE_PROFILES["graph_rescue_fuse_100_v1"])
    order = [rid for rid, _, _ in full.final]
    lane_first = order.index(full.lane[0].id)
    assert lane_first < len(base)  # weight 1: the lane's best beats some base candidates


def test_gate_decisions_on_crafted_queries():
    # relation cue
    g = run(query="who founded the company", mode="auto").gate
    assert g["fired"] and "relation_cue" in g["reasons"] and g["signals"]["relation_cues"] == ["founded"]
    # entity heavy: two distinct titles in the query
    g = run(query="Alpha Centauri and Beta Pictoris", named={7: "Alpha Centauri", 8: "Beta Pictoris"},
            mode="auto").gate
    assert "entity_heavy" in g["reasons"] and g["signals"]["query_titles"] == 2
    # full agreement, a clear leader (1 first in both), short, no cue: vetoed
    g = run(query="alpha page", lex=[1, 2, 3], sem=[1, 2, 3], mode="auto").gate
    assert g["vetoed"] and not g["auto_decision"] and not g["fired"]
    # disagreement of the channels: low agreement, Jaccard 0
    g = run(query="a long query about nothing much at all here", lex=[1, 2], sem=[3, 4], mode="auto").gate
    assert "low_agreement" in g["reasons"] and g["signals"]["agreement_jaccard_exact"] == "0/1"
    # the two best are exactly tied: low confidence
    g = run(query="a long query about nothing much at all here", lex=[1, 2], sem=[2, 1], mode="auto").gate
    assert "low_confidence" in g["reasons"] and g["signals"]["confidence_gap"] == 0.0
    # off and force record what auto would have done
    off = run(query="who founded the company", mode="off")
    assert off.gate["auto_decision"] and not off.gate["fired"] and off.lane == []
    assert all(not r for _, _, r in off.final)
    forced = run(query="alpha page", lex=[1, 2, 3], sem=[1, 2, 3], mode="force")
    assert not forced.gate["auto_decision"] and forced.gate["fired"]


def test_title_seeds_come_first_and_score_one():
    ranked = run(query="tell me about Gamma Ray Burst", named={50: "Gamma Ray Burst", 51: "Gamma"})
    assert ranked.seeds[0].id == doc(50) and ranked.seeds[0].score == 1
    assert ranked.seeds[0].origins == ("query_title",)
    assert doc(51) in [s.id for s in ranked.seeds]  # "gamma" is eligible (5 characters)
    lane = {hit.id: hit for hit in ranked.lane}
    assert lane[doc(50)].hops == 0  # a title seed outside the base is itself rescued
    assert [s.id for s in ranked.seeds[2:]] == [h for h in expected_rrf(LEX, SEM)[:5]]


def test_determinism_identical_bytes():
    def snapshot():
        r = run(named={7: "Alpha Centauri"}, query="who founded Alpha Centauri")
        return canonical([[rid, str(s), x] for rid, s, x in r.final] + [r.gate]
                         + [[h.id, [e.relation_id for e, _, _ in h.steps]] for h in r.lane])
    assert snapshot() == snapshot()


def test_catalog_entries_hold_every_parameter():
    for profile in RESCUE_PROFILES.values():
        assert profile["family"] == "rescue"
        assert profile["limit_max"] == 150
    assert RESCUE_PROFILES["graph_rescue_fuse_025_v1"]["fusion"]["graph_weight"] == 0.25
    assert rescue_profiles.RELATION_CUES == tuple(sorted(rescue_profiles.RELATION_CUES))


# ---------------------------------------------------------------- server pages vs the evaluator

import random  # noqa: E402

import numpy as np  # noqa: E402

from builders.title_graph import build_relations  # noqa: E402
from evaluator.verification import recompute as rc  # noqa: E402
from evaluator.verification.verifiers.lists.rescue import compare_page, expected_rescue  # noqa: E402
from ground.artifacts import document_id  # noqa: E402
from server.retrieval.indexes import ScopeIndex  # noqa: E402
from server.routes import search  # noqa: E402

NAMES = ["Amber Valley", "Boreal Institute", "Cobalt Harbor", "Delta Works", "Ember Council", "Fjord Press",
         "Granite Union", "Harbor Lights", "Iris Theatre", "Juniper Records", "Kestrel Aviation", "Lumen College"]
FILLER = "river company music school founded city born album band mayor museum capital".split()
QUERIES = ["Who founded Amber Valley?", "Which city is the capital where Cobalt Harbor and Delta Works stand?",
           "Juniper Records album", "mayor of the city where Kestrel Aviation was founded",
           "Iris Theatre", "the band that recorded at Fjord Press and Lumen College"]


def hand_corpus(seed: int = 3) -> tuple[list[dict], dict]:
    rng = random.Random(seed)
    docs = []
    for n in range(160):
        title = NAMES[n % len(NAMES)]
        mentions = rng.sample([t for t in NAMES if t != title], 2)
        words = rng.sample(FILLER, 4)
        paragraph = f"{words[0]} {mentions[0]} {words[1]} {words[2]} {mentions[1]} {words[3]} {n}"
        docs.append({"id": document_id(title, paragraph), "title": title, "paragraph_text": paragraph,
                     "text": title + "\n" + paragraph})
    relations = build_relations([{k: d[k] for k in ("id", "title", "paragraph_text")} for d in docs], "0" * 64)
    return docs, relations


def vectors_for(docs: list[dict], seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {d["id"]: rng.standard_normal(8).astype(np.float32) for d in docs}


def hand_index(docs: list[dict], relations: dict, vectors: dict[str, np.ndarray]) -> ScopeIndex:
    """The hand corpus fed to a live index, every record, binding and relation at revision 1."""
    index = ScopeIndex("lab")
    for d in docs:
        index.put_memory(d["id"], 1, d["text"], {"content": d["text"], "metadata": {}})
        index.put_binding(d["id"], 1, "space-t", vectors[d["id"]])
    for rel in relations["relations"]:
        index.put_relation({"id": rel["id"], "revision": 1, "kind": rel["kind"],
                            "source": {"id": rel["source"], "revision": 1},
                            "target": {"id": rel["target"], "revision": 1}, "provenance": rel["provenance"]})
    return index


@pytest.mark.heavy  # every query of the sample, or a process per hash seed
def test_server_pages_equal_the_independent_recomputation():
    docs, relations = hand_corpus()
    vectors = vectors_for(docs)
    index = hand_index(docs, relations, vectors)
    texts = {d["id"]: d["text"] for d in docs}
    titles_by_id = {d["id"]: d["title"] for d in docs}
    edges = {r["id"]: rc.Edge(r["id"], r["kind"], r["source"], r["target"]) for r in relations["relations"]}
    bm25 = rc.Bm25.build(texts)
    rng = np.random.default_rng(11)
    checked = rescued_seen = 0
    for query in QUERIES:
        qvec = rng.standard_normal(8).astype(np.float32)
        lexical = rc.ordered(bm25.scores(query), 100)
        semantic = rc.ordered(rc.cosines(qvec, {k: v.astype(np.float64) for k, v in vectors.items()}), 100)
        for name, profile in RESCUE_PROFILES.items():
            for mode in ("auto", "off", "force"):
                body = {"profile": name, "query": query, "query_vector": [float(x) for x in qvec],
                        "space_id": "space-t", "limit": 150, "graph_mode": mode}
                page = search(index, "rescue", body)
                assert canonical(page) == canonical(search(index, "rescue", body))  # identical bytes
                want = expected_rescue(query, lexical, semantic, titles_by_id, edges, profile, mode)
                failures = list(compare_page(page, want, {"limit": 150}, profile, {d: 1 for d in texts},
                                             {r: 1 for r in edges}, edges,
                                             {"lexical": dict(lexical), "semantic": dict(semantic)}, False))
                assert failures == [], (query, name, mode, failures[:3])
                flags = [h["rescued"] for h in page["hits"]]
                if profile["combine"] == "append":
                    assert flags == sorted(flags)  # rescue never promotes
                rescued_seen += sum(flags)
                checked += 1
    assert checked == len(QUERIES) * 9 and rescued_seen > 0


def test_verifier_catches_a_tampered_page():
    docs, relations = hand_corpus()
    vectors = vectors_for(docs)
    index = hand_index(docs, relations, vectors)
    query, qvec = QUERIES[0], np.ones(8, dtype=np.float32)
    texts = {d["id"]: d["text"] for d in docs}
    edges = {r["id"]: rc.Edge(r["id"], r["kind"], r["source"], r["target"]) for r in relations["relations"]}
    lexical = rc.ordered(rc.Bm25.build(texts).scores(query), 100)
    semantic = rc.ordered(rc.cosines(qvec, {k: v.astype(np.float64) for k, v in vectors.items()}), 100)
    page = search(index, "rescue", {"profile": "graph_rescue_v1", "query": query, "query_vector": [1.0] * 8,
                                 "space_id": "space-t", "limit": 150, "graph_mode": "force"})
    want = expected_rescue(query, lexical, semantic, {d["id"]: d["title"] for d in docs}, edges,
                           RESCUE_PROFILES["graph_rescue_v1"], "force")

    def problems(tampered):
        return [field for _, field, _ in compare_page(
            tampered, want, {"limit": 150}, RESCUE_PROFILES["graph_rescue_v1"], {d: 1 for d in texts},
            {r: 1 for r in edges}, edges, {"lexical": dict(lexical), "semantic": dict(semantic)}, False)]

    assert problems(page) == []
    first_rescued = next(i for i, h in enumerate(page["hits"]) if h["rescued"])
    swapped = copy.deepcopy(page)
    hits = swapped["hits"]
    hits[first_rescued - 1], hits[first_rescued] = hits[first_rescued], hits[first_rescued - 1]
    assert "id" in problems(swapped)  # a rescued candidate promoted above the base
    bonus = copy.deepcopy(page)
    target = next(h for h in bonus["hits"] if h["base"] and h["base"]["bonus_seeds"])
    target["base"]["bonus_seeds"] = []
    assert "base.bonus_seeds" in problems(bonus)
    gate = copy.deepcopy(page)
    gate["gate"]["reasons"] = []
    assert "gate" in problems(gate)
    proof = copy.deepcopy(page)
    proof["hits"][first_rescued]["proof"]["hops"] += 1
    assert "proof" in problems(proof)


# ---------------------------------------------------------------- over HTTP, on a real lab

def _stale_index() -> ScopeIndex:
    """a, b, c match "alpha" and are bound (the base); e has neither (outside the base); relations
    a-e (a lane edge) and a-b (an expander edge), both pinned at revision 1."""
    index = ScopeIndex("lab")
    for name, text in (("a", "alpha alpha"), ("b", "alpha beta"), ("c", "alpha gamma"), ("e", "epsilon")):
        index.put_memory(f"mem-{name}", 1, text)
        if name != "e":
            index.put_binding(f"mem-{name}", 1, "space-t", np.array([1.0, 0.5, 0.25, 0.125], np.float32))
    for rid, target in (("rel-ae", "mem-e"), ("rel-ab", "mem-b")):
        index.put_relation({"id": rid, "revision": 1, "kind": "same_entity", "source": {"id": "mem-a", "revision": 1},
                            "target": {"id": target, "revision": 1}, "provenance": {}})
    return index


def test_stale_relations_are_ignored_by_the_lane_and_the_expander():
    body = {"profile": "graph_rescue_v1", "query": "alpha", "query_vector": [1.0, 0.5, 0.25, 0.125],
            "space_id": "space-t", "limit": 150, "graph_mode": "force"}
    index = _stale_index()
    page = search(index, "rescue", body)
    hits = {h["id"]: h for h in page["hits"]}
    assert hits["mem-e"]["rescued"] and hits["mem-b"]["base"]["bonus_seeds"]
    assert page["work"]["stale_relations_skipped"] == 0
    index.put_memory("mem-e", 2, "epsilon revised")  # rel-ae now names a stale revision of e
    index.put_memory("mem-b", 2, "alpha beta revised")  # and rel-ab one of b
    page = search(index, "rescue", body)
    hits = {h["id"]: h for h in page["hits"]}
    assert "mem-e" not in hits, "a stale relation must not rescue anything"
    assert hits["mem-b"]["base"]["bonus_seeds"] == [] and hits["mem-b"]["base"]["bonus_exact"] == "0/1"
    assert page["relations"] == [] and page["work"]["stale_relations_skipped"] > 0


from evaluator.connection.client import LabError  # noqa: E402
from protocols.committed import committed_file
from tests.lab_fixtures import PROVENANCE  # noqa: E402

HTTP_SPACE = {"provider": "test", "model": "rescue-hand-corpus", "revision": "r1", "dimensions": 8}


def test_rescue_route_over_http_matches_the_verifier(fresh_scope):
    client = fresh_scope()
    docs, relations = hand_corpus()
    vectors = vectors_for(docs)
    receipts = client.create_memories([{"idempotency_key": d["id"], "external_id": d["id"], "payload": {"content": d["text"], "metadata": {}}}
                                       for d in docs])["receipts"]
    record = {d["id"]: r["id"] for d, r in zip(docs, receipts)}
    client.attach_embeddings([{"idempotency_key": "e" + d["id"], "record_id": record[d["id"]], "revision": 1,
                               "space": HTTP_SPACE, "vector": [float(x) for x in vectors[d["id"]]]} for d in docs])
    items = [{"idempotency_key": r["id"], "external_id": r["id"], "kind": r["kind"], "source": {"id": record[r["source"]], "revision": 1},
              "target": {"id": record[r["target"]], "revision": 1}, "provenance": PROVENANCE}
             for r in relations["relations"]]
    rel_receipts = [receipt for start in range(0, len(items), 500)
                    for receipt in client.assert_relations(items[start:start + 500])["receipts"]]
    edges = {rec["id"]: rc.Edge(rec["id"], r["kind"], record[r["source"]], record[r["target"]])
             for r, rec in zip(relations["relations"], rel_receipts)}
    texts = {record[d["id"]]: d["text"] for d in docs}
    query, qvec = QUERIES[3], np.random.default_rng(2).standard_normal(8).astype(np.float32)
    space_id = "space-" + digest(HTTP_SPACE)  # docs/contracts.md: the space id rule
    body = {"profile": "graph_rescue_v1", "query": query, "query_vector": [float(x) for x in qvec],
            "space_id": space_id, "limit": 150, "graph_mode": "force"}
    page, micros, size, _ = client.search("rescue", body)
    assert micros > 0 and size > 0 and page["fence"]["high_watermark"] > 0
    assert page["method"] == "rescue" and page["gate"]["fired"]
    lexical = rc.ordered(rc.Bm25.build(texts).scores(query), 100)
    semantic = rc.ordered(rc.cosines(qvec, {record[k]: v.astype(np.float64) for k, v in vectors.items()}), 100)
    want = expected_rescue(query, lexical, semantic, {record[d["id"]]: d["title"] for d in docs}, edges,
                           RESCUE_PROFILES["graph_rescue_v1"], "force")
    assert list(compare_page(page, want, {"limit": 150}, RESCUE_PROFILES["graph_rescue_v1"], {r: 1 for r in texts},
                             {r: 1 for r in edges}, edges, {"lexical": dict(lexical), "semantic": dict(semantic)},
                             False)) == []
    flags = [h["rescued"] for h in page["hits"]]
    assert any(flags) and flags == sorted(flags) and len(flags) - flags.index(True) <= 50
    # the catalog lists the rescue profiles with every parameter
    assert client.catalog()["profiles"]["graph_rescue_v1"] == json_roundtrip(RESCUE_PROFILES["graph_rescue_v1"])
    # bad bodies are 422 and name the fault
    for change, code in (({"graph_mode": "sometimes"}, "out_of_range"), ({"limit": 151}, "out_of_range"),
                         ({"profile": "weighted_rrf_v1"}, "unknown_profile"), ({"extra": 1}, "unknown_field"),
                         ({"profile": ["graph_rescue_v1"]}, "unknown_profile"), ({"query": 7}, "wrong_type")):
        with pytest.raises(LabError) as caught:
            client.search("rescue", {**body, **change})
        assert caught.value.status == 422 and caught.value.code == code
    assert client.fence() == page["fence"], "refused searches write nothing"


def json_roundtrip(value):
    import json
    return json.loads(json.dumps(value))


def test_near_tie_alignment_only_inside_runs_of_near_equal_scores():
    from evaluator.verification.verifiers.lists.rescue import align_near_ties
    lst = [("a", 0.9000001), ("b", 0.9), ("c", 0.5)]
    assert align_near_ties(lst, {"b": 1}, 2e-6) == [("b", 0.9), ("a", 0.9000001), ("c", 0.5)]
    # a document the page does not show yields its place to the one it does rank
    assert align_near_ties(lst, {"a": 2}, 2e-6) == [("b", 0.9), ("a", 0.9000001), ("c", 0.5)]
    # a real difference is never reordered, whatever the page claims
    assert align_near_ties(lst, {"c": 1}, 2e-6) == lst
    assert align_near_ties(lst, {}, 2e-6) == lst


def test_v2_protocols_are_v1_plus_the_rescue_family_and_validate():
    """What v2 adds to v1 (that it is derived byte for byte: tests/protocols/test_protocol_registry.py)."""
    import json

    from protocols.registry import RESCUE_FAMILY
    from protocols.schema import load_protocol
    for name in ("graph-multihop-protocol", "musique-sample"):
        v1 = json.loads(committed_file(f"{name}-v1.json").read_text())
        v2 = load_protocol(committed_file(f"{name}-v2.json"))
        assert v2["evaluation"]["primary_contrast"] == {"candidate": "graph_rescue", "baseline": "weighted_rrf_v1",
                                                        "label": "confirmatory"}
        assert {m: s for m, s in v2["methods"].items() if s["route"] != "rescue"} == v1["methods"]
        assert set(RESCUE_FAMILY.methods) == {m for m, s in v2["methods"].items() if s["route"] == "rescue"}
        for method, fields in RESCUE_FAMILY.methods.items():
            assert v2["ranking_profiles"][fields["profile"]] == json_roundtrip(RESCUE_PROFILES[fields["profile"]])
            assert v2["methods"][method]["route"] == "rescue"


@pytest.mark.heavy  # every query of the sample, or a process per hash seed
def test_pages_are_identical_bytes_across_processes_and_hash_seeds():
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("from tests.server.families.test_rescue import *\n"
            "docs, relations = hand_corpus()\n"
            "vectors = vectors_for(docs)\n"
            "index = ScopeIndex('lab')\n"
            "for d in docs:\n"
            "    index.put_memory(d['id'], 1, d['text'], {'content': d['text'], 'metadata': {}})\n"
            "    index.put_binding(d['id'], 1, 'space-t', vectors[d['id']])\n"
            "for r in relations['relations']:\n"
            "    index.put_relation({'id': r['id'], 'revision': 1, 'kind': r['kind'], 'source': {'id': r['source'], "
            "'revision': 1}, 'target': {'id': r['target'], 'revision': 1}, 'provenance': r['provenance']})\n"
            "pages = [search(index, 'rescue', {'profile': p, 'query': q, 'query_vector': [0.5] * 8, 'space_id': 'space-t',"
            " 'limit': 150, 'graph_mode': 'force'}) for p in RESCUE_PROFILES for q in QUERIES]\n"
            "print(digest(pages))\n")
    repo = Path(__file__).resolve().parents[3]
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        outs.add(run.stdout.strip())
    assert len(outs) == 1
