"""A family's flag of `lab protocol new` is declared once, by its route (protocols/route.py ProtocolFlag):
the command's flags, their help and their order come from the declarations, and the command and
protocols/new.py name no family flag of their own."""

from __future__ import annotations

import argparse
import copy

import pytest

from ground.errors import RefusedInput
from protocols.committed import committed_file
from protocols.derivations.method_family import AddMethodFamily
from protocols.families.graphs import walk
from protocols.new import TEMPLATES, add_family, builds_graph, new_protocol
from protocols.protocol_commands import _new_configure
from protocols.route import ProtocolFlag
from protocols.routes import PROTOCOL_FLAGS, ROUTES
from protocols.schema import load_protocol
from tests.conftest import REPO


def test_the_routes_declare_the_flags_the_command_offers():
    assert [flag.name for flag in PROTOCOL_FLAGS] == ["ner-graph", "linearrag"]
    parser = argparse.ArgumentParser()
    _new_configure(parser)
    offered = {action.option_strings[0]: action.help for action in parser._actions if action.option_strings}
    for flag in PROTOCOL_FLAGS:
        assert offered[f"--{flag.name}"] == flag.help
    assert [route.family for route in ROUTES.values() if route.protocol_flag] == ["hipporag_ner", "linearrag"]


def test_the_command_and_new_name_no_family_flag():
    for path in ("protocols/new.py", "protocols/protocol_commands.py"):
        text = (REPO / path).read_text()
        assert [flag.name for flag in PROTOCOL_FLAGS if flag.name in text or flag.name.replace("-", "_") in text] == []


def test_only_a_step_with_a_graph_of_its_own_goes_not_with_an_imported_graph():
    assert [flag.name for flag in PROTOCOL_FLAGS if builds_graph(flag)] == ["ner-graph"]


def test_a_flag_adds_its_familys_step_with_requires_held_to_the_template():
    template = load_protocol(committed_file(TEMPLATES["musique_v1"]))
    fields = {**walk.ENTITY_WALK_STEP, "requires": {**walk.ENTITY_WALK_STEP["requires"], "absent": "no_such_v1"}}
    toy = ProtocolFlag("toy", "a toy flag", lambda dataset: fields)
    added = add_family(copy.deepcopy(template), toy, "musique", "mine-v1")
    direct = AddMethodFamily(**walk.ENTITY_WALK_STEP).derive(copy.deepcopy(template), "mine-v1")
    assert added == direct and "graph_entity_walk" in added["methods"]
    with pytest.raises(RefusedInput, match="no method 'graph_walk' with profile 'other_v1'"):
        wrong = {**fields, "requires": {"graph_walk": "other_v1"}}
        add_family(copy.deepcopy(template), ProtocolFlag("toy", "", lambda dataset: wrong), "musique", "mine-v1")


def test_an_unknown_family_flag_is_refused(tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text("")
    with pytest.raises(RefusedInput, match="no family flag --toy"):
        new_protocol(questions=questions, corpus=None, layout="musique_v1", test="all", development=None,
                     version="mine-v1", families=["toy"])
