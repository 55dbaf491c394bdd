"""A toy method family without data of its own, `coord`: coordination-level matching
(docs/extend-a-method.md, step 1).

tests/lab/test_extend_a_method.py writes this file as protocols/families/lists/<family>.py (`coord`) in a copy
of the repository: the family's one profile and its route, whose own request field `min_terms`
every protocol method carries and the protocol validator checks.
"""

from __future__ import annotations

from ground.fields import Fields, join
from protocols.route import TEXT, Route, fixed_limit

COORD_V1 = {"family": "coord", "score": "distinct_query_terms_held", "tie_break": "record_id_asc",
            "tokenizer": "maximal_unicode_letter_digit_runs_lowercased"}


def _check_method(f: Fields, method: dict, path: str, profiles: dict) -> None:
    f.integer(method["min_terms"], join(path, "min_terms"), minimum=1)


ROUTES = (
    Route("coord", ("profile", TEXT, "limit", "min_terms"), {"coord_v1": COORD_V1},
          does="ranks passages by how many distinct words of the question they hold", page="docs/extend-a-method.md",
          check=_check_method, limit=fixed_limit),
)
