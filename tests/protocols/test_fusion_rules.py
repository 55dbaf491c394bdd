"""Fusion rules by name (protocols/fusion.py): a profile's `fusion` is read. The schema refuses a rule
nobody implements (exit 2 before anything runs), each side's table is checked against the declared
one at import, and the server's rule and the verifier's own recomputation agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from evaluator.verification import recompute as rc
from evaluator.verification.verifiers.lists import rescue as rescue_verifier
from protocols.committed import committed_file
from protocols.fusion import FUSION_RULES, check_fusion_bindings
from protocols.routes import PROFILES
from protocols.schema import ProtocolError, validate_protocol
from server.retrieval import fusion

REPO = Path(__file__).resolve().parents[2]


def protocol(name: str) -> dict:
    return json.loads(committed_file(f"{name}.json").read_text())


@pytest.mark.parametrize("where", [("weighted_rrf_v1",), ("graph_rescue_v1", "base")])
def test_a_profile_saying_combsum_is_refused(where):
    value = protocol("musique-sample-v2")
    target = value["ranking_profiles"]
    for key in where:
        target = target[key]
    target["fusion"] = "combsum"
    with pytest.raises(ProtocolError) as refused:
        validate_protocol(value)
    assert str(refused.value) == f"ranking_profiles.{'.'.join(where)}.fusion: 'combsum' is not one of " \
                                 f"'weighted_reciprocal_rank'"


def test_a_walk_base_fuses_like_a_profile_that_names_a_rule():
    value = protocol("musique-sample-v3")
    walk = next(name for name, p in value["ranking_profiles"].items() if p["family"] == "walk")
    value["ranking_profiles"][walk]["base"]["profile"] = "bm25_v1"
    with pytest.raises(ProtocolError, match=rf"ranking_profiles.{walk}.base.profile: 'bm25_v1' names no fusion rule"):
        validate_protocol(value)


def test_lab_import_refuses_combsum_before_writing(tmp_path):
    value = protocol("synthetic-v1")
    value["ranking_profiles"]["weighted_rrf_v2"]["fusion"] = "combsum"
    (tmp_path / "bad.json").write_text(json.dumps(value))
    done = subprocess.run([sys.executable, "-m", "lab", "import", "--protocol", "bad.json", "--data-dir", ".",
                           "--output", "out/source.json", "--relations", "out/relations.json"], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ranking_profiles.weighted_rrf_v2.fusion: 'combsum' is not one of" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]


def test_each_side_implements_exactly_the_declared_rules():
    for table in (fusion.FUSERS, rc.FUSERS, rescue_verifier.BASE_FUSERS):
        assert list(table) == list(FUSION_RULES)
    with pytest.raises(RuntimeError, match=r"side implements no fusion rule \['weighted_reciprocal_rank'\]"):
        check_fusion_bindings("side", {})
    with pytest.raises(RuntimeError, match=r"implements \['combsum'\], which protocols/fusion.py does not declare"):
        check_fusion_bindings("side", {**rc.FUSERS, "combsum": object()})


def test_the_server_rule_and_the_verifier_recomputation_agree():
    lexical, semantic = ["a", "b", "c", "d"], ["c", "e", "a"]
    for name in ("weighted_rrf_v1", "weighted_rrf_v2"):
        profile = PROFILES[name]
        served = fusion.fuse(profile["fusion"], profile, {"lexical": (lexical, [4.0, 3.0, 2.0, 1.0]),
                                                          "semantic": (semantic, [0.9, 0.8, 0.7])})
        weights = {c: spec["weight"] for c, spec in profile["channels"].items()}
        recomputed = rc.fuse(profile["fusion"], {"lexical": lexical, "semantic": semantic}, weights, profile["k"])
        assert [e.id for e in served] == rc.fused_order(recomputed)
        assert {e.id: Fraction(*e.score) for e in served} == {rid: Fraction(v["score"]) for rid, v in recomputed.items()}
