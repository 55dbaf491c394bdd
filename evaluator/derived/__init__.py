"""The private report and every block derived from its rows (depth, reach, rescue, ANN agreement)."""
