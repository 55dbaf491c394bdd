"""Independent check of a `hybrid` page (`weighted_rrf_v1`, `weighted_rrf_v2`, docs/retrieval.md): the BM25
and cosine lists recomputed here, fused by the profile's rule in exact rationals, and compared with
the page's hits (channels, exact scores, order; near-tie swaps of a channel allowed)."""

from __future__ import annotations

from collections.abc import Mapping


def check_hybrid(checker, query: Mapping, page: Mapping, spec: Mapping, fail) -> None:
    check_hybrid_hits(checker, query, page.get("hits") or [], spec, fail)


def check_hybrid_hits(checker, query, hits, spec, fail) -> None:
    fused, order, lists = checker.hybrid(query, spec["profile"])
    checker.check_fused(hits, spec["limit"], checker.profiles[spec["profile"]], fused, order, lists, fail)
