"""Run inside a copy of the repository with the toy metric added (tests/protocols/test_metric_registry.py):
the one new file is the whole metric: registry, per-query values, labels and the protocol schema."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from evaluator.numbers import metrics
from evaluator.views.tables import metric_label
from protocols import metrics as registry
from protocols.schema import ProtocolError, validate_protocol

assert list(registry.METRICS)[-1] == "reciprocal_rank", list(registry.METRICS)
assert metric_label("reciprocal_rank@10") == "RR@10"
judgments, chain = {"a": 1, "b": 1}, ["a", "b"]
plain = metrics.query_metrics(["x", "a"], judgments, chain)
assert tuple(plain) == metrics.METRIC_ORDER  # not asked for: every report keeps its bytes
asked = metrics.query_metrics(["x", "a"], judgments, chain, requested=("reciprocal_rank",))
assert list(asked) == [*plain, "reciprocal_rank@10"] and asked["reciprocal_rank@10"] == 0.5, asked

protocol = json.loads(Path(sys.argv[1]).read_text())
asking = copy.deepcopy(protocol)
asking["evaluation"]["metrics"] = ["reciprocal_rank"]
asking["evaluation"]["contrast_metrics"].append("reciprocal_rank@10")
validate_protocol(asking)
protocol["evaluation"]["contrast_metrics"].append("reciprocal_rank@10")  # contrasted, never asked for
try:
    validate_protocol(protocol)
except ProtocolError as exc:
    assert "'reciprocal_rank@10' is not a metric this evaluation reports" in str(exc), exc
else:
    raise AssertionError("a metric the evaluation does not report was accepted as a contrast")
print("toy metric ok")
