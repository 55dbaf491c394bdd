"""The pseudo-relevance feedback family (docs/prf.md): RM3, Rocchio and their fusion."""
