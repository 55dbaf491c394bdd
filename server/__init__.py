"""The loopback lab server: RocksDB store, in-memory indexes, retrieval methods (see docs/serve.md)."""

import os

# One retrieval is one matrix-vector product over a few thousand rows: OpenBLAS worker threads
# only spin against the event loop and the other request (measured 40x slower on 2 busy cores).
# Set before numpy is first imported; an explicit setting by the user wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
