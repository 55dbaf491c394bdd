"""LinearRAG without a language model at any step (protocols/families/linearrag.py, docs/linearrag.md)."""
