"""Tests of importer (tests/README.md says which folder holds what)."""
