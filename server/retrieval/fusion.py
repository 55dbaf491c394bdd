"""The fusion rules the server implements, by name (protocols/fusion.py declares them), in exact
rational arithmetic: `weighted_reciprocal_rank`, the rule of `weighted_rrf_v1` / `weighted_rrf_v2`
(docs/design.md §7).

Each channel keeps its best `depth` (100) records; a record's fused score is the sum over the
channels that ranked it of weight / (k + rank), ranks 1-based, weights read as the decimals the
catalog writes (0.25 = 1/4). Sums are exact rationals, so lexical rank 2 + semantic rank 18 and
lexical rank 1 + semantic rank 43 under v2 are both exactly 1/10 and order by id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocols.fusion import check_fusion_bindings
from server.retrieval import exact

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


def weighted_reciprocal_rank(profile: dict, lists: dict[str, tuple[list[str], list[float]]]) -> list[Fused]:
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


Fuser = Callable[[dict, dict[str, tuple[list[str], list[float]]]], list[Fused]]
FUSERS: dict[str, Fuser] = {
    "weighted_reciprocal_rank": weighted_reciprocal_rank,
}
check_fusion_bindings("server/retrieval/fusion.py", FUSERS)


def fuse(rule: str, profile: dict, lists: dict[str, tuple[list[str], list[float]]]) -> list[Fused]:
    """The channels fused by the named rule (a profile's `fusion`) with the profile's parameters."""
    return FUSERS[rule](profile, lists)
