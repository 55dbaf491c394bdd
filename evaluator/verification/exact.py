"""The exact rationals of the checks: GMP's rationals through gmpy2 (`mpq`).

Rank-derived scores (fusion, final graph scores), path strengths and walk masses are compared
exactly, never as floats. Python's `fractions.Fraction` did that in pure Python, about ten times
slower per operation and a hundred times slower to compare than GMP's C rationals; gmpy2 wraps
GMP, the arithmetic library computer algebra and number theory rely on, and its `mpq` is an exact
rational like `Fraction` (equal values compare and hash equal across the two, so tests may keep
writing `Fraction`s). python-flint's `fmpq` was measured too and is slower to compare from Python
(docs/full-scale.md, "Exact validation").
"""

from __future__ import annotations

from typing import Any

from gmpy2 import mpq as Rational

ZERO = Rational(0)
ONE = Rational(1)


def rational(value) -> Rational:
    """An int or a float exactly (a float is the binary fraction it stores), a `p/q` or decimal string
    as written (`"0.05"` is 1/20)."""
    return Rational(value)


def decimal(value) -> Rational:
    """A catalog number read as the decimal it is written as (0.05 is 1/20, not the binary float)."""
    return Rational(str(value))


def parse(text: Any, where: str) -> Rational:  # a page's value: anything, refused unless p/q
    """A page's `p/q` (integers, q non-zero); anything else is refused with `where` in the message."""
    try:
        numerator, denominator = text.split("/")
        return Rational(int(numerator), int(denominator))
    except (AttributeError, ValueError, ZeroDivisionError):
        raise ValueError(f"{where}: {text!r} is not an exact rational p/q") from None


def text(value) -> str:
    """`p/q` in lowest terms, the form pages carry."""
    return f"{value.numerator}/{value.denominator}"

