"""Whole campaigns run end to end by the lab command (a family's, a suite's, a second host's cluster)."""
