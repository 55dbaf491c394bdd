"""The independent verifier of every route, bound once (the evaluator's side of protocols/routes.py).

A verifier recomputes a page from the frozen inputs and reports each difference through `fail`:
`verifier(checker, query, page, spec, fail)`, where `checker` is the page's `Checker`
(evaluator/verification/verify.py: the recomputed channels and the checks every page shares, which
it has already run), `spec` the protocol's method and `fail(rank, field, message)` records a
failure. None of them imports the server: each recomputes, with its own code, what the server
computed. A route declared in protocols/routes.py without a verifier here (or the reverse) stops
the import, so no campaign can send a request whose page nothing checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from evaluator.verification import recompute as rc
from evaluator.verification.ann import check_ann
from evaluator.verification.ppr import check_ppr
from evaluator.verification.prf import check_prf
from evaluator.verification.rescue import check_rescue
from evaluator.verification.walk import check_walk
from protocols.routes import check_bindings

Verifier = Callable[[object, Mapping, Mapping, Mapping, Callable], None]


def check_lexical(checker, query: Mapping, page: Mapping, spec: Mapping, fail) -> None:
    checker.check_single(query, page.get("hits") or [], "lexical", checker.lexical(query), rc.BM25_TOLERANCE,
                         spec, fail)


def check_semantic(checker, query: Mapping, page: Mapping, spec: Mapping, fail) -> None:
    checker.check_single(query, page.get("hits") or [], "semantic", checker.cosines(query), rc.COSINE_TOLERANCE,
                         spec, fail)


def check_hybrid(checker, query: Mapping, page: Mapping, spec: Mapping, fail) -> None:
    checker.check_hybrid(query, page.get("hits") or [], spec, fail)


def check_graph(checker, query: Mapping, page: Mapping, spec: Mapping, fail) -> None:
    checker.check_graph(query, page, spec, fail)


VERIFIERS: dict[str, Verifier] = {
    "lexical": check_lexical,
    "semantic": check_semantic,
    "hybrid": check_hybrid,
    "graph": check_graph,
    "rescue": check_rescue,  # evaluator/verification/rescue.py (docs/rescue.md)
    "ann": check_ann,  # evaluator/verification/ann.py (docs/scale.md)
    "walk": check_walk,  # evaluator/verification/walk.py (docs/graph-v3.md)
    "prf": check_prf,  # evaluator/verification/prf.py (docs/prf.md)
    "ppr": check_ppr,  # evaluator/verification/ppr.py (docs/field-graphs.md)
}
check_bindings("evaluator/verification/routes.py", "verifier", VERIFIERS)
