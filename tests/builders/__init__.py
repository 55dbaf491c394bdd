"""Tests of builders (tests/README.md says which folder holds what)."""
