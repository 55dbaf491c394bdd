"""HippoRAG 2's retrieval without its recognition filter (protocols/families/hipporag2.py, docs/hipporag2.md)."""
