"""The approximate-nearest-neighbour lane (`cosine_hnsw_v1`): faiss HNSW, exact rescoring (docs/scale.md)."""
