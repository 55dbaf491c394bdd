"""protocols/: digests against the published vectors, atomic saves, the protocol schema's refusals."""

from __future__ import annotations

import copy
import json
import math
import os

import pytest

from protocols import RefusedInput, canonical, digest, load_json, refuse_existing, refuse_same_path, save
from protocols.schema import ProtocolError, load_protocol, validate_protocol
from tests.conftest import REPO, SHARED_DATA, require_shared

OFFICIAL = REPO / "protocols" / "graph-multihop-protocol-v1.json"
PROTOCOL_FILES = sorted((REPO / "protocols").glob("*.json"))


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
