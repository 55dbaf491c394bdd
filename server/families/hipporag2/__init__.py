"""HippoRAG 2's retrieval without its recognition filter (protocols/families/graphs/hipporag2.py, docs/hipporag2.md)."""
