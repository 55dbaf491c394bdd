"""HippoRAG-style personalized PageRank over an entity graph (docs/field-graphs.md)."""
