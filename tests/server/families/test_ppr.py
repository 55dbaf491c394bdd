"""The PPR family (docs/field-graphs.md): the server's integer push and the evaluator's vectorized
recomputation agree on every bit on random entity graphs, a hand-built bridge question ranks as
HippoRAG's PageRank should, and a hand-edited mass, seed or iteration count is caught."""

from __future__ import annotations

import copy
import random
from fractions import Fraction

import pytest

from evaluator.verification.verifiers.graphs.ppr import ppr_failures, recompute
from protocols.families.graphs.ppr import PPR_PROFILES
from server.families.ppr.pagerank import page_section, rank_ppr


def list_failures(section, hits, want) -> list[tuple]:
    """Every difference `ppr_failures` finds, listed (it is a generator)."""
    return list(ppr_failures(section, hits, want))


def star_relations(holders: dict[str, list[str]], kind: str = "shares_entity") -> list[dict]:
    out = []
    for text, ids in sorted(holders.items()):
        for other in ids[1:]:
            out.append({"id": f"edge-{ids[0]}-{other}-{text}", "kind": kind, "source": {"id": ids[0]},
                        "target": {"id": other}, "provenance": {"evidence_ref": "entity:" + text}})
    return out


def random_case(rng: random.Random):
    passages = [f"d{i:03d}" for i in range(rng.randint(5, 60))]
    entities = [f"ent {j}" for j in range(rng.randint(2, 40))]
    holders = {}
    for e in entities:
        held = sorted(rng.sample(passages, rng.randint(2, min(8, len(passages)))))
        holders[e] = held
    base = [(rid, Fraction(rng.randint(1, 50), rng.randint(51, 400))) for rid in rng.sample(passages, min(20, len(passages)))]
    base.sort(key=lambda t: (-t[1], t[0]))
    query = rng.sample(entities, rng.randint(0, min(3, len(entities)))) + ["no such entity"]
    return holders, base, query


@pytest.mark.parametrize("name", sorted(PPR_PROFILES))
def test_server_and_verifier_agree_on_every_bit(name):
    profile = PPR_PROFILES[name]
    rng = random.Random(name)
    for _ in range(60):
        holders, base, query = random_case(rng)
        relations = star_relations(holders, profile["graph"]["kinds"][0])
        ranked = rank_ppr(query, holders, base, profile, 10)
        section, hits = page_section(ranked)
        want = recompute(query, relations, base, profile, 10)
        assert list_failures(section, hits, want) == []
        assert sum(ranked.reset.values()) <= 1 << profile["arithmetic"]["grid_bits"]


def test_a_bridge_passage_rises_through_a_rare_query_entity():
    # q names "raoul walsh"; the bridge passage b holds it with the film; the film's page f holds
    # the film only. PageRank from the entity reaches b first, then f through the film entity.
    holders = {"raoul walsh": ["b", "x"], "thief of bagdad": ["b", "f"], "united states": ["b", "f", "x", "y", "z"]}
    base = [("y", Fraction(1, 3)), ("z", Fraction(1, 4))]
    ranked = rank_ppr(["raoul walsh"], holders, base, PPR_PROFILES["ppr_entity_v1"], 5)
    order = [rid for rid, _, _ in ranked.order]
    assert order[:2] == ["b", "x"] and order.index("f") < order.index("y")
    assert ranked.reset == {"e:raoul walsh": 1 << 48}


def test_no_matched_entity_and_no_passage_seeds_is_the_base_order():
    base = [("a", Fraction(1, 2)), ("b", Fraction(1, 3))]
    ranked = rank_ppr(["nothing"], {"x": ["a", "b"]}, base, PPR_PROFILES["ppr_entity_v1"], 5)
    assert ranked.order == [("a", None, 1), ("b", None, 2)] and ranked.reset == {}


def test_a_hand_edited_mass_seed_or_iteration_count_fails():
    profile = PPR_PROFILES["ppr_entity_passages_v1"]
    holders, base, query = random_case(random.Random(7))
    query = [next(iter(holders))]
    relations = star_relations(holders)
    section, hits = page_section(rank_ppr(query, holders, base, profile, 10))
    want = recompute(query, relations, base, profile, 10)
    assert list_failures(section, hits, want) == []
    massed = next(i for i, h in enumerate(hits) if h["mass"])
    edited = copy.deepcopy(hits)
    edited[massed]["mass"] += 1  # one unit on the 2^-48 grid
    assert any(rank == massed + 1 for rank, _, _ in list_failures(section, edited, want))
    seeded = copy.deepcopy(section)
    seeded["seeds"][0]["reset"] -= 1
    assert any(field == "ppr.seeds" for _, field, _ in list_failures(seeded, hits, want))
    iterated = copy.deepcopy(section)
    iterated["iterations"] = 15
    assert any(field == "ppr.iterations" for _, field, _ in list_failures(iterated, hits, want))
    # a page computed with one iteration fewer differs in its masses too, not only in its count
    fewer = {**profile, "iterations": profile["iterations"] - 1}
    section_f, hits_f = page_section(rank_ppr(query, holders, base, fewer, 10))
    section_f["iterations"] = profile["iterations"]
    assert list_failures(section_f, hits_f, want)


def test_the_servers_entity_tables_follow_every_write():
    from server.families.ppr.ppr_route import cached_tables
    from server.retrieval.indexes import ScopeIndex

    index = ScopeIndex("s")
    for rid in ("a", "b", "c"):
        index.put_memory(rid, 1, f"text {rid}")

    def relation(rid, source, target, text, revision=1):
        return {"id": rid, "revision": 1, "kind": "shares_entity", "source": {"id": source, "revision": revision},
                "target": {"id": target, "revision": 1}, "provenance": {"evidence_ref": "entity:" + text}}

    index.put_relation(relation("r1", "a", "b", "x"))
    assert cached_tables(index, ["shares_entity"])[0] == {"x": ["a", "b"]}
    index.put_relation(relation("r2", "a", "c", "x"))
    assert cached_tables(index, ["shares_entity"])[0] == {"x": ["a", "b", "c"]}
    index.put_memory("c", 2, "text c, revised")  # r2 names revision 1 of c: no longer eligible
    holders, entities_of = cached_tables(index, ["shares_entity"])
    assert holders == {"x": ["a", "b"]} and entities_of == {"a": ["x"], "b": ["x"]}


def test_passage_seeds_from_a_base_the_server_cut_inside_a_near_tie_are_accepted_and_no_other():
    """The held-out failure (`ppr.seeds differ` on graph_ppr_passages): two cosines one ulp apart at
    the semantic channel's cut, ordered one way by the server and the other by the recomputation,
    put a different passage in the fused base, and every passage seed moves with the base's total."""
    from evaluator.verification import recompute as rc
    from evaluator.verification.verifiers.graphs.ppr import page_failures
    from protocols.routes import PROFILES

    profile = PPR_PROFILES["ppr_entity_passages_v1"]
    spec = copy.deepcopy(profile["base"])
    for channel in spec["channels"].values():
        channel["depth"] = 6
    spec["depth"] = 8
    rule = PROFILES[spec["profile"]]["fusion"]
    weights = {c: spec["channels"][c]["weight"] for c in spec["channels"]}
    cut = 0.5
    lists = {"lexical": [(f"d{i:02d}", 10.0 - i) for i in range(10)],
             "semantic": [(f"d{i:02d}", 0.9 - 0.05 * (i - 10)) for i in range(10, 15)]
             + [("d15", cut), ("d16", cut - 1e-16), ("d17", 0.2), ("d18", 0.1), ("d19", 0.05)]}

    def base_of(channels):
        fused = rc.fuse(rule, {c: [rid for rid, _ in channels[c]][:6] for c in channels}, weights, spec["k"])
        order = rc.fused_order(fused)[: spec["depth"]]
        return [(rid, Fraction(int(fused[rid]["score"].numerator), int(fused[rid]["score"].denominator)))
                for rid in order]

    holders = {"bridge": ["d00", "d16"], "other": ["d03", "d15", "d17"]}
    relations = star_relations(holders, profile["graph"]["kinds"][0])
    query = ["bridge", "other"]
    servers_view = copy.deepcopy(lists)
    servers_view["semantic"][5], servers_view["semantic"][6] = servers_view["semantic"][6], servers_view["semantic"][5]
    section, hits = page_section(rank_ppr(query, holders, base_of(servers_view), profile, 10))
    ours = recompute(query, relations, base_of(lists), profile, 10)
    assert any(field == "ppr.seeds" for _, field, _ in list_failures(section, hits, ours))  # the failure, reproduced
    profile = {**profile, "base": spec}
    assert list(page_failures(section, hits, query, relations, base_of(lists), lambda: lists, rule, profile, 10)) == []
    # a swap that is no near tie (0.65 against 0.6) explains nothing
    not_a_tie = copy.deepcopy(lists)
    not_a_tie["semantic"][4], not_a_tie["semantic"][5] = not_a_tie["semantic"][5], not_a_tie["semantic"][4]
    section, hits = page_section(rank_ppr(query, holders, base_of(not_a_tie), profile, 10))
    assert list(page_failures(section, hits, query, relations, base_of(lists), lambda: lists, rule, profile, 10))
