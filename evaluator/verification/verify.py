"""Page validation: every search page is recomputed from the frozen inputs and compared.

`Checker` holds what the recomputation needs (record maps from the state, BM25 over the fixture
texts, the fixture vectors, the relations under their lab ids) and `check_page` returns a list of
`Failure`s, each naming the query, method, rank and field, so evaluate can stop on the first and
audit can print them all. It runs the checks every page shares (method, profile, receipts, hits),
then the route's own verifier (evaluator/verification/routes.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluator.inputs import Frozen
from evaluator.state import record_map
from evaluator.verification import recompute as rc
from evaluator.verification.exact import ZERO, Rational, rational
from evaluator.verification.packed import Packed, PackedBm25, pack
from evaluator.verification.routes import VERIFIERS
from evaluator.verification.verifiers.walk import neighbour_table
from ground.canonical import digest
from protocols.routes import route_of


@dataclass(frozen=True)
class Failure:
    query: str
    method: str
    rank: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"query {self.query}, method {self.method}" + (f", rank {self.rank}" if self.rank else "")
        return f"{where}, {self.field}: {self.message}"

    def as_dict(self) -> dict:
        return {"query": self.query, "method": self.method, "rank": self.rank, "field": self.field,
                "message": self.message}


# The per-query work kept for the next page of the same query: each query holds two float64 score
# arrays over every document (cosine, BM25) and a mask, 17 bytes per document; about 512 MB in all
# (every sample query fits; about 830 queries at 37,844 documents, so with the queries shared out
# between two workers about 70% of each worker's). Evicted work is recomputed from the frozen
# inputs, never different.
CACHED_QUERY_BYTES = 512 * 2**20


# how far a channel's recomputed score may be from the lab's and still be a tie (recompute.py)
CHANNEL_TOLERANCE = rc.CHANNEL_TOLERANCE


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
    """What every page of one query shares: its BM25 and cosine scores, the fused lists of each
    hybrid profile and the exact affinity of every node a graph check looked at, each computed
    once however many of the query's pages are validated."""

    __slots__ = ("lexical", "cosines", "hybrid", "affinity")

    def __init__(self):
        self.lexical = None
        self.cosines = None
        self.hybrid: dict[str, tuple] = {}
        self.affinity: dict[tuple[str, bool], dict[str, Rational]] = {}


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
    `cache_bytes`: the bound of the per-query work kept (one query's at least). `keep`: hybrid
    profiles whose fused lists of every query are kept past that bound (a few kilobytes a query):
    the base pools read the base profile's lists of every query again after the timed jobs
    (evaluator/evaluate/base_pool.py), which then costs no second cosine scan."""

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
        self._neighbours: dict[tuple[str, ...], dict] = {}
        self.derived: dict[tuple, object] = {}  # tables a verifier builds once per campaign (verifiers/hipporag2.py)
        self._keep = frozenset(keep)
        self._kept: dict[tuple[str, str], tuple] = {}

    def payload(self, rid: str) -> dict:
        """The payload the lab must return for record `rid`: its fixture document's text and title."""
        return {"content": self.texts[rid], "metadata": {"document_id": self.doc_of[rid], "title": self._titles[rid]}}

    # ---- recomputed channels ---------------------------------------------------------------

    def work(self, query: dict) -> QueryWork:
        """The query's shared work (cached: the inputs are frozen, so a recomputation never changes)."""
        key = query["id"]
        if key in self._work:
            return self._work[key]
        work = self._work[key] = QueryWork()
        return work

    def lexical(self, query: dict) -> rc.Scores:
        work = self.work(query)
        if work.lexical is None:
            work.lexical = self.bm25.scores(query["question"])
        return work.lexical

    def cosines(self, query: dict) -> rc.Scores:
        work = self.work(query)
        if work.cosines is None:
            work.cosines = self.cosine_index.scores(self.frozen.query_vectors[query["id"]])
        return work.cosines

    def hybrid(self, query: dict, profile_name: str) -> tuple[dict, list[str], dict[str, list]]:
        work = self.work(query)
        if profile_name not in work.hybrid:
            key = (query["id"], profile_name)
            found = self._kept.get(key)
            work.hybrid[profile_name] = found if found is not None else self._hybrid(query, profile_name)
            if profile_name in self._keep:
                self._kept[key] = work.hybrid[profile_name]
        return work.hybrid[profile_name]

    def affinities(self, query: dict, profile_name: str, lexical_seed: bool) -> dict[str, Rational]:
        """The query's exact affinity per node under a profile's rule, filled as nodes are asked for."""
        return self.work(query).affinity.setdefault((profile_name, lexical_seed), {})

    def neighbours(self, kinds) -> dict[str, dict[str, str]]:
        """The walk's neighbour table over the relations of `kinds`, built once per set of kinds."""
        key = tuple(kinds)
        if key not in self._neighbours:
            self._neighbours[key] = neighbour_table(self, list(kinds))
        return self._neighbours[key]

    def _hybrid(self, query: dict, profile_name: str) -> tuple[dict, list[str], dict[str, list]]:
        profile = self.profiles[profile_name]
        channels = profile["channels"]
        lists = {
            "lexical": rc.ordered(self.lexical(query), channels["lexical"]["depth"]),
            "semantic": rc.ordered(self.cosines(query), channels["semantic"]["depth"],
                                   min_score=self.frozen.protocol["evaluation"]["min_score"]),
        }
        fused = rc.fuse(profile["fusion"], {c: [rid for rid, _ in lst] for c, lst in lists.items()},
                        {c: channels[c]["weight"] for c in channels}, profile["k"])
        return fused, rc.fused_order(fused), lists

    # ---- the page ----------------------------------------------------------------------------

    def check_page(self, query: dict, method: str, page: Mapping, fence: Mapping | None) -> list[Failure]:
        spec = self.methods[method]
        out: list[Failure] = []

        def fail(rank, field, message):
            out.append(Failure(query["id"], method, rank, field, message))

        if page.get("method") != spec["route"]:
            fail(None, "method", f"{page.get('method')!r}, expected {spec['route']!r}")
        if page.get("profile") != spec["profile"]:
            fail(None, "profile", f"{page.get('profile')!r}, expected {spec['profile']!r}")
        if page.get("profile_digest") != digest(self.profiles[spec["profile"]]):
            fail(None, "profile_digest", "is not the digest of the protocol's frozen profile")
        if fence is not None and page.get("fence") != fence:
            fail(None, "fence", f"{page.get('fence')} differs from the pinned fence {fence}")
        uses_vector = route_of(spec).sends_vector(spec)
        if uses_vector:
            want = {"space_id": self.frozen.space_id, "vector_sha256": self.frozen.query_receipts[query["id"]]}
            if page.get("query_receipt") != want:
                fail(None, "query_receipt", f"{page.get('query_receipt')} is not the fixture's query vector {want}")
        hits = page.get("hits") or []
        if len(hits) > spec["limit"]:
            fail(None, "hits", f"{len(hits)} hits, limit {spec['limit']}")
        for i, hit in enumerate(hits, start=1):
            self._check_hit(hit, i, uses_vector, fail)
        if out:
            return out
        VERIFIERS[spec["route"]](self, query, page, spec, fail)
        return out

    def _check_hit(self, hit, i, uses_vector, fail) -> None:
        if hit.get("rank") != i:
            fail(i, "rank", f"hit {i} carries rank {hit.get('rank')}")
        rid = hit.get("id")
        if rid not in self.texts:  # graph node memories (docs/hipporag2.md) are no documents
            fail(i, "id", f"{rid!r} is not a document of the prepared fixture")
            return
        if hit.get("revision") != self.revision_of[rid]:
            fail(i, "revision", f"{hit.get('revision')}, prepared revision {self.revision_of[rid]}")
        if hit.get("payload") != self.payload(rid):
            fail(i, "payload", f"payload of {rid} differs from fixture document {self.doc_of[rid]}")
        receipt = hit.get("embedding_receipt")
        if receipt is None and not uses_vector:
            return
        binding = self.bindings[rid]
        want = {"binding_id": binding["binding_id"], "record_id": rid, "revision": self.revision_of[rid],
                "space_id": self.frozen.space_id, "vector_sha256": self.frozen.doc_receipts[self.doc_of[rid]]}
        have = {k: (receipt or {}).get(k) for k in want}
        if have != want:
            bad = sorted(k for k in want if have[k] != want[k])
            fail(i, "embedding_receipt", f"{', '.join(bad)} differ from the frozen binding")

    def check_single(self, query, hits, channel, scores, tol, spec, fail) -> None:
        min_score = spec.get("min_score")
        mine = rc.ordered(scores, depth=spec["limit"], min_score=min_score)
        expected = min(rc.count_at_least(scores, min_score), spec["limit"])
        if len(hits) != expected:
            fail(None, "hits", f"{len(hits)} hits, recomputation gives {expected}")
        for i, hit in enumerate(hits, start=1):
            rid = hit["id"]
            if rid not in scores:
                fail(i, "id", f"{rid} does not match the query at all in the recomputation")
                continue
            score = scores[rid]
            if not rc.near_tie(hit.get("score", float("nan")), score, tol):
                fail(i, "score", f"{hit.get('score')} but recomputed {score!r}")
            entry = (hit.get("channels") or {}).get(channel) or {}
            if entry.get("rank") != i or not rc.near_tie(entry.get("raw_score", float("nan")), score, tol):
                fail(i, f"channels.{channel}", f"rank {entry.get('rank')} raw {entry.get('raw_score')}")
            if i <= len(mine) and not rc.near_tie(scores[mine[i - 1][0]], score, tol):
                fail(i, "id", f"{rid} (recomputed {score!r}) where the recomputation ranks {mine[i - 1][0]} "
                              f"({mine[i - 1][1]!r})")
        self.check_order(hits, fail, exact=False)

    def check_order(self, hits, fail, exact: bool) -> None:
        for i in range(1, len(hits)):
            a, b = hits[i - 1], hits[i]
            ka = rc.parse_fraction(a["score_exact"], "score_exact") if exact else a["score"]
            kb = rc.parse_fraction(b["score_exact"], "score_exact") if exact else b["score"]
            if ka < kb or (ka == kb and not a["id"] < b["id"]):
                fail(i + 1, "order", f"{b['id']} ({b['score']}) may not follow {a['id']} ({a['score']})")

    def check_exact(self, hit, i, channel_values: dict[str, Rational], fail) -> Rational | None:
        """Contributions and score of a rank-derived hit, compared as exact rationals."""
        total = ZERO
        for channel, value in channel_values.items():
            entry = (hit.get("channels") or {}).get(channel) or {}
            got = entry.get("contribution_exact")
            try:
                have = rc.parse_fraction(got, f"channels.{channel}.contribution_exact") if got is not None else ZERO
            except ValueError as exc:
                fail(i, f"channels.{channel}.contribution_exact", str(exc))
                return None
            if have != value:
                fail(i, f"channels.{channel}.contribution_exact", f"{got}, recomputed {value}")
            if entry.get("contribution") is not None and entry["contribution"] != float(value):
                fail(i, f"channels.{channel}.contribution", f"{entry['contribution']} is not float({value})")
            total += value
        try:
            score = rc.parse_fraction(hit.get("score_exact"), "score_exact")
        except ValueError as exc:
            fail(i, "score_exact", str(exc))
            return None
        if score != total:
            fail(i, "score_exact", f"{hit.get('score_exact')} is not the sum of its contributions ({total})")
        if hit.get("score") != float(score):
            fail(i, "score", f"{hit.get('score')} is not float({hit.get('score_exact')})")
        return score


    def pool_difference(self, query_id: str, profile_name: str, pool: list[str],
                        depth: int) -> tuple[int, str | None] | None:
        """A stored pool of document ids (the reach section's base pool: ids only, no channel ranks)
        against the profile's fused top `depth` recomputed here: None when it is that list, or one
        the server's arithmetic could have produced (a difference only inside a channel near-tie,
        or reached by swapping near-tied neighbours); else the first position that differs and the
        record recomputed there (None past the recomputed list's end)."""
        _, order, lists = self.hybrid(self.queries[query_id], profile_name)
        want = order[:depth]
        have = [self.record_of.get(doc) for doc in pool]
        tolerance = CHANNEL_TOLERANCE
        if (have == want or self._explained_by_near_ties(have, want, lists, tolerance)
                or self._reached_by_near_tie_swaps(have, lists, tolerance, self.profiles[profile_name], depth)):
            return None
        first = rc.first_difference(have, want)
        return first, want[first] if first < len(want) else None

    def check_fused(self, hits, limit: int, profile: dict, fused: dict, order: list[str],
                    lists: dict[str, list], fail) -> None:
        """A fused page against channel lists recomputed here (the hybrid route's, or PRF's expanded
        ones): each hit's channel ranks and raw scores, its exact reciprocal-rank score, the page's
        order and its ids, where a difference is allowed only inside a run of near-equal scores."""
        raw = {c: dict(lst) for c, lst in lists.items()}
        tolerance = CHANNEL_TOLERANCE
        for i, hit in enumerate(hits, start=1):
            values = {}
            for channel, spec_c in profile["channels"].items():
                entry = (hit.get("channels") or {}).get(channel)
                rank = entry.get("rank") if entry else None
                mine = fused.get(hit["id"], {"ranks": {}})["ranks"].get(channel)
                if rank != mine and not self._channel_near_tie(lists[channel], hit["id"], rank, tolerance[channel]):
                    fail(i, f"channels.{channel}.rank", f"{rank}, recomputed {mine}")
                if rank is not None and not rc.near_tie(entry.get("raw_score", float("nan")),
                                                        raw[channel].get(hit["id"], float("nan")), tolerance[channel]):
                    fail(i, f"channels.{channel}.raw_score", f"{entry.get('raw_score')}, recomputed "
                                                             f"{raw[channel].get(hit['id'])}")
                values[channel] = ZERO if rank is None else rational(spec_c["weight"]) / (profile["k"] + rank)
            self.check_exact(hit, i, values, fail)
        self.check_order(hits, fail, exact=True)
        want = order[:limit]
        have = [h["id"] for h in hits]
        if have != want and not self._explained_by_near_ties(have, want, lists, tolerance):
            reported = self._lists_as_reported(hits, lists)
            if reported is not None:
                weights = {c: profile["channels"][c]["weight"] for c in profile["channels"]}
                want = rc.fused_order(rc.fuse(profile["fusion"], reported, weights, profile["k"]))[:limit]
        if have != want and not self._explained_by_near_ties(have, want, lists, tolerance):
            first = rc.first_difference(have, want)
            fail(first + 1, "id", f"{have[first] if first < len(have) else None}, recomputed "
                                  f"{want[first] if first < len(want) else None}")

    @staticmethod
    def _channel_near_tie(lst: list[tuple[str, float]], rid: str, rank: int | None, tol: float) -> bool:
        """A reported channel rank that differs from ours only inside a run of near-equal scores."""
        scores = dict(lst)
        if rank is None:
            return rid not in scores or (len(lst) > 0 and rc.near_tie(scores[rid], lst[-1][1], tol))
        if rank < 1 or rank > len(lst):
            return False
        return rid in scores and rc.near_tie(scores[rid], lst[rank - 1][1], tol)

    @staticmethod
    def _lists_as_reported(hits, lists: dict[str, list]) -> dict[str, list[str]] | None:
        """Each recomputed channel list with the page's hits at the channel ranks the page reports,
        the other documents in our order around them. The per-hit check has already allowed a
        reported rank only inside a near tie, so these are the lists the server's arithmetic could
        have produced, and the page must be their exact fusion. A swap of two near-equal cosines
        changes both fused scores, and that can move a third document past the page's cut, which
        a set of near-tied ids alone cannot explain. None when the reported ranks collide."""
        out = {}
        for channel, lst in lists.items():
            ids = [rid for rid, _ in lst]
            placed: dict[int, str] = {}
            for hit in hits:
                entry = (hit.get("channels") or {}).get(channel)
                rank = entry.get("rank") if entry else None
                if rank is None:
                    continue
                if not 1 <= rank <= len(ids) or rank - 1 in placed:
                    return None
                placed[rank - 1] = hit["id"]
            moved = set(placed.values())
            rest = iter([rid for rid in ids if rid not in moved])
            out[channel] = [placed[i] if i in placed else next(rest) for i in range(len(ids))]
        return out

    @staticmethod
    def _reached_by_near_tie_swaps(have: list[str], lists: dict[str, list], tolerance: dict[str, float],
                                   profile: Mapping, limit: int) -> bool:
        """True when swapping near-tied neighbours in the recomputed channel lists makes their exact
        fusion the stored list `have` (a base pool keeps ids only, no channel ranks to read). Each
        step takes the swap that moves the first difference furthest down, so this searches only
        lists the server's arithmetic could have produced, and accepts only an exact match."""
        weights = {c: profile["channels"][c]["weight"] for c in profile["channels"]}
        current = {c: [rid for rid, _ in lst] for c, lst in lists.items()}
        pairs = [(c, i) for c, lst in lists.items() for i in range(len(lst) - 1)
                 if lst[i][1] != lst[i + 1][1] and rc.near_tie(lst[i][1], lst[i + 1][1], tolerance[c])]

        def agreeing(channels) -> int:
            want = rc.fused_order(rc.fuse(profile["fusion"], channels, weights, profile["k"]))[:limit]
            return len(have) + 1 if want == have else rc.first_difference(have, want)

        reached = agreeing(current)
        for _ in range(len(pairs)):
            if reached > len(have):
                return True
            best = None
            for c, i in pairs:
                lst = current[c]
                lst[i], lst[i + 1] = lst[i + 1], lst[i]
                step = agreeing(current)
                lst[i], lst[i + 1] = lst[i + 1], lst[i]
                if step > reached and (best is None or step > best[0]):
                    best = (step, c, i)
            if best is None:
                return False
            reached, c, i = best
            current[c][i], current[c][i + 1] = current[c][i + 1], current[c][i]
        return reached > len(have)

    @staticmethod
    def _explained_by_near_ties(have, want, lists, tolerance) -> bool:
        """True when every document on which the two fused lists differ sits in a channel near-tie."""
        ambiguous = set().union(*(rc.near_tie_ids(lst, tolerance[channel]) for channel, lst in lists.items()))
        differing = {a for a, b in zip(have, want) if a != b} | {b for a, b in zip(have, want) if a != b}
        return len(have) == len(want) and bool(differing) and differing <= ambiguous

    # ---- graph -------------------------------------------------------------------------------


def ranking_digest(page: Mapping, digest_of: Callable[[Any], str] = digest) -> str:
    """What must be identical across repetitions: ids, ranks, scores (exact ones included).
    `digest_of`: `ground.canonical.digest` or one proved equal to it (ground/fast_canonical.py)."""
    return digest_of([[h["id"], h["rank"], h["score"], h.get("score_exact")] for h in page.get("hits") or []])


def proof_digest(page: Mapping, digest_of: Callable[[Any], str] = digest) -> str:
    return digest_of({"anchors": page.get("anchors"), "relations": page.get("relations"),
                      "proofs": [h.get("proof") for h in page.get("hits") or []]})


def cross_method_failures(query_id: str, pages: Mapping[str, Mapping], methods: Mapping[str, Mapping],
                          profiles: Mapping) -> list[Failure]:
    """Anchors = the seed method's top 4 page; depth zero = the hybrid v2 page, for one query."""
    out = []
    hybrid_methods = {spec["profile"]: name for name, spec in methods.items() if spec["route"] == "hybrid"}
    lexical_methods = [name for name, spec in methods.items() if spec["route"] == "lexical"]
    for name, spec in methods.items():
        if spec["route"] == "walk" and name in pages:  # seeds = the base method's top (docs/graph-v3.md)
            out.extend(_walk_seed_failures(query_id, name, pages, profiles[spec["profile"]], hybrid_methods))
        if spec["route"] != "graph" or name not in pages:
            continue
        profile = profiles[spec["profile"]]
        seed_profile = profile["seed_profiles"][spec["seed"]]
        baseline = hybrid_methods.get(seed_profile) if spec["seed"] == "hybrid" else (lexical_methods or [None])[0]
        if baseline is None or baseline not in pages:
            continue
        top = [h["id"] for h in pages[baseline]["hits"][: profile["anchors"]]]
        anchors = [a["id"] for a in pages[name].get("anchors") or []]
        if anchors != top:
            out.append(Failure(query_id, name, None, "anchors", f"{anchors} differ from the top "
                                                                f"{profile['anchors']} of {baseline} {top}"))
        if spec["expansion"]["max_depth"] == 0:
            have = [h["id"] for h in pages[name]["hits"]]
            want = [h["id"] for h in pages[baseline]["hits"]]
            if have != want:
                out.append(Failure(query_id, name, None, "hits", f"depth zero ranking {have} differs from "
                                                                 f"{baseline} {want}"))
    return out


def _walk_seed_failures(query_id: str, name: str, pages: Mapping[str, Mapping], profile: Mapping,
                        hybrid_methods: Mapping[str, str]) -> list[Failure]:
    baseline = hybrid_methods.get(profile["base"]["profile"])
    if baseline is None or baseline not in pages:
        return []
    top = [h["id"] for h in pages[baseline]["hits"][: profile["seeds"]]]
    seeds = [a["id"] for a in pages[name].get("anchors") or []]
    if seeds == top:
        return []
    return [Failure(query_id, name, None, "anchors", f"{seeds} differ from the top {profile['seeds']} of {baseline} {top}")]
