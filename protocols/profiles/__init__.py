"""Ranking profiles that a derivation step adds to a protocol: the rescue family (protocol v2), the
ANN lane (the ANN protocols) and the seeded walk (protocol v3).

Each is frozen by name: the protocols derived with it (protocols/registry.py) hold a copy, and the
server's catalog (server/retrieval/profiles.py) serves the same entries, so the evaluator's check
that the live catalog equals the protocol's copy holds. The profiles of the root protocols
(bm25_v1, cosine_exact_v1, the hybrid and graph profiles) are written out in the server's catalog.
"""
