"""A pytest plugin for tests/project/test_lanes.py: after collection, one line per test with the
lane markers pytest resolved for it (`slow`, `heavy`), so one collection serves every lane."""

from __future__ import annotations

MARKED = "lane-markers: "
LANES = ("slow", "heavy")


def pytest_collection_finish(session) -> None:
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    for item in session.items:
        marks = sorted({mark.name for mark in item.iter_markers()} & set(LANES))
        terminal.write_line(f"{MARKED}{','.join(marks)}\t{item.nodeid}")  # a node id may hold spaces
