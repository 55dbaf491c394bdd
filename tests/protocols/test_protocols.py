"""protocols/: digests against the published vectors, atomic saves, the protocol schema's refusals."""

from __future__ import annotations

import copy
import json
import math
import os

import pytest

from ground import canonical
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, refuse_same_path, save
from protocols.committed import SUITES_DIR, committed_file, committed_protocols
from protocols.schema import ProtocolError, load_protocol, validate_protocol
from tests.conftest import SHARED_DATA, require_shared

OFFICIAL = committed_file("graph-multihop-protocol-v1.json")
PROTOCOL_FILES = sorted(p for p in committed_protocols() if p.parent != SUITES_DIR)


# --- canonical JSON and digests --------------------------------------------------------------

def test_digest_test_vectors():
    require_shared()
    vectors = json.loads((SHARED_DATA / "reference-cohort.json").read_text())["digest_test_vectors"]
    assert len(vectors) >= 3
    for expression, expected in vectors.items():
        assert expression.startswith("digest(") and expression.endswith(")")
        value = json.loads(expression[len("digest("):-1])
        assert digest(value) == expected, expression


def test_canonical_form():
    assert canonical({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'.encode()
    with pytest.raises(ValueError):
        canonical({"x": math.nan})


# --- save and refusals -----------------------------------------------------------------------

def test_save_writes_indented_json_with_newline(tmp_path):
    path = tmp_path / "deep" / "out.json"
    save(path, {"b": "é", "a": 1})
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and '"b": "é"' in text and text.startswith("{\n  ")
    assert load_json(path) == {"b": "é", "a": 1}


def test_failed_save_leaves_no_file_and_no_temp(tmp_path):
    path = tmp_path / "out.json"
    with pytest.raises(ValueError):
        save(path, {"x": math.inf})
    assert os.listdir(tmp_path) == []


def test_failed_save_keeps_the_previous_file_whole(tmp_path):
    path = tmp_path / "out.json"
    save(path, {"v": 1})
    with pytest.raises(ValueError):
        save(path, {"v": math.nan})
    assert load_json(path) == {"v": 1}
    assert os.listdir(tmp_path) == ["out.json"]


def test_refuse_existing_and_same_path(tmp_path):
    existing = tmp_path / "a.json"
    existing.write_text("{}")
    with pytest.raises(RefusedInput, match="refusing to overwrite"):
        refuse_existing(tmp_path / "fresh.json", existing)
    dangling = tmp_path / "link.json"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(RefusedInput):
        refuse_existing(dangling)
    refuse_existing(tmp_path / "fresh.json")
    with pytest.raises(RefusedInput, match="same path"):
        refuse_same_path(output=tmp_path / "x.json", relations=tmp_path / "sub" / ".." / "x.json")
    # both roles are named as the flags the user typed
    with pytest.raises(RefusedInput, match="^--output and --public-report name the same path"):
        refuse_same_path(output=tmp_path / "x.json", public_report=tmp_path / "x.json")


def test_load_json_refuses_missing_malformed_and_nan(tmp_path):
    with pytest.raises(RefusedInput, match="not found"):
        load_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": ')
    with pytest.raises(RefusedInput, match="not valid JSON"):
        load_json(bad)
    bad.write_text('{"a": NaN}')
    with pytest.raises(RefusedInput, match="not valid JSON"):
        load_json(bad)


# --- protocol schema ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", PROTOCOL_FILES, ids=lambda p: p.name)
def test_every_shipped_protocol_validates(path):
    assert load_protocol(path)["protocol_version"]


def _official() -> dict:
    return json.loads(OFFICIAL.read_text())


# Objects whose keys are free names (splits, methods, profiles): their entries are not "fields".
FREE_MAPS = {"source_files", "selection.splits", "selection.expected_ids", "methods", "ranking_profiles"}


def _field_paths(value, path=""):
    """Every object key of the protocol except inside ranking profiles (checked on their own)."""
    if not isinstance(value, dict) or path == "ranking_profiles":
        return
    for key, child in value.items():
        child_path = f"{path}.{key}" if path else key
        if path not in FREE_MAPS:
            yield child_path
        yield from _field_paths(child, child_path)


def _parent_and_key(protocol: dict, path: str):
    *parents, key = path.split(".")
    node = protocol
    for part in parents:
        node = node[part]
    return node, key


FIELD_PATHS = sorted(set(_field_paths(_official())))


def test_field_paths_cover_the_protocol():
    assert "selection.splits.test.counts.3" in FIELD_PATHS
    assert "methods.graph_hybrid_balanced.expansion.max_depth" in FIELD_PATHS
    assert "evaluation.primary_contrast.candidate" in FIELD_PATHS
    assert len(FIELD_PATHS) > 60


@pytest.mark.parametrize("path", FIELD_PATHS)
def test_missing_field_is_named(path):
    protocol = _official()
    parent, key = _parent_and_key(protocol, path)
    del parent[key]
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    assert f"{path}: missing field" in str(caught.value)


def _mistyped(value):
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return {"not": "a list"}
    return ["not", "an object"]


@pytest.mark.parametrize("path", FIELD_PATHS)
def test_mistyped_field_is_named(path):
    protocol = _official()
    parent, key = _parent_and_key(protocol, path)
    parent[key] = _mistyped(parent[key])
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    assert str(caught.value).startswith(f"{path}: expected")


def _edit(edit):
    protocol = _official()
    edit(protocol)
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    return str(caught.value)


def test_semantic_refusals_name_field_and_reason():
    assert _edit(lambda p: p["selection"]["splits"]["test"]["counts"].update({"3": -1})) == \
        "selection.splits.test.counts.3: must be >= 0, got -1"
    assert _edit(lambda p: p["selection"]["splits"]["test"]["counts"].update({"5": 1})) == \
        "selection.splits.test.counts.5: unexpected field"
    assert _edit(lambda p: p["selection"]["splits"]["test"]["counts"].update({"3": True})).startswith(
        "selection.splits.test.counts.3: expected an integer")
    assert "is not a ranking profile" in _edit(lambda p: p["methods"]["lexical"].update(profile="bm99"))
    assert "needs 'hybrid'" in _edit(lambda p: p["methods"]["weighted_rrf_v2"].update(profile="bm25_v1"))
    assert _edit(lambda p: p["methods"]["lexical"].update(route="teleport")).startswith("methods.lexical.route:")
    assert _edit(lambda p: p["methods"].pop("weighted_rrf_v2")).startswith("evaluation.primary_contrast.baseline:")
    assert _edit(lambda p: p["evaluation"].update(split="holdout")).startswith("evaluation.split:")
    assert _edit(lambda p: p["selection"].update(version="v0")).startswith("selection.version:")
    assert _edit(lambda p: p["source_files"]["dev"].update(sha256="ABC")).startswith("source_files.dev.sha256:")
    assert _edit(lambda p: p["source_files"]["dev"].update(name="../x.jsonl")).startswith("source_files.dev.name:")
    assert _edit(lambda p: p.update(extra=1)) == "extra: unexpected field"
    assert "must differ" in _edit(lambda p: p["evaluation"]["primary_contrast"].update(baseline="graph_hybrid_balanced"))


def test_expected_ids_null_or_lists_agreeing_with_counts():
    protocol = _official()
    protocol["selection"]["expected_ids"] = None
    validate_protocol(protocol)
    protocol["selection"]["expected_ids"] = {"test": None, "development": None}
    validate_protocol(protocol)
    msg = _edit(lambda p: p["selection"]["expected_ids"]["test"].pop())
    assert msg.startswith("selection.expected_ids.test: holds 29 4-hop ids, counts ask for 30")
    msg = _edit(lambda p: p["selection"]["expected_ids"]["test"].__setitem__(0, "1hop__1"))
    assert msg.startswith("selection.expected_ids.test[0]: unknown hop prefix")
    msg = _edit(lambda p: p["selection"]["expected_ids"].update(holdout=[]))
    assert msg == "selection.expected_ids.holdout: unexpected field"


def test_load_protocol_refuses_missing_and_malformed_files(tmp_path):
    with pytest.raises(ProtocolError, match="not found"):
        load_protocol(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ProtocolError, match="not valid JSON"):
        load_protocol(bad)
    broken = copy.deepcopy(_official())
    del broken["evaluation"]["k"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(ProtocolError, match=r"broken\.json: evaluation\.k: missing field"):
        load_protocol(path)
    assert issubclass(ProtocolError, RefusedInput)


V2 = committed_file("graph-multihop-protocol-v2.json")


@pytest.mark.parametrize("edit, message", [
    (lambda a: a.update(budget_curve="4000"), "evaluation.exploratory_analyses.budget_curve: expected an object"),
    (lambda a: a["budget_curve"].pop("budgets"), "evaluation.exploratory_analyses.budget_curve.budgets: missing field"),
    (lambda a: a["budget_curve"].update(budgets=[4000, 2000]), "evaluation.exploratory_analyses.budget_curve.budgets[1]: out of order"),
    (lambda a: a["oracle_bound"].update(methods=["nope"]), "evaluation.exploratory_analyses.oracle_bound.methods[0]: 'nope' is not a method"),
    (lambda a: a.update(label="confirmatory"), "evaluation.exploratory_analyses.label: 'confirmatory' is not one of"),
])
def test_v2_exploratory_analyses_refusals_name_the_field(edit, message):
    protocol = json.loads(V2.read_text())
    edit(protocol["evaluation"]["exploratory_analyses"])
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    assert str(caught.value).startswith(message), str(caught.value)


@pytest.mark.parametrize("evaluation, message", [
    ({"randomization": {"permutations": 9999}}, "evaluation.randomization.permutations: must be >= 10000"),
    ({"randomization": {}}, "evaluation.randomization.permutations: missing field"),
    ({"randomization": {"permutations": 20000, "seed": 1}}, "evaluation.randomization.seed: unexpected field"),
    ({"clusters": {"rule": "by_answer"}}, "evaluation.clusters.rule: 'by_answer' is not one of"),
    ({"clusters": {"primary_interval": "both"}}, "evaluation.clusters.primary_interval: 'both' is not one of"),
    ({"clusters": []}, "evaluation.clusters: expected an object"),
])
def test_optional_statistics_fields_are_checked(evaluation, message):
    protocol = _official()
    protocol["evaluation"].update(evaluation)
    with pytest.raises(ProtocolError) as caught:
        validate_protocol(protocol)
    assert str(caught.value).startswith(message), str(caught.value)


def test_optional_statistics_fields_accept_their_documented_values():
    protocol = _official()
    protocol["evaluation"].update(randomization={"permutations": 100000},
                                  clusters={"rule": "supporting_titles_v1", "primary_interval": "cluster"})
    assert validate_protocol(protocol) is protocol
    protocol["evaluation"]["clusters"] = {}  # every key optional: the defaults apply
    assert validate_protocol(protocol) is protocol


# --- source.json validation (ground.artifacts.validate_source) --------------------------------

def _source() -> dict:
    from tests.builders.test_embedding import make_source  # a small valid source.json value
    return make_source()


def _swap_first_documents(s):
    s["documents"][0], s["documents"][1] = s["documents"][1], s["documents"][0]


@pytest.mark.parametrize("edit, message", [
    (_swap_first_documents, "documents[1]: out of order document id"),
    (lambda s: s["documents"][0].update(text="other"), "documents[0].text: must be title"),
    (lambda s: s["queries"][0]["judgments"].update({"musique-" + "f" * 64: 1}), "queries[0].judgments.musique-fff"),
    (lambda s: s["queries"][0]["evidence_chain"].append(s["documents"][-1]["id"]), "queries[0].evidence_chain[2]: "),
    (lambda s: s["queries"][0].update(hop=3), "queries[0].hop: must be 2"),
    (lambda s: s["counts"].update(documents=1), "counts.documents: expected"),
    (lambda s: s["selection"]["splits"]["test"]["counts"].update({"2": 9}), "selection.splits.test.counts.2: 9 queries requested"),
    (lambda s: s["selection"]["selected_ids"]["test"].pop(), "selection.selected_ids.test: differs"),
    (lambda s: s["selection"].update(order=[]), "selection.order: must not be empty"),
    (lambda s: s["judgment_policy"].update(judgments_complete=True), "judgment_policy.judgments_complete: must be false"),
    (lambda s: s["dataset"].pop("license"), "dataset.license: missing field"),
])
def test_validate_source_refusals_name_the_field(edit, message):
    from ground.artifacts import SourceError, validate_source
    source = _source()
    validate_source(source)
    edit(source)
    with pytest.raises(SourceError) as caught:
        validate_source(source)
    assert str(caught.value).startswith(message), str(caught.value)


def test_save_writes_indented_json_or_compact_json_of_the_same_value(tmp_path):
    value = {"b": [1, 2.5, {"c": "é"}], "a": None}
    save(tmp_path / "indented.json", value)
    save(tmp_path / "compact.json", value, compact=True)
    assert (tmp_path / "indented.json").read_text(encoding="utf-8") == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    assert (tmp_path / "compact.json").read_text(encoding="utf-8") == '{"b":[1,2.5,{"c":"é"}],"a":null}\n'
    with pytest.raises(ValueError):
        save(tmp_path / "nan.json", {"x": math.nan}, compact=True)
    assert not (tmp_path / "nan.json").exists()
