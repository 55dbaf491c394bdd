"""One module per method family: its routes (protocols/route.py), every parameter of its frozen
profiles, the checks a protocol's method and profile of it must pass, and what it brings beyond
documents (protocols/route.py).

lexical, semantic, hybrid and graph are the lab's first routes (docs/retrieval.md); rescue
(docs/rescue.md), walk (docs/graph-v3.md, docs/graph-v4.md), ann (docs/scale.md), prf
(docs/prf.md), ppr (docs/field-graphs.md) and hipporag2 (its two routes, docs/hipporag2.md) came
after. The registry (protocols/routes.py) lists each module once; the server serves the catalog
from there, a protocol holds a copy (the roots as written, the later ones copied by a derivation
step, protocols/registry.py), and the evaluator's check that the live catalog equals the
protocol's copy holds.
"""
