"""The hybrid family (route `hybrid`): the BM25 and cosine rankings fused by weighted reciprocal
rank in exact rationals (docs/retrieval.md, docs/design.md §7). `weighted_rrf_v2` is also the base
list the graph, walk, PPR and rescue families start from."""

from __future__ import annotations

from ground.fields import Fields, join
from protocols.route import TEXT, VECTOR, Route, fixed_limit


def _rrf(lexical_weight: float, semantic_weight: float, k: int) -> dict:
    return {
        "family": "hybrid",
        "fusion": "weighted_reciprocal_rank",
        "channels": {
            "lexical": {"profile": "bm25_v1", "weight": lexical_weight, "depth": 100},
            "semantic": {"profile": "cosine_exact_v1", "weight": semantic_weight, "depth": 100},
        },
        "k": k,
        "rank_base": 1,
        "arithmetic": "exact_rational",
        "tie_break": "record_id_asc",
    }


HYBRID_PROFILES: dict[str, dict] = {
    "weighted_rrf_v1": _rrf(0.5, 0.5, 60),
    "weighted_rrf_v2": _rrf(0.25, 0.75, 2),
}


def check_profile(f: Fields, profile: dict, path: str, profiles: dict) -> None:
    f.obj(profile, path, ("channels", "k"), extra=True)
    channels = f.mapping(profile["channels"], join(path, "channels"))
    for channel, entry in channels.items():
        where = join(join(path, "channels"), channel)
        f.obj(entry, where, ("profile", "weight", "depth"))
        f.string(entry["profile"], join(where, "profile"), allowed=sorted(profiles))
        f.number(entry["weight"], join(where, "weight"), low=0.0)
        f.integer(entry["depth"], join(where, "depth"), minimum=1)
    f.integer(profile["k"], join(path, "k"), minimum=1)


ROUTES = (
    Route("hybrid", ("profile", TEXT, VECTOR, "limit"), HYBRID_PROFILES,
          does="fuses the BM25 ranking and the cosine ranking into one, with the profile's weights",
          page="docs/retrieval.md", check_profile=check_profile, limit=fixed_limit),
)
