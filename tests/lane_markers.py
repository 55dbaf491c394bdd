"""A pytest plugin for the lanes: every collected test's lane markers (`slow`, `heavy`) as pytest
resolved them, recorded before `-m` or `-k` deselects any, so one collection serves every lane
(tests/project/test_lanes.py). The session keeps them in its stash; `--print-lane-markers` also
prints one line per test (the lane test reads those from a `--collect-only` run when its own
session did not collect every test module).

It also holds the fast lane to one rule it can check without a clock: a test that loads a model's
library (sentence-transformers, which brings torch and scikit-learn, or spaCy: seconds to import)
is `heavy`. A test without the marker that imports one, in its fixtures or its body, fails and
says so. Only the first import in a worker process is seen, so the check never blames a test
wrongly, though one that runs after another importer of the same library goes unseen."""

from __future__ import annotations

import sys

import pytest

MARKED = "lane-markers: "
LANES = ("slow", "heavy")
OPTION = "--print-lane-markers"
RECORDED = pytest.StashKey[dict[str, frozenset[str]]]()
LOADED_BEFORE = pytest.StashKey[frozenset[str]]()
MODEL_LIBRARIES = "model_libraries"


def pytest_addoption(parser) -> None:
    parser.addoption(OPTION, action="store_true", help="print every collected test's lane markers")
    parser.addini(MODEL_LIBRARIES, "modules whose import makes a test heavy", type="linelist",
                  default=["sentence_transformers", "spacy"])


def _loaded(config) -> frozenset[str]:
    return frozenset(name for name in config.getini(MODEL_LIBRARIES) if name in sys.modules)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    item.stash[LOADED_BEFORE] = _loaded(item.config)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    imported = _loaded(item.config) - item.stash.get(LOADED_BEFORE, frozenset())
    if imported and not item.config.stash[RECORDED].get(item.nodeid):  # the lane markers collection recorded
        pytest.fail(f"{item.nodeid} imports {', '.join(sorted(imported))}, a model's library (seconds to load): "
                    "mark it @pytest.mark.heavy with the reason, or keep the load out of it", pytrace=False)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    config.stash[RECORDED] = {item.nodeid: frozenset(mark.name for mark in item.iter_markers()) & set(LANES)
                              for item in items}


def pytest_collection_finish(session) -> None:
    if not session.config.getoption(OPTION):
        return
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    for node, marks in session.config.stash.get(RECORDED, {}).items():
        terminal.write_line(f"{MARKED}{','.join(sorted(marks))}\t{node}")  # a node id may hold spaces
