"""The seeded-walk family (protocol v3): a truncated personalized PageRank over the typed graph, seeded by the fused base (docs/graph-v3.md)."""
