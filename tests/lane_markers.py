"""A pytest plugin for the lanes: every collected test's lane markers (`slow`, `heavy`) as pytest
resolved them, recorded before `-m` or `-k` deselects any, so one collection serves every lane
(tests/project/test_lanes.py). The session keeps them in its stash; `--print-lane-markers` also
prints one line per test (the lane test reads those from a `--collect-only` run when its own
session did not collect every test module)."""

from __future__ import annotations

import pytest

MARKED = "lane-markers: "
LANES = ("slow", "heavy")
OPTION = "--print-lane-markers"
RECORDED = pytest.StashKey[dict[str, frozenset[str]]]()


def pytest_addoption(parser) -> None:
    parser.addoption(OPTION, action="store_true", help="print every collected test's lane markers")


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
