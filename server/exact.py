"""Exact rationals for rank-derived scores, and an exact order that stays fast.

Scores are kept as unreduced integer pairs (numerator, denominator). Sorting uses the correctly
rounded float `numerator / denominator` (Python's int true division rounds correctly, and
rounding is monotone), then re-sorts each run of equal floats by the exact value, so two
mathematically equal scores are always equal and order by record id, and two different ones can
never swap because of rounding.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import groupby


@lru_cache(maxsize=256)  # a handful of catalog constants, asked for on every step and channel
def rational(value: float | int) -> tuple[int, int]:
    """A catalog parameter as an exact rational, read as the decimal it is written as."""
    fraction = Fraction(str(value))
    return fraction.numerator, fraction.denominator


def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] * b[1] + b[0] * a[1], a[1] * b[1]


def to_float(value: tuple[int, int]) -> float:
    return value[0] / value[1]


def to_text(value: tuple[int, int]) -> str:
    fraction = Fraction(*value)
    return f"{fraction.numerator}/{fraction.denominator}"


def exact_order(items: list, value, rest) -> list:
    """`items` by value(item) desc (exact), then rest(item) asc; value returns (num, den)."""
    keyed = [(-(v[0] / v[1]), rest(item), v, item) for item in items for v in (value(item),)]
    keyed.sort(key=lambda k: (k[0], k[1]))
    ordered = []
    for _, run in groupby(keyed, key=lambda k: k[0]):
        run = list(run)
        if len(run) > 1:
            n0, d0 = run[0][2]
            if not all(n * d0 == n0 * d for n, d in (k[2] for k in run)):
                run.sort(key=lambda k: (-Fraction(*k[2]), k[1]))
            # else: an exact tie, already ordered by the rest of the key (the id)
        ordered.extend(k[3] for k in run)
    return ordered
