"""The external graph formats the importer reads, one module each, one registry (docs/graph-import.md).

Each module's `READERS` maps the format names it reads (declared in protocols/graph_file.py, with
the roles of their files) to a function `read(paths) -> list[GraphPassage]`: every passage the
graph holds, with the key that matches it to the corpus and its raw triples. What is common to all
formats (the triple rules, matching, the passage policy, counts) lives in importer/graph_import.py.
The registry is checked against the declarations at import: a declared format without a reader,
or a reader of an undeclared format, stops the import.
"""

from __future__ import annotations

import importlib

from importer.graph_formats.base import GraphPassage, Reader
from protocols.graph_file import GRAPH_FORMATS

MODULES = ("hipporag_openie", "graphrag_parquet", "lab_triples")


def bind_readers() -> dict[str, Reader]:
    found: dict[str, Reader] = {}
    for module in MODULES:
        for name, reader in importlib.import_module(f"{__name__}.{module}").READERS.items():
            if name in found:
                raise RuntimeError(f"importer/graph_formats/{module}.py: a second reader of {name}")
            found[name] = reader
    missing = sorted(set(GRAPH_FORMATS) - set(found))
    unknown = sorted(set(found) - set(GRAPH_FORMATS))
    if missing or unknown:
        raise RuntimeError(f"importer/graph_formats binds readers {sorted(found)}; protocols/graph_file.py "
                           f"declares {sorted(GRAPH_FORMATS)} (missing {missing}, undeclared {unknown})")
    return {name: found[name] for name in GRAPH_FORMATS}


READERS: dict[str, Reader] = bind_readers()

__all__ = ["READERS", "GraphPassage", "Reader"]
