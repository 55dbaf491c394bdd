"""The hipporag2 route: admitted search -> seeds -> PageRank -> page.

The query's vector is all it needs (HippoRAG 2 runs no language model at query time without its
recognition filter). The page's `hipporag2` section carries what the evaluator needs to recompute
every integer (evaluator/verification/verifiers/graphs/hipporag2/hipporag2_verifier.py): the linked facts with their cosine
and grid score, the ranges the scores were normalized over, the digest of the dense seeds, the
phrase seeds, the iteration count and the last step's change; every hit carries its mass (None on
the dense order, when no fact links a phrase).
"""

from __future__ import annotations

import numpy as np

from server.families.hipporag2.graph_table import passages_table
from server.families.hipporag2.linking import seeds
from server.families.hipporag2.page import graph_size, hits, page, seeds_and_walk
from server.families.hipporag2.ranking import rank
from server.retrieval import cosine
from server.retrieval.indexes import ScopeIndex
from server.retrieval.request import Search


def fact_cosines(query: cosine.Query, rows: np.ndarray, linked: int) -> np.ndarray:
    """Every fact's cosine as the seeds read it: exact (cosine_exact_v1) wherever it can decide the
    top `linked` facts or the range's ends, a float32 estimate elsewhere.

    A float32 product of unit vectors is within MARGIN of the exact cosine (the bound of
    server/retrieval/cosine.py's small-space prefilter), so a row whose estimate is more than
    2 MARGIN below the `linked`-th best estimate, and more than 2 MARGIN above the lowest, can be
    neither linked, nor tied with a linked one, nor the minimum or the maximum: the seeds are the
    ones the exact cosines of every fact give, at the cost of one float32 product."""
    if not len(rows):
        return np.zeros(0)
    margin = 2.0 * (query.space.dimensions + 2) * 2.0 ** -24
    # the product over the whole matrix, then the facts' rows: gathering the rows first copied the matrix
    estimate = (query.space.rows[: query.space.count] @ query.unit32)[rows].astype(np.float64)
    kth = np.partition(estimate, len(estimate) - min(linked, len(estimate)))[len(estimate) - min(linked, len(estimate))]
    exact = np.flatnonzero((estimate >= kth - 2 * margin) | (estimate <= estimate.min() + 2 * margin))
    estimate[exact] = cosine.exact_cosines(query, rows[exact])
    return estimate


def search_hipporag2(index: ScopeIndex, search: Search) -> dict:
    """POST .../search/hipporag2: rank on the live index and build the page (no fence)."""
    profile = search.profile
    vq = search.vector(index)
    space_id = vq.receipt["space_id"]
    table = passages_table(index, space_id, profile["pagerank"]["transition_bits"])
    dense = cosine.exact_cosines(vq.query, table.passage_rows)
    facts = fact_cosines(cosine.Query(index.node_spaces[space_id], vq.query.unit64, vq.query.unit32), table.fact_rows,
                         profile["linking"]["facts"])
    found = seeds(facts, dense, table.fact_ends, table.holders, profile)
    ranked = rank(table.walk, table.passages, dense, found, profile, search.limit, table.walk_rows)
    section = {
        "graph": graph_size(table),
        "facts": [{"id": table.facts[f.index], "revision": index.nodes[table.facts[f.index]].revision,
                   "cosine": f.cosine, "score": f.score} for f in found.facts],
        "fact_range": list(found.fact_range),
        **seeds_and_walk(ranked),
    }
    found_hits = hits(index, vq, table, ranked, dense, profile["pagerank"]["grid_bits"])
    return page(index, search, vq, found_hits, section, table, len(table.passages) + len(table.facts))
