"""The typed-path family (route `graph`): bounded expansion from the base list's anchors along typed relations, proved paths (docs/retrieval.md)."""
