"""Design-cohort experiments: candidates scored on development rows before a protocol is frozen (never on test splits)."""
