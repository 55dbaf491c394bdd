"""Two private reports of the same protocol and inputs: are the rankings and pages byte-identical?

    lab bench compare-campaigns BEFORE/report.json AFTER/report.json

For every (query, method) row present in both: the document ranking, the record ids, the float
scores, and the digest of the stored page with its `fence` removed (the fence names the lab's
journal, whose id derives from the lab's random id, so it differs between any two labs even
when everything else is equal). Also prints each method's retrieval and HTTP p50 from both
reports (a before/after latency table; the machine's load at each run is not in the report, so
read it beside the load averages you noted). Exit 0 when every shared row is identical, 1 when
any differs, 2 when the reports cannot be compared (other protocol or frozen inputs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ground.canonical import digest


def page_digest(page: dict) -> str:
    return digest({k: v for k, v in page.items() if k != "fence"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench compare-campaigns", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    before, after = (json.loads(p.read_text(encoding="utf-8")) for p in (args.before, args.after))
    for name in ("protocol", "fixture", "relations"):
        if before["hash_chain"][name] != after["hash_chain"][name]:
            print(f"cannot compare: the {name} digests differ", file=sys.stderr)
            return 2
    rows_a = {(r["query_id"], r["method"]): r for r in before["rows"]}
    rows_b = {(r["query_id"], r["method"]): r for r in after["rows"]}
    shared = sorted(set(rows_a) & set(rows_b))
    differing = 0
    print("| method | rows | rankings identical | scores identical | pages identical (fence aside) | "
          "retrieval p50 ms before / after | HTTP p50 ms before / after |")
    print("|---|---|---|---|---|---|---|")
    for method in sorted({m for _, m in shared}, key=list(before["protocol"]["methods"]).index):
        keys = [k for k in shared if k[1] == method]
        same_rank = sum(rows_a[k]["ranking"] == rows_b[k]["ranking"] and rows_a[k]["records"] == rows_b[k]["records"]
                        for k in keys)
        same_score = sum(rows_a[k]["scores"] == rows_b[k]["scores"] for k in keys)
        same_page = sum(page_digest(rows_a[k]["page"]) == page_digest(rows_b[k]["page"]) for k in keys)
        differing += len(keys) - min(same_rank, same_score, same_page)
        la, lb = before["latency"][method], after["latency"][method]
        print(f"| {method} | {len(keys)} | {same_rank} | {same_score} | {same_page} | "
              f"{la['retrieval_ms']['p50']:.3f} / {lb['retrieval_ms']['p50']:.3f} | "
              f"{la['http_ms']['p50']:.3f} / {lb['http_ms']['p50']:.3f} |")
    only = sorted(set(rows_a) ^ set(rows_b))
    print(f"\n{len(shared)} shared rows, {differing} differing; {len(only)} rows in one report only")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
