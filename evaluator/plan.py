"""The pinned plan of a campaign: every input digest, the lab it runs against, and the job order.

The plan is written before the first retrieval and never changes: an existing plan file must be
byte-for-byte the plan being pinned, so a campaign cannot be re-run against edited inputs, another
lab state or another order under the same plan name.

Job order: the jobs (query id, method, repetition) listed in sorted order, then permuted with
`numpy.random.default_rng(protocol_seed).permutation(len(jobs))` (PCG64), job i of the campaign
being sorted_jobs[permutation[i]].
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ground.artifacts import warmup_split
from ground.canonical import digest
from ground.errors import RefusedInput
from ground.files import save

PLAN_FORMAT = "graph_evaluation_plan_v1"


class PlanMismatch(RefusedInput):
    """An existing plan file that is not the plan this campaign would pin."""


def seeded_jobs(query_ids: list[str], methods: list[str], repetitions: int, seed: int) -> list[list]:
    ordered = [[q, m, r] for q in sorted(query_ids) for m in sorted(methods) for r in range(1, repetitions + 1)]
    permutation = np.random.default_rng(seed).permutation(len(ordered))
    return [ordered[int(i)] for i in permutation]


def smallest_query(queries: list[dict], split: str = "development") -> dict:
    """The warm-up query: fewest characters, ties by id, of the protocol's warm-up split (its
    development split, or for a test-only cohort the corpus warm-up query: docs/hipporag.md)."""
    if not queries:
        raise RefusedInput(f"no {split} query to warm up with")
    return min(queries, key=lambda q: (len(q["question"]), q["id"]))


def build_plan(frozen, state_digest: str, identity: dict, scope: str, fence: dict, store_digest: dict,
               clients: int = 1) -> dict:
    """The plan; `clients` > 1 (concurrent evaluation clients) is recorded as `clients`, and one client
    leaves the key out, so single-client plans keep the bytes they always had."""
    protocol = frozen.protocol
    evaluation = protocol["evaluation"]
    split = evaluation["split"]
    query_ids = [q["id"] for q in frozen.split_queries(split)]
    methods = sorted(protocol["methods"])
    seed = protocol["protocol_seed"]
    warmup = smallest_query(frozen.split_queries(warmup_split(protocol)), warmup_split(protocol))
    return {
        "format": PLAN_FORMAT,
        "protocol_version": protocol["protocol_version"],
        "digests": {**{k: frozen.digests[k] for k in ("protocol", "source", "fixture", "relations", "generation")},
                    "state": state_digest},
        "lab": {"lab_id": identity["lab_id"], "journal_id": identity["journal_id"], "scope": scope},
        "fence": fence,
        "store_digest": store_digest,
        "catalog_digest": digest(protocol["ranking_profiles"]),
        "seed": seed,
        "split": split,
        "queries": query_ids,
        "methods": methods,
        "repetitions": evaluation["repetitions"],
        "warmup": {"query_id": warmup["id"], "methods": methods},
        "job_order": "numpy.random.default_rng(seed).permutation over jobs sorted by (query, method, repetition)",
        "jobs": seeded_jobs(query_ids, methods, evaluation["repetitions"], seed),
        **({"clients": clients} if clients != 1 else {}),
    }


def plan_text(plan: dict) -> str:
    # the exact bytes ground.save writes, so an existing file can be compared byte for byte
    return json.dumps(plan, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def pin(path: str | Path, plan: dict) -> str:
    """Write the plan, or accept an existing file only when it is byte-identical. Returns its digest."""
    path = Path(path)
    if path.is_symlink():
        raise PlanMismatch(f"plan {path} is a symbolic link")
    if path.exists() and not path.is_file():
        raise PlanMismatch(f"plan {path} exists and is not a file")
    if path.exists():
        existing = path.read_bytes()
        if existing != plan_text(plan).encode("utf-8"):
            try:
                old = json.loads(existing)
                fields = sorted(k for k in set(old) | set(plan) if old.get(k) != plan.get(k))
            except ValueError:
                fields = ["<not JSON>"]
            raise PlanMismatch(f"existing plan {path} differs from the plan being pinned (fields: {', '.join(fields)})")
    else:
        save(path, plan)
    return digest(plan)
