"""The row formats the importer reads, one module each, behind one interface (`RowReader`).

A protocol names its format in `row_format` (absent: `musique_v1`); `reader_for(protocol)` returns
the reader, and the shared pipeline (importer.pipeline) does the rest: hash, stream, validate
every row, select, assemble the corpus and the queries. What differs between datasets lives here
and only here: which keys a row has, how its stratum is found, which paragraphs it supplies, and
how its judgments and evidence chain are read. The HippoRAG layout (formats/hipporag.py) reuses
the three readers with the documents taken from a separate corpus file (importer/passages.py).

Each format's declaration (ground/artifacts.py `ROW_FORMATS`) names the module that reads it;
`READERS` is bound from those modules' own `READERS` at import and checked against the
declarations, so a declared format without its reader, or a reader of an undeclared or other
format, stops the import (adding a format: docs/extend-a-format.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ground.artifacts import ROW_FORMATS, RowFormat, check_format_bindings, row_format_of
from importer.formats.base import RowReader, check_row_keys


def bind_readers(formats: Mapping[str, RowFormat]) -> dict[str, RowReader]:
    """Each declared format's reader, taken from the module its declaration names, in table order."""
    found: dict[str, RowReader] = {}
    for module in dict.fromkeys(row_format.reader for row_format in formats.values()):
        for reader in getattr(importlib.import_module(f"{__name__}.{module}"), "READERS", ()):
            name = reader.row_format.name
            declared = formats.get(name)
            if declared is not None and (declared.reader != module or reader.row_format != declared):
                raise RuntimeError(f"importer/formats/{module}.py reads {name}, which ground/artifacts.py "
                                   f"declares otherwise (read by importer/formats/{declared.reader}.py)")
            if name in found:
                raise RuntimeError(f"importer/formats/{module}.py: two readers of {name}")
            found[name] = reader
    check_format_bindings("importer/formats", found, formats)
    return {name: found[name] for name in formats}


READERS: dict[str, RowReader] = bind_readers(ROW_FORMATS)


def reader_for(protocol: dict) -> RowReader:
    """The reader of the row format a (validated) protocol names."""
    return READERS[row_format_of(protocol).name]


__all__ = ["READERS", "RowReader", "bind_readers", "check_row_keys", "reader_for"]
