"""Every ranking profile, frozen by name, one module per family: the v1 routes' (v1.py: bm25_v1,
cosine_exact_v1, the hybrid and graph profiles), the rescue family (protocol v2), the ANN lane (the
ANN protocols) and the seeded walk (protocol v3).

The route table (protocols/routes.py) binds each route's entries and the server serves them from
there; a protocol holds a copy (the v1 roots as written, the later ones copied by a derivation step,
protocols/registry.py), and the evaluator's check that the live catalog equals the protocol's copy
holds.
"""
