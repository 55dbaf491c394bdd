"""Checks of hits that many verifiers share: an order by score then id, and exact rank-derived scores."""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence

from evaluator.verification import recompute as rc
from evaluator.verification.exact import ZERO, Rational
from evaluator.verification.failure import Finding, Findings


def check_order(hits: Sequence[Mapping], exact: bool) -> Findings:
    """Score descending (the exact one when `exact`), ties by id ascending."""
    for i in range(1, len(hits)):
        a, b = hits[i - 1], hits[i]
        ka = rc.parse_fraction(a["score_exact"], "score_exact") if exact else a["score"]
        kb = rc.parse_fraction(b["score_exact"], "score_exact") if exact else b["score"]
        if ka < kb or (ka == kb and not a["id"] < b["id"]):
            yield i + 1, "order", f"{b['id']} ({b['score']}) may not follow {a['id']} ({a['score']})"


def check_exact(hit: Mapping, i: int, channel_values: Mapping[str, Rational]
                ) -> Generator[Finding, None, Rational | None]:
    """Contributions and score of a rank-derived hit, compared as exact rationals."""
    total = ZERO
    for channel, value in channel_values.items():
        entry = (hit.get("channels") or {}).get(channel) or {}
        got = entry.get("contribution_exact")
        try:
            have = rc.parse_fraction(got, f"channels.{channel}.contribution_exact") if got is not None else ZERO
        except ValueError as exc:
            yield i, f"channels.{channel}.contribution_exact", str(exc)
            return None
        if have != value:
            yield i, f"channels.{channel}.contribution_exact", f"{got}, recomputed {value}"
        if entry.get("contribution") is not None and entry["contribution"] != float(value):
            yield i, f"channels.{channel}.contribution", f"{entry['contribution']} is not float({value})"
        total += value
    try:
        score = rc.parse_fraction(hit.get("score_exact"), "score_exact")
    except ValueError as exc:
        yield i, "score_exact", str(exc)
        return None
    if score != total:
        yield i, "score_exact", f"{hit.get('score_exact')} is not the sum of its contributions ({total})"
    if hit.get("score") != float(score):
        yield i, "score", f"{hit.get('score')} is not float({hit.get('score_exact')})"
    return score
