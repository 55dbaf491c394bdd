"""The metric registry: every per-query metric of a report, declared once, one module per metric.

Each module of this package whose name does not start with `_` declares `METRIC`, a `Metric`
(protocols/metrics/_base.py) named as the module. From this table derive the evaluator's per-query
metrics and their column order (evaluator/numbers/metrics.py `query_metrics`), the labels tables
print (evaluator/views/tables.py `metric_label`) and the names a protocol may contrast on
(protocols/schema.py), so a misspelt `"ndgc@10"` is refused when the protocol loads, before
anything runs. It sits in protocols/ because the schema, which imports nothing above protocols,
must know the names. Adding a metric: one new module here (docs/extend-a-method.md, "A metric").
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Sequence

from protocols.metrics._base import CHAIN, JUDGMENTS, Metric


def _collect() -> dict[str, Metric]:
    """Every declared metric, in `position` order; a module without a METRIC named as itself, or two
    metrics at one position, stops the import (the table would be ambiguous)."""
    found: list[Metric] = []
    for module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
        if module.startswith("_"):
            continue
        metric = getattr(importlib.import_module(f"{__name__}.{module}"), "METRIC", None)
        if not isinstance(metric, Metric) or metric.name != module:
            raise RuntimeError(f"protocols/metrics/{module}.py must declare METRIC = Metric({module!r}, ...)")
        if metric.reads not in (JUDGMENTS, CHAIN):
            raise RuntimeError(f"protocols/metrics/{module}.py: reads must be {JUDGMENTS!r} or {CHAIN!r}")
        found.append(metric)
    positions = [m.position for m in found]
    if len(set(positions)) != len(positions):
        raise RuntimeError(f"protocols/metrics: two metrics share a position: {sorted(positions)}")
    return {m.name: m for m in sorted(found, key=lambda m: m.position)}


METRICS: dict[str, Metric] = _collect()
STANDARD = tuple(name for name, metric in METRICS.items() if metric.standard)


def reported(k: int, recall_cutoffs: Sequence[int], requested: Iterable[str] = ()) -> list[tuple[str, Metric, int]]:
    """(`name@cutoff`, metric, cutoff) for every value a report row holds, in column order: the
    standard metrics and the `requested` ones (a protocol's `evaluation.metrics`)."""
    wanted = set(STANDARD) | set(requested)
    return [(f"{name}@{cutoff}", metric, cutoff) for name, metric in METRICS.items() if name in wanted
            for cutoff in metric.cutoffs(k, recall_cutoffs)]


def names(evaluation: dict) -> list[str]:
    """The `name@cutoff` columns a protocol's evaluation block gets, in order."""
    return [name for name, _, _ in reported(evaluation["k"], evaluation["recall_cutoffs"],
                                            evaluation.get("metrics", ()))]


def label(name: str) -> str:
    """`judged_recall@10` -> `judged R@10`; a name no metric declares is printed as it is."""
    base, _, cutoff = name.partition("@")
    metric = METRICS.get(base)
    return (metric.label if metric else base) + (f"@{cutoff}" if cutoff else "")


__all__ = ["CHAIN", "JUDGMENTS", "METRICS", "Metric", "STANDARD", "label", "names", "reported"]
