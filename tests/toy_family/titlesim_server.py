"""The toy family with data of its own, `titlesim` (docs/extend-a-method.md, step 3).

tests/lab/test_extend_a_method.py writes this file as server/families/<family>.py (`titlesim`) in a copy
of the repository. Each passage's title is a node memory linked to it by a `titled` relation, its vector a
binding in the query's space; passages are ranked by the exact cosine of the question to their title,
ties by record id.
"""

from __future__ import annotations

import numpy as np

from server.errors import ApiError
from server.retrieval import page_parts as parts
from server.retrieval.cosine import Query, exact_cosines
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search

TITLED = "titled"


def titled_rows(index: ScopeIndex, node_space) -> list[tuple[str, int]]:
    """(passage id, its title's row in the node space), passages ascending."""
    found = []
    for source, entries in index.adjacency.get((TITLED, "forward"), {}).items():
        for relation_id, target in entries:
            binding = node_space.bindings.get(target)
            if (index.eligible(index.relations[relation_id]) and source in index.records and binding is not None
                    and node_space.live[binding.row]):
                found.append((source, binding.row))
    return sorted(found)


def search_titlesim(index: ScopeIndex, search: Search) -> dict:
    vq = search.vector(index)
    node_space = index.node_spaces.get(vq.receipt["space_id"])
    if node_space is None:
        raise ApiError(409, "no_title_vectors", "the scope holds no title vectors in this space "
                                                "(lab embed build --title-vectors)")
    titled = titled_rows(index, node_space)
    rows = np.array([row for _, row in titled], dtype=np.int64)
    cosines = exact_cosines(Query(node_space, vq.query.unit64, vq.query.unit32), rows) if len(rows) else np.zeros(0)
    order = sorted(range(len(titled)), key=lambda i: (-cosines[i], titled[i][0]))[: search.limit]
    hits = [parts.hit(index, rank, titled[i][0], float(cosines[i]), None,
                      {"titlesim": {"rank": rank, "raw_score": float(cosines[i]), "contribution": float(cosines[i]),
                                    "contribution_exact": None}},
                      parts.receipt(index, vq, titled[i][0]))
            for rank, i in enumerate(order, start=1)]
    work = parts.work(records_examined=len(titled), candidates_ranked=len(titled))
    return parts.page(search, {"limit": search.limit, "space_id": vq.receipt["space_id"]}, vq.receipt, hits,
                      parts.coverage(), work)
