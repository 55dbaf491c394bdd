"""Independent verification: every page recomputed from the frozen inputs, one verifier per route."""
