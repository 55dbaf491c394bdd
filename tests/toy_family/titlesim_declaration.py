"""A toy method family with data of its own, `titlesim`: passages ranked by the cosine of the question
to their title (docs/extend-a-method.md, step 1).

tests/lab/test_extend_a_method.py writes this file as protocols/families/lists/<family>.py (`titlesim`) in a
copy of the repository. The titles reach the lab as node memories of the kind `title`, each linked to
its passage by a `titled` relation whose evidence is the title's length; their vectors come from the
fixture section `title_vectors` (step 7), encoded by the fixture's own encoder.
"""

from __future__ import annotations

from protocols.route import VECTOR, FamilyData, NodeKind, RelationKind, Route, fixed_limit

SECTION = "title_vectors"
TITLE, TITLED, LENGTH_REF = "title", "titled", "chars:"

TITLESIM_V1 = {"family": "titlesim", "similarity": "cosine_exact_v1 of the question to the passage's title vector",
               "tie_break": "record_id_asc"}

ROUTES = (
    Route("titlesim", ("profile", VECTOR, "limit"), {"titlesim_v1": TITLESIM_V1},
          does="ranks passages by the cosine of the question to their title", page="docs/extend-a-method.md",
          limit=fixed_limit,
          data=FamilyData(SECTION, (NodeKind(TITLE),),
                          (RelationKind(TITLED, LENGTH_REF, r"[1-9][0-9]{0,3}", "the title's length in characters"),))),
)
