"""The semantic family (route `semantic`): every passage ranked by the exact cosine of its
embedding to the question's (docs/retrieval.md). `cosine_exact_v1` is the second channel of every
fused method and the cosine every other family's page reports."""

from __future__ import annotations

from ground.fields import Fields, join
from protocols.route import VECTOR, Route, fixed_limit

COSINE_EXACT_V1 = {
    "family": "semantic",
    "similarity": "cosine",
    "search": "exact_all_current_bindings",
    "clamp": [-1.0, 1.0],
    "tie_break": "record_id_asc",
}


def _check_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    f.number(method["min_score"], join(path, "min_score"), low=-1.0, high=1.0)


ROUTES = (
    Route("semantic", ("profile", VECTOR, "limit", "min_score"), {"cosine_exact_v1": COSINE_EXACT_V1},
          does="ranks every passage by the cosine of its embedding to the question's (exact search)",
          page="docs/retrieval.md", check=_check_method, optional=("profile", "min_score"), limit=fixed_limit),
)
