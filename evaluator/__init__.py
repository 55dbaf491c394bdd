"""evaluator stage of the lab (see docs/contracts.md)."""
