"""Tests of server (tests/README.md says which folder holds what)."""
