"""Page validation: every search page is recomputed from the frozen inputs and compared.

`Checker` holds what the recomputation needs (record maps from the state, BM25 over the fixture
texts, the fixture vectors, the relations under their lab ids) and the work a query's pages share
(its BM25 and cosine scores, its fused base lists), and `check_page` returns a list of `Failure`s,
each naming the query, method, rank and field, so evaluate can stop on the first and audit can
print them all. It runs the checks every page shares (method, profile, receipts, hits), then the
route's own verifier (evaluator/verification/routes.py); it knows no family. After every page of a
query, `cross_method_failures` runs the rules that tie one method's page to another's, each
declared with its route's verifier.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any, TypeVar

import numpy as np

from evaluator.inputs import Frozen
from evaluator.state import record_map
from evaluator.verification import fused_lists
from evaluator.verification import recompute as rc
from evaluator.verification.failure import Failure, Findings
from evaluator.verification.packed import Packed, PackedBm25, pack
from evaluator.verification.routes import VERIFIERS
from ground.canonical import digest
from protocols.routes import route_of

T = TypeVar("T")

__all__ = ["CACHED_QUERY_BYTES", "Checker", "Failure", "RecentCache", "cross_method_failures", "proof_digest",
           "ranking_digest"]

# The per-query work kept for the next page of the same query: each query holds two float64 score
# arrays over every document (cosine, BM25) and a mask, 17 bytes per document; about 512 MB in all
# (every sample query fits; about 830 queries at 37,844 documents, so with the queries shared out
# between two workers about 70% of each worker's). Evicted work is recomputed from the frozen
# inputs, never different.
CACHED_QUERY_BYTES = 512 * 2**20


class RecentCache(OrderedDict):
    """A dict that keeps its `limit` most recently used entries. The recomputations it holds are
    pure functions of frozen inputs, so an evicted entry is only recomputed, never different."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class QueryWork:
    """What every page of one query shares: its BM25 and cosine scores, the fused base lists of each
    fused profile, and what a family's verifier derives once per query (`derived`, keyed by it),
    each computed once however many of the query's pages are validated."""

    __slots__ = ("bm25", "cosines", "fused", "derived")

    def __init__(self):
        self.bm25 = None
        self.cosines = None
        self.fused: dict[str, tuple] = {}
        self.derived: dict[Any, Any] = {}


class _Rows(Mapping):
    """record id -> its float64 vector, read from the cosine index's matrix (no copy per document)."""

    def __init__(self, index: rc.CosineIndex):
        self.index = index

    def __getitem__(self, rid: str) -> np.ndarray:
        return self.index.row(rid)

    def __iter__(self):
        return iter(self.index.ids)

    def __len__(self) -> int:
        return len(self.index.ids)


class Checker:
    """`packed`: the arrays of the frozen inputs (evaluator/verification/packed.py), mapped from the
    files a caller shares with its workers; built here from `frozen` when not given.
    `cache_bytes`: the bound of the per-query work kept (one query's at least). `keep`: fused
    profiles whose lists of every query are kept past that bound (a few kilobytes a query): the
    base pools read the base profile's lists of every query again after the timed jobs
    (evaluator/evaluate/base_pool.py), which then costs no second cosine scan. `derived`: what a
    family's verifier builds once per campaign (its graph, its neighbour tables), keyed by it."""

    def __init__(self, frozen: Frozen, state: Mapping, packed: Packed | None = None,
                 cache_bytes: int = CACHED_QUERY_BYTES, keep: Collection[str] = ()):
        self.frozen = frozen
        self.profiles = frozen.protocol["ranking_profiles"]
        self.methods = frozen.protocol["methods"]
        self.queries = frozen.queries
        self.record_of, self.doc_of = record_map(state)
        self.revision_of = {entry["id"]: entry["revision"] for entry in state["memories"].values()}
        self.bindings = {self.record_of[doc]: receipt for doc, receipt in state["bindings"].items()}
        documents = frozen.documents
        self.texts = {self.record_of[d]: documents[d]["text"] for d in documents}
        self._titles = {self.record_of[d]: documents[d]["title"] for d in documents}
        if packed is None:
            packed = pack(frozen.doc_vectors, {d: documents[d]["text"] for d in documents})
        del documents
        self.cosine_index = rc.CosineIndex.of_rows([self.record_of[d] for d in packed.vector_ids],
                                                   packed.matrix, packed.norms)
        self.vectors = _Rows(self.cosine_index)
        self.bm25 = PackedBm25([self.record_of[d] for d in packed.text_ids], packed, self.texts.__getitem__)
        self.edges: dict[str, rc.Edge] = {}
        self.relation_revision: dict[str, int] = {}
        self.provenance: dict[str, dict] = {}  # what produced each relation (a walk page must name it)
        for rel in frozen.relations["relations"]:
            lab = state["relations"][rel["id"]]
            self.edges[lab["id"]] = rc.Edge(lab["id"], rel["kind"], self.record_of[rel["source"]],
                                            self.record_of[rel["target"]])
            self.relation_revision[lab["id"]] = lab["revision"]
            self.provenance[lab["id"]] = rel["provenance"]
        self.adjacency = rc.adjacency(self.edges.values())
        # bounded: a full-scale campaign (2,417 queries in random plan order over 37,844 documents)
        # that kept every query's scores would hold gigabytes
        self._work = RecentCache(max(1, cache_bytes // (17 * max(1, len(self.texts)))))
        self.derived: dict[Any, Any] = {}
        self._keep = frozenset(keep)
        self._kept: dict[tuple[str, str], tuple] = {}

    def payload(self, rid: str) -> dict:
        """The payload the lab must return for record `rid`: its fixture document's text and title."""
        return {"content": self.texts[rid], "metadata": {"document_id": self.doc_of[rid], "title": self._titles[rid]}}

    # ---- recomputed channels ---------------------------------------------------------------

    def derived_table(self, key: Hashable, build: Callable[[], T]) -> T:
        """What a family's verifier derives once from the frozen inputs (its graph table), under
        `key` (the family's name first), built on first use."""
        if key not in self.derived:
            self.derived[key] = build()
        return self.derived[key]

    def work(self, query: Mapping) -> QueryWork:
        """The query's shared work (cached: the inputs are frozen, so a recomputation never changes)."""
        key = query["id"]
        if key in self._work:
            return self._work[key]
        work = self._work[key] = QueryWork()
        return work

    def bm25_scores(self, query: Mapping) -> rc.Scores:
        work = self.work(query)
        if work.bm25 is None:
            work.bm25 = self.bm25.scores(query["question"])
        return work.bm25

    def cosines(self, query: Mapping) -> rc.Scores:
        work = self.work(query)
        if work.cosines is None:
            work.cosines = self.cosine_index.scores(self.frozen.query_vectors[query["id"]])
        return work.cosines

    def fused(self, query: Mapping, profile_name: str) -> tuple[dict, list[str], fused_lists.Lists]:
        """A fused profile's (entries, order, channel lists) for the query (fused_lists.py)."""
        work = self.work(query)
        if profile_name not in work.fused:
            key = (query["id"], profile_name)
            found = self._kept.get(key)
            work.fused[profile_name] = found if found is not None else self._fused(query, profile_name)
            if profile_name in self._keep:
                self._kept[key] = work.fused[profile_name]
        return work.fused[profile_name]

    def _fused(self, query: Mapping, profile_name: str) -> tuple[dict, list[str], fused_lists.Lists]:
        return fused_lists.recompute(self, query, self.profiles[profile_name],
                                     self.frozen.protocol["evaluation"]["min_score"])

    def pool_difference(self, query_id: str, profile_name: str, pool: list[str],
                        depth: int) -> tuple[int, str | None] | None:
        """A stored pool of document ids (the reach section's base pool) against the profile's fused
        top `depth` recomputed here (fused_lists.pool_difference)."""
        _, order, lists = self.fused(self.queries[query_id], profile_name)
        return fused_lists.pool_difference([self.record_of.get(doc) for doc in pool], order, lists,
                                           self.profiles[profile_name], depth)

    # ---- the page ----------------------------------------------------------------------------

    def check_page(self, query: dict, method: str, page: Mapping, fence: Mapping | None) -> list[Failure]:
        """Every difference of one page: the checks every page shares, then, when those hold, its
        route's verifier (a page that fails them would only repeat the difference there)."""
        spec = self.methods[method]
        found = list(self._shared_findings(page, spec, query, fence))
        if not found:
            found = list(VERIFIERS[spec["route"]].check(self, query, page, spec))
        return [Failure(query["id"], method, rank, field, message) for rank, field, message in found]

    def _shared_findings(self, page: Mapping, spec: Mapping, query: Mapping, fence: Mapping | None) -> Findings:
        if page.get("method") != spec["route"]:
            yield None, "method", f"{page.get('method')!r}, expected {spec['route']!r}"
        if page.get("profile") != spec["profile"]:
            yield None, "profile", f"{page.get('profile')!r}, expected {spec['profile']!r}"
        if page.get("profile_digest") != digest(self.profiles[spec["profile"]]):
            yield None, "profile_digest", "is not the digest of the protocol's frozen profile"
        if fence is not None and page.get("fence") != fence:
            yield None, "fence", f"{page.get('fence')} differs from the pinned fence {fence}"
        uses_vector = route_of(spec).sends_vector(spec)
        if uses_vector:
            want = {"space_id": self.frozen.space_id, "vector_sha256": self.frozen.query_receipts[query["id"]]}
            if page.get("query_receipt") != want:
                yield None, "query_receipt", f"{page.get('query_receipt')} is not the fixture's query vector {want}"
        hits = page.get("hits") or []
        if len(hits) > spec["limit"]:
            yield None, "hits", f"{len(hits)} hits, limit {spec['limit']}"
        for i, hit in enumerate(hits, start=1):
            yield from self._hit_findings(hit, i, uses_vector)

    def _hit_findings(self, hit: Mapping, i: int, uses_vector: bool) -> Findings:
        if hit.get("rank") != i:
            yield i, "rank", f"hit {i} carries rank {hit.get('rank')}"
        rid = hit.get("id")
        if rid not in self.texts:  # node memories (protocols/route.py) are no documents
            yield i, "id", f"{rid!r} is not a document of the prepared fixture"
            return
        if hit.get("revision") != self.revision_of[rid]:
            yield i, "revision", f"{hit.get('revision')}, prepared revision {self.revision_of[rid]}"
        if hit.get("payload") != self.payload(rid):
            yield i, "payload", f"payload of {rid} differs from fixture document {self.doc_of[rid]}"
        receipt = hit.get("embedding_receipt")
        if receipt is None and not uses_vector:
            return
        binding = self.bindings[rid]
        want = {"binding_id": binding["binding_id"], "record_id": rid, "revision": self.revision_of[rid],
                "space_id": self.frozen.space_id, "vector_sha256": self.frozen.doc_receipts[self.doc_of[rid]]}
        have = {k: (receipt or {}).get(k) for k in want}
        if have != want:
            bad = sorted(k for k in want if have[k] != want[k])
            yield i, "embedding_receipt", f"{', '.join(bad)} differ from the frozen binding"


def ranking_digest(page: Mapping, digest_of: Callable[[Any], str] = digest) -> str:
    """What must be identical across repetitions: ids, ranks, scores (exact ones included).
    `digest_of`: `ground.canonical.digest` or one proved equal to it (ground/fast_canonical.py)."""
    return digest_of([[h["id"], h["rank"], h["score"], h.get("score_exact")] for h in page.get("hits") or []])


def proof_digest(page: Mapping, digest_of: Callable[[Any], str] = digest) -> str:
    return digest_of({"anchors": page.get("anchors"), "relations": page.get("relations"),
                      "proofs": [h.get("proof") for h in page.get("hits") or []]})


def cross_method_failures(query_id: str, pages: Mapping[str, Mapping], methods: Mapping[str, Mapping],
                          profiles: Mapping) -> list[Failure]:
    """The rules that tie one method's page to another's for one query (a graph method's anchors are
    its seed method's top, a walk's seeds its base method's), each declared with its route's
    verifier (evaluator/verification/routes.py)."""
    out: list[Failure] = []
    for name, spec in methods.items():
        cross = VERIFIERS[spec["route"]].cross
        if cross is not None and name in pages:
            out.extend(cross(query_id, name, pages, methods, profiles))
    return out
