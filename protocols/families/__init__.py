"""One module per method family: its routes (protocols/route.py), every parameter of its frozen
profiles, the checks a protocol's method and profile of it must pass, what it brings beyond
documents (protocols/route.py) and the step that adds it to a protocol.

In two folders by what a family's page is, as its verifier is (evaluator/verification/verifiers/):
`lists/` for a ranking of passages by channel scores (lexical, semantic, hybrid and the first
routes, docs/retrieval.md; rescue, docs/rescue.md; ann, docs/scale.md; prf, docs/prf.md) and
`graphs/` for a walk or an expansion over a graph (graph, docs/retrieval.md; walk,
docs/graph-v3.md and docs/graph-v4.md; ppr, docs/field-graphs.md; hipporag2 with its two routes,
docs/hipporag2.md; linearrag, docs/linearrag.md). The registry (protocols/routes.py) lists each
module once; the server serves the catalog from there, a protocol holds a copy (the roots as
written, the later ones copied by a derivation step, protocols/registry.py), and the evaluator's
check that the live catalog equals the protocol's copy holds.
"""
