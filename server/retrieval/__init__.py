"""In-memory indexes and the frozen retrieval methods (BM25, cosine, RRF fusion, typed paths)."""
