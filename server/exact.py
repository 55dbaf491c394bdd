"""Exact rationals for rank-derived scores, and an exact order that stays fast.

Scores are kept as unreduced integer pairs (numerator, denominator). Sorting uses the correctly
rounded float `numerator / denominator` (Python's int true division rounds correctly, and
rounding is monotone), then re-sorts each run of equal floats by the exact value, so two
mathematically equal scores are always equal and order by record id, and two different ones can
never swap because of rounding.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import groupby


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
    items = sorted(items, key=lambda item: (-to_float(value(item)), rest(item)))
    ordered = []
    for _, run in groupby(items, key=lambda item: to_float(value(item))):
        run = list(run)
        if len(run) > 1:
            run.sort(key=lambda item: (-Fraction(*value(item)), rest(item)))
        ordered.extend(run)
    return ordered
