"""Tests of evaluator (tests/README.md says which folder holds what)."""
