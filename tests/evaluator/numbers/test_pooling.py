"""Suites and pooling: the suite format's refusals, the pooled bootstrap against a direct
implementation on toy reports, and every refusal of `lab pool`."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from evaluator.numbers import pooling, statistics
from ground.canonical import digest
from protocols.committed import SUITES_DIR, committed_file
from protocols.schema import load_protocol
from protocols.suite import SuiteError, load_suite, pinned_protocols, validate_suite
from tests.conftest import lab_cli

SAMPLE_PROTOCOL = committed_file("musique-sample-v1.json")
CONTRAST = {"candidate": "graph_hybrid_balanced", "baseline": "weighted_rrf_v2", "metric": "ndcg@10",
            "label": "confirmatory"}


def toy_report(seed: int, ids: list[str], shift: float) -> tuple[dict, dict]:
    """A report's rows (the two methods, every query) and a source with titles, enough to pool."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in ids:
        base = float(rng.integers(0, 9)) / 8
        cand = min(1.0, max(0.0, base + float(rng.integers(-2, 3)) / 8 + shift))
        for method, value in ((CONTRAST["candidate"], cand), (CONTRAST["baseline"], base)):
            rows.append({"query_id": q, "method": method, "metrics": {"ndcg@10": value}})
    protocol = {"evaluation": {"tie_tolerance": 1e-12}}
    # toy titles: query i is judged on "T<i // 3>", so every three consecutive ids share a title
    documents = [{"id": f"d{i}", "title": f"T{i // 3}"} for i in range(len(ids))]
    queries = [{"id": q, "judgments": {f"d{i}": 1}} for i, q in enumerate(ids)]
    return {"protocol": protocol, "plan": {"queries": ids}, "rows": rows}, {"documents": documents, "queries": queries}


def toy_datasets() -> list[pooling.DatasetDeltas]:
    specs = [("musique", [f"2hop__{i}_{i + 1}" for i in range(0, 40, 2)] + ["3hop1__1_500_501"], 0.02),
             ("hotpotqa", [f"5a{i:04x}" for i in range(13)], -0.01),
             ("2wiki", [f"c{i:03d}" for i in range(29)], 0.05)]
    out = []
    for k, (name, ids, shift) in enumerate(specs):
        report, source = toy_report(k + 1, ids, shift)
        out.append(pooling.dataset_deltas(name, report, source, CONTRAST))
    return out


def direct_pooled_interval(datasets, pooling_rule, seed) -> tuple[float, list[float]]:
    """The stratified paired bootstrap written out with plain loops."""
    total = sum(len(d.candidate) for d in datasets)
    weights = [1 / len(datasets) if pooling_rule["weights"] == "equal" else len(d.candidate) / total for d in datasets]
    groups = []
    for d in datasets:
        if pooling_rule["unit"] == "query":
            groups.append([[q] for q in sorted(d.candidate)])
        else:
            groups.append(d.clusters)
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(g), size=(pooling_rule["resamples"], len(g))) for g in groups]
    pooled = []
    for b in range(pooling_rule["resamples"]):
        value = 0.0
        for w, d, g, draw in zip(weights, datasets, groups, draws):
            picked = [q for c in draw[b] for q in g[c]]
            value += w * sum(d.candidate[q] - d.baseline[q] for q in picked) / len(picked)
        pooled.append(value)
    point = sum(w * sum(d.candidate[q] - d.baseline[q] for q in d.candidate) / len(d.candidate)
                for w, d in zip(weights, datasets))
    ordered = sorted(pooled)

    def percentile(p):
        position = (len(ordered) - 1) * p / 100
        low = math.floor(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    alpha = 1 - pooling_rule["confidence"]
    return point, [percentile(100 * alpha / 2), percentile(100 * (1 - alpha / 2))]


@pytest.mark.parametrize("unit", ["query", "cluster"])
@pytest.mark.parametrize("weights", ["equal", "query_count"])
def test_pooled_bootstrap_equals_a_direct_implementation_on_toy_reports(unit, weights):
    datasets = toy_datasets()
    rule = {"unit": unit, "weights": weights, "resamples": 400, "confidence": 0.9, "permutations": 10_000}
    result = pooling.pooled_contrast(datasets, rule, seed=31)
    point, interval = direct_pooled_interval(datasets, rule, 31)
    assert result["mean_delta"] == pytest.approx(point, abs=1e-12)
    assert result["interval"] == pytest.approx(interval, abs=1e-12)
    assert result["queries"] == 21 + 13 + 29
    # the toy titles make clusters of three in the title-rule datasets; one MuSiQue pair shares a component
    expected_units = 63 if unit == "query" else sum(len(d.clusters) for d in datasets)
    assert result["units"] == expected_units
    assert 0 < result["p_value"] <= 1 and result["detectable_effect"] > 0


def test_pooled_randomization_and_detectable_effect_follow_the_recipe():
    datasets = toy_datasets()
    rule = {"unit": "cluster", "weights": "query_count", "resamples": 100, "confidence": 0.95, "permutations": 10_000}
    result = pooling.pooled_contrast(datasets, rule, seed=5)
    w = [len(d.candidate) / 63 for d in datasets]
    parts = [pooling.units(d, "cluster") for d in datasets]
    values = np.concatenate([wd * s / m.sum() for wd, (s, m) in zip(w, parts)])
    assert (result["p_value"], result["p_method"]) == statistics.sign_flip_p(values, 5, 10_000)
    se = math.sqrt(sum((wd * statistics.standard_error(s, m)) ** 2 for wd, (s, m) in zip(w, parts)))
    assert result["detectable_effect"] == pytest.approx(statistics.detectable_factor() * se, rel=1e-12)


def test_one_dataset_pools_to_its_own_query_level_contrast():
    data = toy_datasets()[2]
    rule = {"unit": "query", "weights": "equal", "resamples": 500, "confidence": 0.95, "permutations": 10_000}
    pooled = pooling.pooled_contrast([data], rule, seed=9)
    alone = pooling.dataset_row(data, rule, 9, 1.0)
    assert pooled["interval"] == alone["interval"] and pooled["mean_delta"] == alone["mean_delta"]
    assert pooled["p_value"] == alone["p_value"]
    assert pooled["detectable_effect"] == pytest.approx(alone["detectable_effect"], rel=1e-12)


def test_the_pooled_result_shows_the_undeclared_unit_beside_the_declared_one():
    from evaluator.views.contrast_text import pooled_markdown

    datasets = toy_datasets()
    suite = {"suite_version": "suite-toy", "title": "toy", "primary_contrast": CONTRAST, "seed": 7,
             "pooling": {"rule": "stratified_paired_bootstrap_v1", "unit": "cluster", "weights": "equal",
                         "resamples": 300, "confidence": 0.95, "permutations": 10_000}}
    result = pooling.pool(suite, datasets, {d.name: {"path": d.name, "protocol_version": "v", "protocol_digest": "0"}
                                            for d in datasets})
    assert result["pooled"] == pooling.pooled_contrast(datasets, suite["pooling"], 7)
    query_rule = {**suite["pooling"], "unit": "query"}
    assert result["pooled_other_unit"] == {"unit": "query", **pooling.pooled_contrast(datasets, query_rule, 7)}
    row = pooled_markdown(result).splitlines()
    pooled_row = next(line for line in row if line.startswith("| pooled (equal weights, clusters)"))
    low, high = result["pooled_other_unit"]["interval"]
    assert f"([{low:+.3f}, {high:+.3f}])" in pooled_row  # the query interval, in parentheses
    low, high = result["pooled"]["interval"]
    assert f"| [{low:+.3f}, {high:+.3f}] |" in pooled_row


def test_toy_clusters_follow_each_datasets_rule():
    musique, hotpot, wiki = toy_datasets()
    assert musique.cluster_rule == "musique_single_hop_components_v1"
    assert hotpot.cluster_rule == wiki.cluster_rule == "supporting_titles_v1"
    assert [len(c) for c in hotpot.clusters] == [3, 3, 3, 3, 1]
    assert ["2hop__0_1", "3hop1__1_500_501"] in musique.clusters  # they share single-hop question 1
    assert len(musique.clusters) == 20


# ---------------------------------------------------------------- the suite format


def suite_value(protocol_digest: str) -> dict:
    return {"format": "graph_evaluation_suite_v1", "suite_version": "suite-test", "title": "test suite",
            "datasets": [{"name": "musique", "protocol": "musique-sample-v1.json", "protocol_digest": protocol_digest}],
            "primary_contrast": dict(CONTRAST),
            "pooling": {"rule": "stratified_paired_bootstrap_v1", "unit": "query", "weights": "equal",
                        "resamples": 2000, "confidence": 0.95, "permutations": 10000},
            "seed": 20260921}


SAMPLE_DIGEST = digest(json.loads(SAMPLE_PROTOCOL.read_text()))


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.update(format="suite_v0"), "format: 'suite_v0' is not one of"),
    (lambda s: s["datasets"].clear(), "datasets: must not be empty"),
    (lambda s: s["datasets"].append(dict(s["datasets"][0])), "datasets.name[1]: duplicate"),
    (lambda s: s["datasets"][0].update(protocol="../x.json"), "datasets[0].protocol: must be a plain file name"),
    (lambda s: s["datasets"][0].update(protocol_digest="abc"), "datasets[0].protocol_digest: expected 64"),
    (lambda s: s["primary_contrast"].update(baseline=s["primary_contrast"]["candidate"]), "primary_contrast.baseline: must differ"),
    (lambda s: s["primary_contrast"].pop("metric"), "primary_contrast.metric: missing field"),
    (lambda s: s["primary_contrast"].update(label="exploratory"), "primary_contrast.label: 'exploratory' is not one of"),
    (lambda s: s["pooling"].update(unit="document"), "pooling.unit: 'document' is not one of"),
    (lambda s: s["pooling"].update(weights="by_size"), "pooling.weights: 'by_size' is not one of"),
    (lambda s: s["pooling"].update(permutations=999), "pooling.permutations: must be >= 10000"),
    (lambda s: s["pooling"].update(confidence=1.0), "pooling.confidence: must lie strictly between 0 and 1"),
    (lambda s: s.update(seed=-1), "seed: must be >= 0"),
    (lambda s: s.update(extra=1), "extra: unexpected field"),
])
def test_suite_refusals_name_the_field(edit, message):
    value = suite_value(SAMPLE_DIGEST)
    edit(value)
    with pytest.raises(SuiteError) as caught:
        validate_suite(value)
    assert str(caught.value).startswith(message), str(caught.value)


def test_pinned_protocols_check_digest_methods_and_metric(tmp_path):
    (tmp_path / "musique-sample-v1.json").write_bytes(SAMPLE_PROTOCOL.read_bytes())
    suite_path = tmp_path / "suite.json"
    assert list(pinned_protocols(suite_value(SAMPLE_DIGEST), suite_path)) == ["musique"]
    with pytest.raises(SuiteError, match="the suite pins"):
        pinned_protocols(suite_value("0" * 64), suite_path)
    other = suite_value(SAMPLE_DIGEST)
    other["primary_contrast"]["candidate"] = "graph_rescue"
    with pytest.raises(SuiteError, match="'graph_rescue' is not a method"):
        pinned_protocols(other, suite_path)
    other = suite_value(SAMPLE_DIGEST)
    other["primary_contrast"]["metric"] = "recall@2"
    with pytest.raises(SuiteError, match="not among the contrast metrics"):
        pinned_protocols(other, suite_path)


def test_every_shipped_suite_validates_and_pins_existing_protocols():
    suites = sorted(SUITES_DIR.glob("suite-*.json"))
    assert committed_file("suite-samples-v1.json") in suites
    for path in suites:
        pinned_protocols(load_suite(path), path)


def test_the_samples_suite_pins_the_current_sample_protocols():
    committed = committed_file("suite-samples-v1.json")
    suite = load_suite(committed)
    names = ["musique-sample-v1.json", "hotpotqa-sample-v1.json", "2wikimultihopqa-sample-v1.json"]
    assert [d["protocol"] for d in suite["datasets"]] == names
    assert [d["protocol_digest"] for d in suite["datasets"]] == [
        digest(load_protocol(committed_file(name))) for name in names]
    assert suite["primary_contrast"] == CONTRAST


def test_the_graph_v3_suite_declares_its_secondary_contrast():
    # both suites are derived byte for byte from their declaration: tests/protocols/test_protocol_registry.py
    suite = load_suite(committed_file("suite-graph-v3.json"))
    assert [c["baseline"] for c in suite["secondary_contrasts"]] == ["graph_hybrid_balanced"]


# ---------------------------------------------------------------- the command's refusals (exit 2)


@pytest.fixture
def pool_cli():
    """`lab pool` in-process (its argparse, its run wrapper): exit code and stderr."""
    return lambda *args: lab_cli("pool", *args, check=False)


@pytest.fixture
def two_dataset_suite(tmp_path):
    """A suite of two datasets (the sample protocol and a renamed copy) and a run directory holding a
    stub report for each."""
    first = json.loads(SAMPLE_PROTOCOL.read_text())
    second = copy.deepcopy(first)
    second["protocol_version"] = "musique-sample-copy"
    (tmp_path / "musique-sample-v1.json").write_text(json.dumps(first))
    (tmp_path / "copy.json").write_text(json.dumps(second))
    suite = suite_value(digest(first))
    suite["datasets"].append({"name": "copy", "protocol": "copy.json", "protocol_digest": digest(second)})
    suite_path = tmp_path / "suite.json"
    suite_path.write_text(json.dumps(suite))
    reports = {}
    for name, protocol in (("a", first), ("b", second), ("stray", {"other": 1})):
        path = tmp_path / name / "report.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"hash_chain": {"protocol": digest(protocol)}}))
        reports[name] = path.parent
    return suite_path, reports


def refused(result, *fragments: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_pool_refuses_a_report_whose_protocol_the_suite_does_not_pin(two_dataset_suite, tmp_path, pool_cli):
    suite, reports = two_dataset_suite
    result = pool_cli("--suite", suite, "--runs", reports["a"], reports["b"], reports["stray"], "--output-dir", tmp_path / "out")
    refused(result, "is not pinned by suite suite-test")
    assert not (tmp_path / "out").exists()


def test_pool_refuses_a_missing_dataset(two_dataset_suite, tmp_path, pool_cli):
    suite, reports = two_dataset_suite
    refused(pool_cli("--suite", suite, "--runs", reports["a"], "--output-dir", tmp_path / "out"),
            "no report for dataset(s) copy")
    assert not (tmp_path / "out").exists()


def test_pool_refuses_an_extra_report_for_a_dataset(two_dataset_suite, tmp_path, pool_cli):
    suite, reports = two_dataset_suite
    refused(pool_cli("--suite", suite, "--runs", reports["a"], reports["b"], reports["a"], "--output-dir", tmp_path / "out"),
            "dataset musique is given twice")
    assert not (tmp_path / "out").exists()


def test_pool_refuses_an_existing_output(two_dataset_suite, tmp_path, pool_cli):
    suite, reports = two_dataset_suite
    (tmp_path / "out").mkdir()
    refused(pool_cli("--suite", suite, "--runs", reports["a"], reports["b"], "--output-dir", tmp_path / "out"),
            "refusing to overwrite")


def test_pool_refuses_a_protocol_file_that_no_longer_has_its_digest(two_dataset_suite, tmp_path, pool_cli):
    suite, reports = two_dataset_suite
    edited = json.loads((suite.parent / "copy.json").read_text())
    edited["title"] = "edited after the suite was pinned"
    (suite.parent / "copy.json").write_text(json.dumps(edited))
    refused(pool_cli("--suite", suite, "--runs", reports["a"], reports["b"], "--output-dir", tmp_path / "out"),
            "the suite pins")
