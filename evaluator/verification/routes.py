"""The independent verifier of every route, bound once (the evaluator's side of protocols/routes.py).

A verifier recomputes a page from the frozen inputs and yields each difference it finds as
`(rank, field, message)` (evaluator/verification/failure.py): `check(checker, query, page, spec)`,
where `checker` is the page's `Checker` (evaluator/verification/verify.py: the recomputed channels
and the checks every page shares, which it has already run) and `spec` the protocol's method. A
route whose pages must agree with another method's page of the same query declares that rule too
(`cross(query_id, method, pages, methods, profiles) -> [Failure]`, run once the query's pages are
in). None of them imports the server: each recomputes, with its own code, what the server computed. A route declared in protocols/routes.py without a verifier here (or the reverse)
stops the import, so no campaign can send a request whose page nothing checks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from evaluator.verification.failure import Failure, Findings
from evaluator.verification.page_checker import PageChecker
from evaluator.verification.verifiers.graphs.graph.graph_verifier import check_graph, graph_anchor_failures
from evaluator.verification.verifiers.graphs.hipporag2.hipporag2_verifier import check_hipporag2
from evaluator.verification.verifiers.graphs.hipporag2.ner_verifier import check_hipporag_ner
from evaluator.verification.verifiers.graphs.linearrag import check_linearrag
from evaluator.verification.verifiers.graphs.ppr import check_ppr
from evaluator.verification.verifiers.graphs.walk import check_walk, walk_seed_failures
from evaluator.verification.verifiers.lists.ann import check_ann
from evaluator.verification.verifiers.lists.hybrid import check_hybrid
from evaluator.verification.verifiers.lists.lexical import check_lexical
from evaluator.verification.verifiers.lists.prf import check_prf
from evaluator.verification.verifiers.lists.rescue import check_rescue
from evaluator.verification.verifiers.lists.semantic import check_semantic
from protocols.routes import check_bindings

Check = Callable[[PageChecker, Mapping, Mapping, Mapping], Findings]
Cross = Callable[[str, str, Mapping[str, Mapping], Mapping[str, Mapping], Mapping], list[Failure]]


@dataclass(frozen=True)
class Verifier:
    check: Check
    cross: Cross | None = None


VERIFIERS: dict[str, Verifier] = {
    "lexical": Verifier(check_lexical),
    "semantic": Verifier(check_semantic),
    "hybrid": Verifier(check_hybrid),
    "graph": Verifier(check_graph, graph_anchor_failures),
    "rescue": Verifier(check_rescue),  # evaluator/verification/verifiers/lists/rescue.py (docs/rescue.md)
    "ann": Verifier(check_ann),  # evaluator/verification/verifiers/lists/ann.py (docs/scale.md)
    "walk": Verifier(check_walk, walk_seed_failures),  # evaluator/verification/verifiers/graphs/walk.py (docs/graph-v3.md)
    "prf": Verifier(check_prf),  # evaluator/verification/verifiers/lists/prf.py (docs/prf.md)
    "ppr": Verifier(check_ppr),  # evaluator/verification/verifiers/graphs/ppr.py (docs/field-graphs.md)
    "hipporag2": Verifier(check_hipporag2),  # evaluator/verification/verifiers/graphs/hipporag2/hipporag2_verifier.py (docs/hipporag2.md)
    "hipporag_ner": Verifier(check_hipporag_ner),  # evaluator/verification/verifiers/graphs/hipporag2/ner_verifier.py (docs/hipporag2.md)
    "linearrag": Verifier(check_linearrag),  # evaluator/verification/verifiers/graphs/linearrag.py (docs/linearrag.md)
}
check_bindings("evaluator/verification/routes.py", "verifier", VERIFIERS)
