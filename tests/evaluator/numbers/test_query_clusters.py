"""Clusters of dependent queries: the MuSiQue component rule, the supporting-title rule, and the
structure found on the real MuSiQue ids in ../shared."""

from __future__ import annotations

import json

import pytest

from evaluator.numbers import query_clusters as clusters
from protocols.committed import committed_file
from protocols.selection import select_rows
from tests.conftest import SAMPLE_DIR, SHARED_DATA, require_shared


def test_musique_ids_yield_one_component_per_hop():
    assert clusters.musique_components("2hop__13548_13529") == (13548, 13529)
    assert clusters.musique_components("3hop2__9285_5188_23307") == (9285, 5188, 23307)
    assert clusters.musique_components("4hop3__862_846_326964_7713") == (862, 846, 326964, 7713)
    for bad in ("2hop__1_2_3", "3hop1__1_2", "5hop1__1_2_3_4_5", "2hop_1_2", "2hop__1_x", "abc", "2hop__"):
        assert clusters.musique_components(bad) is None, bad


def test_shared_components_link_transitively():
    ids = ["2hop__1_2", "2hop__2_3", "2hop__3_4", "2hop__7_8", "3hop1__9_10_1", "2hop__11_12"]
    found = clusters.build_clusters(clusters.MUSIQUE_RULE, ids)
    assert found == [["2hop__11_12"], ["2hop__1_2", "2hop__2_3", "2hop__3_4", "3hop1__9_10_1"], ["2hop__7_8"]]
    assert clusters.structure(found) == {"queries": 6, "clusters": 3, "largest": 4, "singletons": 2,
                                         "sizes": {"1": 2, "4": 1}}


def test_supporting_titles_link_queries_and_auto_picks_the_rule_from_the_ids():
    titles = {"d1": "Paris", "d2": "France", "d3": "Berlin", "d4": "Germany", "d5": "Paris", "d6": "Rome"}
    queries = {"5a8b": {"judgments": {"d1": 1, "d2": 1}}, "5a8c": {"judgments": {"d3": 1, "d4": 1}},
               "5a8d": {"judgments": {"d5": 1, "d6": 1}}, "5a8e": {"judgments": {"d6": 1}}}
    ids = sorted(queries)
    assert clusters.resolve_rule("auto", ids) == clusters.TITLE_RULE
    assert clusters.resolve_rule("auto", ["2hop__1_2", "4hop1__1_2_3_4"]) == clusters.MUSIQUE_RULE
    # d1 and d5 are two paragraphs titled "Paris": same title, so linked; d6 links 5a8d and 5a8e
    assert clusters.build_clusters(clusters.TITLE_RULE, ids, queries, titles) == [["5a8b", "5a8d", "5a8e"], ["5a8c"]]
    with pytest.raises(clusters.ClusterError, match="has no title"):
        clusters.build_clusters(clusters.TITLE_RULE, ids, queries, {"d1": "Paris"})
    with pytest.raises(clusters.ClusterError, match="not a MuSiQue-Ans id"):
        clusters.build_clusters(clusters.MUSIQUE_RULE, ids)
    with pytest.raises(clusters.ClusterError, match="unknown cluster rule"):
        clusters.resolve_rule("by_answer", ids)


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_id_numbers_are_the_decomposition_ids_in_every_sample_row():
    require_shared(SAMPLE_DIR)
    for name in ("musique_sample_dev.jsonl", "musique_sample_train.jsonl"):
        for row in _rows(SAMPLE_DIR / name):
            assert clusters.musique_components(row["id"]) == tuple(step["id"] for step in row["question_decomposition"])


def test_clusters_of_the_sample_cohort_and_of_the_official_dev_ids():
    require_shared(SAMPLE_DIR)
    protocol = json.loads(committed_file("musique-sample-v1.json").read_text())
    selection = protocol["selection"]
    counts = {int(h): n for h, n in selection["splits"]["test"]["counts"].items()}
    cohort = [r["id"] for r in select_rows(_rows(SAMPLE_DIR / "musique_sample_dev.jsonl"), counts, selection["seed"])]
    found = clusters.build_clusters(clusters.resolve_rule("auto", cohort), cohort)
    # the 67 test queries of musique-sample-v1: 58 clusters, 6 of them shared (3 pairs, 3 triples)
    assert clusters.structure(found) == {"queries": 67, "clusters": 58, "largest": 3, "singletons": 52,
                                         "sizes": {"1": 52, "2": 3, "3": 3}}
    assert ["2hop__57209_67668", "2hop__82766_67668", "2hop__84971_67668"] in found
    # all 2,417 official dev ids (the full-scale cohort): strongly clustered
    dev_ids = [r["id"] for r in _rows(SHARED_DATA / "musique-dev-metadata.jsonl")]
    full = clusters.structure(clusters.build_clusters(clusters.MUSIQUE_RULE, dev_ids))
    assert (full["queries"], full["clusters"], full["largest"], full["singletons"]) == (2417, 544, 58, 244)
