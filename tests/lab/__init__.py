"""Tests of lab (tests/README.md says which folder holds what)."""
