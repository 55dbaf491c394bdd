"""The fusion rules the server implements, by name (protocols/fusion.py declares them), in exact
rational arithmetic: `weighted_reciprocal_rank`, the rule of `weighted_rrf_v1` / `weighted_rrf_v2`
(docs/design.md §7); and the base list the hybrid, graph, walk, PPR, rescue and PRF families fuse
their channels into, built one way for all of them (`fuse_lists`, `fused_base`).

Each channel keeps its best `depth` (100) records; a record's fused score is the sum over the
channels that ranked it of weight / (k + rank), ranks 1-based, weights read as the decimals the
catalog writes (0.25 = 1/4). Sums are exact rationals, so lexical rank 2 + semantic rank 18 and
lexical rank 1 + semantic rank 43 under v2 are both exactly 1/10 and order by id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from protocols.fusion import check_fusion_bindings
from protocols.routes import PROFILES
from server.retrieval import exact
from server.retrieval.bm25 import LexicalRanking, bm25
from server.retrieval.cosine import Query, SemanticRanking, cosine
from server.retrieval.indexes import ScopeIndex

CHANNELS = ("lexical", "semantic")


@dataclass(slots=True)
class ChannelEntry:
    rank: int
    raw_score: float
    contribution: tuple[int, int]


@dataclass(slots=True)
class Fused:
    id: str
    score: tuple[int, int]
    channels: dict[str, ChannelEntry]  # only the channels that ranked the record


def weighted_reciprocal_rank(profile: Mapping, lists: dict[str, tuple[list[str], list[float]]]) -> list[Fused]:
    """lists: channel -> (ids best first, raw scores), each already cut to the channel depth."""
    fused: dict[str, Fused] = {}
    k = profile["k"]
    for channel in CHANNELS:
        spec = profile["channels"][channel]
        num, den = exact.rational(spec["weight"])
        ids, raws = lists[channel]
        for rank, record_id, raw in zip(range(1, spec["depth"] + 1), ids, raws):
            part = (num, den * (k + rank))
            entry = fused.get(record_id)
            if entry is None:
                fused[record_id] = Fused(record_id, part, {channel: ChannelEntry(rank, raw, part)})
            else:  # summed in CHANNELS order, as the unreduced pair the page reports
                entry.score = exact.add(entry.score, part)
                entry.channels[channel] = ChannelEntry(rank, raw, part)
    return exact.exact_order(list(fused.values()), _score, _id)


# Named key functions instead of lambdas: one place, and the sort keys read as what they are.
def _score(entry: Fused) -> tuple[int, int]:
    return entry.score


def _id(entry: Fused) -> str:
    return entry.id


Fuser = Callable[[Mapping, dict[str, tuple[list[str], list[float]]]], list[Fused]]
FUSERS: dict[str, Fuser] = {
    "weighted_reciprocal_rank": weighted_reciprocal_rank,
}
check_fusion_bindings("server/retrieval/fusion.py", FUSERS)


def fuse(rule: str, profile: Mapping, lists: dict[str, tuple[list[str], list[float]]]) -> list[Fused]:
    """The channels fused by the named rule (a profile's `fusion`) with the profile's parameters."""
    return FUSERS[rule](profile, lists)


SEMANTIC_DEPTH_MIN_SCORE = -1.0  # a channel that declares no min_score keeps every cosine


@dataclass(frozen=True)
class Base:
    """A fused base list and the two channel rankings it was fused from."""

    lexical: LexicalRanking
    semantic: SemanticRanking
    fused: list[Fused]

    @property
    def examined(self) -> int:
        """Records the two channels scored (a page's `work.records_examined`)."""
        return self.lexical.matched + self.semantic.scored


def base_rule(spec: Mapping) -> str:
    """A base spec's fusion rule: its own `fusion`, or that of the hybrid profile it names (`profile`)."""
    return spec["fusion"] if "fusion" in spec else PROFILES[spec["profile"]]["fusion"]


def fuse_lists(spec: Mapping, lexical: tuple[list[str], list[float]], semantic: tuple[list[str], list[float]]
               ) -> list[Fused]:
    """Two ranked channels (ids best first, raw scores) fused by the spec's rule with its weights
    and k, cut at the spec's `depth` when it declares one."""
    fused = fuse(base_rule(spec), spec, {"lexical": lexical, "semantic": semantic})
    return fused[: spec["depth"]] if "depth" in spec else fused


def channel_rankings(index: ScopeIndex, spec: dict, text: str, query: Query) -> tuple[LexicalRanking, SemanticRanking]:
    """BM25 and exact cosine over the scope, each to its channel's depth (cosines down to the
    channel's min_score, every one when it declares none)."""
    channels = spec["channels"]
    lexical = bm25(index, text, channels["lexical"]["depth"])
    semantic = cosine(index, query, channels["semantic"]["depth"],
                      channels["semantic"].get("min_score", SEMANTIC_DEPTH_MIN_SCORE))
    return lexical, semantic


def fused_base(index: ScopeIndex, spec: dict, text: str, query: Query) -> Base:
    """The two channel rankings fused by `fuse_lists`."""
    lexical, semantic = channel_rankings(index, spec, text, query)
    return Base(lexical, semantic, fuse_lists(spec, (lexical.ids, lexical.scores), (semantic.ids, semantic.scores)))
