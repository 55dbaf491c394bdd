"""How much LinearRAG's result depends on the orders its code leaves to chance (docs/linearrag.md).

    lab bench linearrag-draws --runs RUN [RUN ...] [--draws 8] [--json PATH]

Each RUN is a finished campaign of a protocol with linearrag_v2. Its store (copied, so the run stays
as it was) is loaded as the lab server loads it, and the linearrag route itself (server code, in
this process) answers every test question again: once with the profile's declared draw (which must
give the campaign's ranking on every question: a check of the replay), with DRAWS - 1 other seeds of
the same rule, and with v1's fixed ascending order. Per draw it prints the mean nDCG@10 over the
test questions, then the draws' mean, spread (sd, min, max), where the declared draw and the
ascending order sit among them, and the share of questions whose top 10 changes with the draw.

A measurement, not a design step: nothing here chooses a parameter, and the seeds are numbered.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from ground.canonical import digest
from ground.errors import RefusedInput
from protocols.metrics.ndcg import ndcg

K = 10


def replay(run: Path, draws: int) -> dict:
    from evaluator.evaluate.evaluate import search_body
    from evaluator.inputs import load_frozen
    from server.families.linearrag.linearrag_route import search_linearrag
    from server.http.app import Lab
    from server.retrieval.indexes import Indexes
    from server.retrieval.request import Search
    from server.store.credentials import Credentials
    from server.store.store import Store, memory_id

    frozen = load_frozen(run / "protocol.json", run / "fixture.json", run / "relations.json")
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    method = next(name for name, m in frozen.protocol["methods"].items() if m["route"] == "linearrag")
    spec = frozen.protocol["methods"][method]
    profile = frozen.protocol["ranking_profiles"][spec["profile"]]
    if "draw" not in profile:
        raise RefusedInput(f"{run}: {method} runs {spec['profile']}, which declares no draw (a v2 profile does)")
    scope = json.loads((run / "lab-access.json").read_text(encoding="utf-8"))["scope"]
    campaign = {row["query_id"]: row["ranking"] for row in report["rows"] if row["method"] == method}
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "lab-db"
        shutil.copytree(run / "lab-db", copy)
        store = Store.reopen(str(copy))
        lab = Lab(store=store, credentials=Credentials(store), indexes=Indexes())
        lab.feed_all()
        index = lab.indexes.scope(scope)
        doc_of = {memory_id(scope, d): d for d in frozen.documents}
        variants = {f"seed {i + 1}": {**profile, "draw": {**profile["draw"], "seed": _seed(profile, i)}}
                    for i in range(draws)}
        variants["ascending (v1)"] = {k: v for k, v in profile.items() if k != "draw"}
        queries = frozen.split_queries(frozen.protocol["evaluation"]["split"])
        scores: dict[str, list[float]] = {name: [] for name in variants}
        tops: dict[str, list[tuple]] = {name: [] for name in variants}
        replayed_equal = 0
        for query in queries:
            body = search_body(spec, query, frozen)
            for name, variant in variants.items():
                page = search_linearrag(index, Search("linearrag", spec["profile"], variant, digest(variant),
                                                      spec["limit"], body))
                ranking = [doc_of[hit["id"]] for hit in page["hits"]]
                scores[name].append(ndcg(ranking, query["judgments"], K))
                tops[name].append(tuple(ranking[:K]))
                if name == "seed 1":
                    replayed_equal += ranking == campaign.get(query["id"])
        store.close()
    return summary(run, method, scores, tops, replayed_equal, len(queries))


def _seed(profile: dict, i: int) -> str:
    """The declared seed for draw 1, then the same name numbered on (linearrag-draw-2, -3, ...)."""
    declared = profile["draw"]["seed"]
    stem = declared.rsplit("-", 1)[0]
    return declared if i == 0 else f"{stem}-{i + 1}"


def summary(run: Path, method: str, scores: dict, tops: dict, replayed_equal: int, count: int) -> dict:
    drawn = [name for name in scores if name.startswith("seed")]
    means = {name: statistics.fmean(values) for name, values in scores.items()}
    per_question = [statistics.fmean(scores[name][q] for name in drawn) for q in range(count)]
    changed = sum(len({tops[name][q] for name in drawn}) > 1 for q in range(count))
    draw_means = [means[name] for name in drawn]
    return {"run": str(run), "method": method, "questions": count, "replayed_equal": replayed_equal,
            "means": means, "draws_mean": statistics.fmean(draw_means),
            "draws_sd": statistics.stdev(draw_means) if len(draw_means) > 1 else 0.0,
            "draws_min": min(draw_means), "draws_max": max(draw_means),
            "per_question_mean": statistics.fmean(per_question), "questions_changed": changed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench linearrag-draws", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    parser.add_argument("--runs", type=Path, nargs="+", required=True, help="finished linearrag_v2 campaigns")
    parser.add_argument("--draws", type=int, default=8, help="seeds of the draw rule to try, the declared one first")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.draws < 2:
        parser.error("--draws must be at least 2: a spread needs two draws")
    load = os.getloadavg()[0]
    found = []
    for run in args.runs:
        print(f"{run}: replaying every test question under {args.draws} draws and the ascending order "
              f"(load {load:.2f})", file=sys.stderr, flush=True)
        case = replay(run, args.draws)
        found.append(case)
        print(f"{run.name}: {case['method']}, {case['questions']} questions; the declared draw replays the "
              f"campaign's ranking on {case['replayed_equal']} of {case['questions']}")
        print("  nDCG@10 by draw: " + ", ".join(f"{name} {value:.4f}" for name, value in case["means"].items()))
        print(f"  draws: mean {case['draws_mean']:.4f}, sd {case['draws_sd']:.4f}, range [{case['draws_min']:.4f}, "
              f"{case['draws_max']:.4f}]; declared draw {case['means']['seed 1']:.4f}, ascending (v1) "
              f"{case['means']['ascending (v1)']:.4f}; top 10 changes with the draw on {case['questions_changed']} of "
              f"{case['questions']} questions (load {os.getloadavg()[0]:.2f})")
    if args.json is not None:
        args.json.write_text(json.dumps(found, indent=2), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
