"""A toy method family, added to a copy of the repository by tests/lab/test_extend_a_method.py through
the steps of docs/extend-a-method.md: each file here is what one step writes."""
