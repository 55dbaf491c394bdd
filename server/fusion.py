"""`weighted_rrf_v1` / `weighted_rrf_v2` (DESIGN §7) in exact rational arithmetic.

Each channel keeps its best `depth` (100) records; a record's fused score is the sum over the
channels that ranked it of weight / (k + rank), ranks 1-based, weights read as the decimals the
catalog writes (0.25 = 1/4). Sums are exact rationals, so lexical rank 2 + semantic rank 18 and
lexical rank 1 + semantic rank 43 under v2 are both exactly 1/10 and order by id.
"""

from __future__ import annotations

from dataclasses import dataclass

from server import exact

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


def fuse(profile: dict, lists: dict[str, tuple[list[str], list[float]]]) -> list[Fused]:
    """lists: channel -> (ids best first, raw scores), each already cut to the channel depth."""
    entries: dict[str, dict[str, ChannelEntry]] = {}
    k = profile["k"]
    for channel in CHANNELS:
        spec = profile["channels"][channel]
        num, den = exact.rational(spec["weight"])
        ids, raws = lists[channel]
        for rank, (record_id, raw) in enumerate(zip(ids[: spec["depth"]], raws), start=1):
            channels = entries.get(record_id)
            if channels is None:
                channels = entries[record_id] = {}
            channels[channel] = ChannelEntry(rank, raw, (num, den * (k + rank)))
    fused = []
    for record_id, channels in entries.items():
        parts = [channels[c].contribution for c in CHANNELS if c in channels]
        score = parts[0] if len(parts) == 1 else exact.add(*parts)
        fused.append(Fused(record_id, score, channels))
    return exact.exact_order(fused, lambda f: f.score, lambda f: f.id)
