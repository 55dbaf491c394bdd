"""The `ann` search route: `cosine_hnsw_v1` candidates, each scored with the exact cosine.

Body: `{"query_vector", "space_id", "limit", "profile"?}` (validated like the semantic route).
The engine returns its top `limit` live rows; each is rescored with `cosine_exact_v1`'s exact
cosine and the page is ordered by that score desc, then record id asc, so scores and tie order
never depend on the engine's arithmetic. What the engine missed is missed: coverage.candidates
is false (not every binding was scored), and the evaluator reports recall@10 against the exact
method per query. `work.records_examined` is the number of hits rescored (the engine does not
report how many graph nodes it visited).
"""

from __future__ import annotations

from server.families.ann.engine import hnsw_index
from server.retrieval import page_parts as parts
from server.retrieval.cosine import exact_cosines
from server.retrieval.indexes import ScopeIndex
from server.retrieval.ranking import top_by_score
from server.retrieval.request import Search


def search_ann(index: ScopeIndex, search: Search) -> dict:
    limit = search.limit
    vq = search.vector(index)
    space = vq.query.space
    lane = hnsw_index(index, space.space_id, search.profile_name, search.profile)
    built = lane.current(index, space)
    rows = lane.search(built, vq.query.unit32, limit)
    exact = exact_cosines(vq.query, rows)
    best = top_by_score(exact, index.id_rank()[space.row_slots[rows]], limit)
    ids = [index.slot_ids[s] for s in space.row_slots[rows[best]].tolist()]
    scores = exact[best].tolist()
    hits = [parts.hit(index, rank, rid, score, None,
                      {"ann": {"rank": rank, "raw_score": score, "contribution": score, "contribution_exact": None}},
                      parts.receipt(index, vq, rid))
            for rank, (rid, score) in enumerate(zip(ids, scores), start=1)]
    missing = parts.missing_embeddings(index, vq)
    work = parts.work(records_examined=len(rows), candidates_ranked=len(rows), embeddings_missing=missing)
    coverage = parts.coverage(embeddings=missing == 0)
    coverage["candidates"] = False  # approximate: not every current binding was scored
    coverage["complete"] = False
    parameters = {"limit": limit, "space_id": vq.receipt["space_id"]}
    return parts.page(search, parameters, vq.receipt, hits, coverage, work, anchors=[], relations=[])
