"""A pytest plugin for the lanes: every collected test's lane markers (`slow`, `heavy`) as pytest
resolved them, recorded before `-m` or `-k` deselects any, so one collection serves every lane
(tests/project/test_lanes.py), and the modules with heavy tests put first. The session keeps the
markers in its stash; `--print-lane-markers` also prints one line per test (the lane test reads
those from a `--collect-only` run when its own session did not collect every test module)."""

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
    # The modules holding a heavy test first, each module's tests in their own order: pytest-xdist
    # hands out whole modules in this order, so the long ones start early and the short ones fill
    # the end, rather than a long one starting last while the other worker has nothing left.
    heavy = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("heavy")}
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in heavy)


def pytest_collection_finish(session) -> None:
    if not session.config.getoption(OPTION):
        return
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    for node, marks in session.config.stash.get(RECORDED, {}).items():
        terminal.write_line(f"{MARKED}{','.join(sorted(marks))}\t{node}")  # a node id may hold spaces
