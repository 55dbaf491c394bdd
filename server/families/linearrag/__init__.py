"""LinearRAG without a language model at any step (protocols/families/graphs/linearrag.py, docs/linearrag.md)."""
