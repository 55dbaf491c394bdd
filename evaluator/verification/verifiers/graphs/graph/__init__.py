"""The typed-path family's verifier (route `graph`): the expansion recomputed in exact rationals."""
