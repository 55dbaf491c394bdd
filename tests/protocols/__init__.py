"""Tests of protocols (tests/README.md says which folder holds what)."""
