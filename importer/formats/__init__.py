"""The row formats the importer reads, one module each, behind one interface (`RowReader`).

A protocol names its format in `row_format` (absent: `musique_v1`); `reader_for(protocol)` returns
the reader, and the shared pipeline (importer.pipeline) does the rest: hash, stream, validate
every row, select, assemble the corpus and the queries. What differs between datasets lives here
and only here: which keys a row has, how its stratum is found, which paragraphs it supplies, and
how its judgments and evidence chain are read. The HippoRAG layout (formats/hipporag.py) reuses
the three readers with the documents taken from a separate corpus file (importer/passages.py).
"""

from __future__ import annotations

from importer.formats.base import RowReader, check_row_keys
from importer.formats.hipporag import HIPPORAG_HOTPOTQA, HIPPORAG_MUSIQUE, HIPPORAG_TWOWIKI
from importer.formats.hotpotqa import HOTPOTQA
from importer.formats.musique import MUSIQUE
from importer.formats.twowiki import TWOWIKI
from protocols.artifacts import row_format_of

READERS: dict[str, RowReader] = {
    reader.row_format.name: reader
    for reader in (MUSIQUE, HOTPOTQA, TWOWIKI, HIPPORAG_MUSIQUE, HIPPORAG_TWOWIKI, HIPPORAG_HOTPOTQA)
}


def reader_for(protocol: dict) -> RowReader:
    """The reader of the row format a (validated) protocol names."""
    return READERS[row_format_of(protocol).name]


__all__ = ["READERS", "RowReader", "check_row_keys", "reader_for"]
