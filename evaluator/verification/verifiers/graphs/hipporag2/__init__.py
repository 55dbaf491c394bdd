"""HippoRAG 2's verifiers, both routes over one recomputed graph table (`hipporag2`, `hipporag_ner`)."""
