"""server/retrieval/exact.py's fast paths against their definitions: `to_text` against `Fraction`,
`exact_order` against a plain sort by the exact value then the rest of the key."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from server.retrieval import exact


def test_to_text_is_the_reduced_fraction():
    rng = random.Random(7)
    values = [(0, 5), (0, -3), (6, 4), (-6, 4), (6, -4), (-6, -4), (1, 1), (2**80 + 2, 2**70 * 6)]
    values += [(rng.randint(-10**30, 10**30), rng.choice([-1, 1]) * rng.randint(1, 10**30)) for _ in range(5000)]
    values += [(np.int64(12), np.int64(-18)), (np.int64(-7), np.int64(21))]
    for num, den in values:
        fraction = Fraction(int(num), int(den))
        assert exact.to_text((num, den)) == f"{fraction.numerator}/{fraction.denominator}"
    with pytest.raises(ZeroDivisionError):
        exact.to_text((3, 0))


def test_exact_order_is_the_exact_sort():
    rng = random.Random(11)
    for _ in range(300):
        # small numerators and denominators give many exact ties and many equal floats
        items = [(f"id-{rng.randrange(10**6):06d}-{i}", (rng.randint(0, 30), rng.randint(1, 12)))
                 for i in range(rng.randint(0, 80))]
        # values equal as floats but not exactly (they must still order by the exact value)
        items += [(f"near-{i}", (10**17 + i, 10**17)) for i in range(rng.randint(0, 4))]
        rng.shuffle(items)
        want = sorted(items, key=lambda item: (-Fraction(*item[1]), item[0]))
        assert exact.exact_order(list(items), lambda item: item[1], lambda item: item[0]) == want
