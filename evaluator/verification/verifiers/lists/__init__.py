"""The verifiers of families whose page ranks passages by scores recomputed from the channels (BM25, exact
cosine, their fusion, an expanded query, an ANN index, a rescued title)."""
