"""Every field bound: seeded random single-field edits of every artifact, each refused by the audit
with a message that names the field or the artifact.

One real small campaign (tests/evaluation_fixtures.py) is audited in process. Its inputs are
loaded once; an edited fixture or relations file is loaded again through `evaluator.inputs.verify`
(the loader's own check), and the audit's expensive pure steps share one `Memo`, keyed by the
digests of what they read, so a step an edit did not touch is not recomputed and a step it did
touch is. Report edits are audited without the public report, so the private report has to bind
each of its own fields (the public report's digest of it would catch any edit wholesale).
"""

from __future__ import annotations

import json
import math
import random
import time

import pytest

from evaluator.audit.audit import Given, Memo, audit_loaded
from evaluator.inputs import Frozen, load_frozen, verify
from ground.canonical import digest
from ground.errors import RefusedInput
from tests.evaluation_fixtures import exported_runs

# heavy: audits every single-field edit of an exported report; runs in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy

SEED = 20261201
COUNTS = {"report": 50, "public": 24, "fixture": 16, "relations": 12, "state": 12, "plan": 12}
# edits the issue names, made on top of the random ones
NAMED = {"report": [("warmup", 3, "http_ms"), ("jobs", 5, "retrieval_micros"), ("resources", "series", 2, 2),
                    ("started_at",), ("finished_at",), ("resources", "cpu_seconds"), ("sizes",),
                    ("before", "counts", "memories"), ("cross_checks", "queries")],
         "public": [("outputs", "html"), ("statistics", "means", "lexical", "ndcg@10", "interval", 0),
                    ("jobs", 7, "http_ms"), ("resources", "rss_bytes_max")]}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    run, _ = exported_runs(tmp_path_factory)
    frozen = load_frozen(run.protocol, run.fixture, run.relations, run.generation)
    values = {name: json.loads(run.file(name).read_text()) for name in ("report", "public", "state", "plan")}
    return run, frozen, values


def leaves(value, path=()) -> list[tuple]:
    """Paths of every scalar in a JSON value (empty containers count as leaves)."""
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in leaves(v, (*path, k))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in leaves(v, (*path, i))]
    return [path]


def pick(rng: random.Random, value: dict) -> tuple:
    """A leaf under a top-level field chosen uniformly, so small fields (warmup, resources, times)
    are edited as often as the large ones (rows, jobs)."""
    key = rng.choice(sorted(value))
    return rng.choice(leaves(value[key], (key,)))


def changed(rng: random.Random, value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, -1, 1000])
    if isinstance(value, float):
        kind = rng.choice(["ulp", "small", "large"])
        if kind == "ulp":  # the smallest possible edit of a measurement
            return math.nextafter(value, math.inf)
        return value + (1e-6 if kind == "small" else 1.0) * max(1.0, abs(value))
    if isinstance(value, str):
        if value and value[-1] in "0123456789abcdef":
            return value[:-1] + ("0" if value[-1] != "0" else "1")
        return value + "x"
    if value is None:
        return 0
    if isinstance(value, list):
        return [*value, 0]
    return {**value, "added": 0}


def edited(value, path: tuple, rng: random.Random, delete: bool):
    """A copy of `value` with one field changed (or deleted); untouched parts are shared, not copied."""
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = edited(value[head], rest, rng, delete)
    elif delete:
        del copy[head]
    else:
        copy[head] = changed(rng, value[head])
    return copy


def render(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def expected_name(artifact: str, path: tuple) -> str:
    """What a refusal of an edit at `path` must name."""
    if artifact == "report":
        return "seal" if path[0] == "seal" else render(path[:2])
    if artifact == "public":
        return f"public.json {render(path[:-1])}".rstrip()
    return {"fixture": "fixture", "relations": "relations", "state": "state file", "plan": "plan file"}[artifact]


def audit_edit(artifact: str, value, run, frozen: Frozen, values: dict, memo: Memo) -> list[str]:
    """The audit's failure lines for one edited artifact (or the loader's refusal). The audit is
    given the artifact edited and what it needs to check it, no more: an edited report is not
    compared with the clean state, plan or public report, so it has to be caught on its own."""
    given = Given()
    report = values["report"]
    if artifact in ("fixture", "relations"):
        loaded = Frozen(protocol=frozen.protocol, fixture=frozen.fixture, relations=frozen.relations,
                        generation=frozen.generation)
        setattr(loaded, artifact, value)
        try:
            verify(loaded)
        except RefusedInput as exc:
            return [f"error: {exc}"]
        frozen = loaded
    elif artifact == "report":
        report = value
    else:
        setattr(given, artifact, value)
        setattr(given, f"{artifact}_path", run.file(artifact))
    result = audit_loaded(report, frozen, given, memo=memo, log=lambda line: None)
    return [f"{name} {what}" for name, what in result.failures]


def test_every_single_field_edit_is_refused_and_named(campaign):
    run, frozen, values = campaign
    memo = Memo()
    # the untouched campaign holds, every artifact given
    given = Given(public=values["public"], public_path=run.public, state=values["state"], state_path=run.state,
                  plan=values["plan"], plan_path=run.plan)
    lines: list[str] = []
    assert audit_loaded(values["report"], frozen, given, memo=memo, log=lines.append).ok, lines
    assert {"ok seal", "ok record", "ok rows", "ok public", "ok state_file", "ok plan_file"} <= set(lines)

    artifacts = {**values, "fixture": frozen.fixture, "relations": frozen.relations}
    rng = random.Random(SEED)
    edits = [(a, p, False) for a, paths in NAMED.items() for p in paths]
    for artifact, count in COUNTS.items():
        for _ in range(count):
            edits.append((artifact, pick(rng, artifacts[artifact]), rng.random() < 0.1))
    started, cpu = time.monotonic(), time.process_time()
    accepted, unnamed = [], []
    for artifact, path, delete in edits:
        value = edited(artifacts[artifact], path, rng, delete)
        assert digest(value) != digest(artifacts[artifact])
        lines = audit_edit(artifact, value, run, frozen, values, memo)
        what = f"{artifact} {'deleted' if delete else 'changed'} {render(path)}"
        if not lines:
            accepted.append(what)
        elif not any(expected_name(artifact, path) in line for line in lines):
            unnamed.append(f"{what}: {lines[:3]}")
    print(f"{len(edits)} single-field edits, {len(edits) - len(accepted)} refused, in {time.monotonic() - started:.1f}s "
          f"({time.process_time() - cpu:.1f}s CPU)")
    assert len(edits) >= 100
    assert accepted == []
    assert unnamed == []
