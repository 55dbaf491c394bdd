"""Tests of project (tests/README.md says which folder holds what)."""
