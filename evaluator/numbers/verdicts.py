"""One verdict word per paired contrast, by a fixed rule that knows what its cohort can decide.

The rule (docs/reports.md, "At a glance"), read on the contrast's primary unit (query, or cluster
where the protocol declares it) and on the p the report quotes (Holm's in a corrected family):

1. "better" / "worse": p < ALPHA and the interval excludes 0 (above 0: better; below: worse);
2. else "cohort too small to tell": fewer than two units; or the smallest p the test can reach on
   this cohort exceeds ALPHA (no outcome could have been called); or a detectable effect larger
   than SMALLEST_EFFECT (the cohort could have missed an effect that size);
3. else "no reliable difference".

The smallest reachable p of the paired sign-flip test: exact over all 2^U patterns, a pattern is as
extreme as the observed one at least when it flips only the units whose value is zero, or all the
others, so p >= 2 / 2^k with k the units with a non-zero value (k = wins + losses on the query
unit; on the cluster unit the report does not carry the cluster sums, so k is bounded by the number
of clusters and the bound can only understate it); Monte Carlo over R patterns: p >= 1 / (1 + R).
Holm's adjustment can only raise a p, so the raw bound also bounds the verdict's p.

When the interval and the test disagree (one excludes 0, the other does not), the verdict follows
the rule above, which asks for both, and `disagreement` says why in one line.
"""

from __future__ import annotations

from collections.abc import Mapping

ALPHA = 0.05
SMALLEST_EFFECT = 0.05
VERDICTS = ("better", "worse", "no reliable difference", "cohort too small to tell")
RULE = ("better/worse: p < 0.05 and the 95% interval excludes 0; otherwise cohort too small to tell when "
        "there are fewer than two units, the smallest p the test can reach on this cohort exceeds 0.05, or the "
        "detectable effect exceeds 0.05; otherwise no reliable difference (p, interval and detectable effect "
        "of the primary unit)")
# the rule's text in public reports exported before it knew the smallest reachable p
EARLIER_RULE = ("better/worse: p < 0.05 and the 95% interval excludes 0; otherwise cohort too small to tell when "
                "there are fewer than two units or the detectable effect exceeds 0.05; otherwise no reliable "
                "difference (p, interval and detectable effect of the primary unit)")


def smallest_p(method: str, nonzero: int, permutations: int) -> float:
    """The smallest p the paired sign-flip test can return: exact with `nonzero` units of non-zero
    value, or Monte Carlo over `permutations` patterns."""
    if method == "monte_carlo":
        return 1.0 / (1 + permutations)
    return 1.0 if nonzero == 0 else 2.0 ** (1 - nonzero)


def unit_numbers(contrast: Mapping, unit: str) -> Mapping:
    return (contrast.get("cluster") or {}) if unit == "cluster" else contrast


def corrected(contrast: Mapping) -> bool:
    """Whether the contrast sits in a multiplicity-corrected family (statistics.adjust_families names
    an uncorrected one "...: not adjusted"; a contrast written before Holm existed has no family)."""
    family = contrast.get("holm_family")
    return isinstance(family, str) and bool(family) and not family.endswith("not adjusted")


def verdict_p(contrast: Mapping, unit: str) -> tuple[str, str | None]:
    """(name, key) of the p the verdict rule reads: Holm's where the contrast is in a corrected
    family, else the raw randomization p."""
    if corrected(contrast) and unit_numbers(contrast, unit).get("p_value_holm") is not None:
        return "Holm p", "p_value_holm"
    return "p", "p_value"


def units(contrast: Mapping, unit: str) -> int:
    return contrast["queries"] if unit == "query" else unit_numbers(contrast, unit).get("clusters", 0)


def reachable_p(contrast: Mapping, unit: str, permutations: int) -> float:
    """The smallest p this contrast's test could have returned on its cohort (the module's bound)."""
    numbers = unit_numbers(contrast, unit)
    nonzero = contrast["wins"] + contrast["losses"] if unit == "query" else units(contrast, unit)
    return smallest_p(numbers.get("p_method", "exact"), nonzero, permutations)


def verdict(contrast: Mapping, unit: str, permutations: int | None = None) -> str:
    """The rule's word. `permutations=None` reads the rule as it stood before it knew the smallest
    reachable p: how a public report exported then is derived again (docs/reports.md)."""
    numbers = unit_numbers(contrast, unit)
    low, high = numbers["interval"]
    p = numbers.get(verdict_p(contrast, unit)[1])
    if p is not None and p < ALPHA and (low > 0 or high < 0):
        return "better" if low > 0 else "worse"
    effect = numbers.get("detectable_effect")
    unreachable = permutations is not None and reachable_p(contrast, unit, permutations) > ALPHA
    if units(contrast, unit) < 2 or unreachable or (effect is not None and effect > SMALLEST_EFFECT):
        return "cohort too small to tell"
    return "no reliable difference"


def disagreement(contrast: Mapping, unit: str, permutations: int) -> str | None:
    """One line when the interval and the test disagree about 0, saying why and which way the rule
    reads it; None when they agree."""
    numbers = unit_numbers(contrast, unit)
    low, high = numbers["interval"]
    name, key = verdict_p(contrast, unit)
    p = numbers.get(key)
    excludes = low > 0 or high < 0
    if p is None or excludes == (p < ALPHA):
        return None
    count = units(contrast, unit)
    if excludes:
        least = reachable_p(contrast, unit, permutations)
        limit = (f"; on this cohort no p below {least:.3g} is reachable" if least > ALPHA else "")
        return (f"The interval excludes 0 but {name} = {p:.3g} is not below {ALPHA}{limit}: a percentile "
                f"bootstrap over {count} {unit} units is too narrow when the deltas are few or skewed, "
                f"while the sign-flip test is exact given the units; the rule asks for both, so no "
                f"direction is called.")
    return (f"{name} = {p:.3g} is below {ALPHA} but the interval includes 0: the two procedures part at the "
            f"margin; the rule asks for both, so no direction is called.")
