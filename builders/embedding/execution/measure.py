"""What encoding cost: per-input rows and the totals of generation.json (measured, not reproducible)."""

from __future__ import annotations

import math


def measurements(ids: list[str], elapsed: list[float], tokens: list[int], max_tokens: float) -> list[dict]:
    return [{"id": i, "elapsed_ms": round(ms, 4), "tokens": n, "truncated": n > max_tokens}
            for i, ms, n in zip(ids, elapsed, tokens)]


def totals(rows: list[dict]) -> dict:
    ms = [r["elapsed_ms"] for r in rows]
    total = sum(ms)
    return {
        "count": len(rows),
        "elapsed_ms": round(total, 3),
        "per_second": round(len(rows) / (total / 1000), 3) if total > 0 else None,
        "p50_ms": round(percentile(ms, 0.50), 4),
        "p95_ms": round(percentile(ms, 0.95), 4),
        "max_ms": round(max(ms), 4),
        "tokens": sum(r["tokens"] for r in rows),
        "max_tokens_seen": max(r["tokens"] for r in rows),
        "truncated": sum(1 for r in rows if r["truncated"]),
    }


def percentile(values: list[float], p: float) -> float:
    """Linear interpolation at (n - 1) * p, as everywhere in the lab (docs/design.md §8)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * p
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
