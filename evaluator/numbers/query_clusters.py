"""Clusters of dependent queries: the resampling units of the cluster bootstrap (docs/reports.md).

Two queries are linked when they share evidence a reader would call "the same"; a cluster is a
connected component of that link over the queries of one contrast. The rules:

- `musique_single_hop_components_v1`: a MuSiQue-Ans id is `<category>__<n1>_<n2>[_<n3>[_<n4>]]`
  with one decimal number per hop (2 for 2hop, 3 for 3hop1/3hop2, 4 for 4hop1/4hop2/4hop3, whatever
  the composition shape), n_i being `question_decomposition[i].id`, the id of the single-hop
  question the step reuses (true of every row of the shared sample; the 2,417 official dev ids all
  carry exactly hop-many numbers). Queries that share a number share a single-hop question.
  Numbers are compared as integers.
- `supporting_titles_v1` (HotpotQA, 2WikiMultihopQA): queries are linked when the titles of their
  judged documents (from `source.json`: judgments -> documents -> title, compared as exact strings)
  intersect.

`auto` (what a protocol that declares nothing gets) is the MuSiQue rule when every query id of the
contrast is a MuSiQue id, else the title rule. Clusters list their query ids sorted, and are ordered
by their smallest id, so all-singleton clusters come out in sorted query-id order: the exact order
of the query-level bootstrap.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence

from protocols.schema import CLUSTER_RULES

AUTO, MUSIQUE_RULE, TITLE_RULE = CLUSTER_RULES  # the names a protocol may declare (one home: the schema)
RULES = (MUSIQUE_RULE, TITLE_RULE)
_MUSIQUE_ID = re.compile(r"(2hop|3hop1|3hop2|4hop1|4hop2|4hop3)__([0-9]+(?:_[0-9]+)*)")


class ClusterError(ValueError):
    """A query that the declared rule cannot place (malformed id, judged document without a title)."""


def musique_components(query_id: str) -> tuple[int, ...] | None:
    """The single-hop question ids of a MuSiQue-Ans id, or None when it is not one (or has a number
    count other than its hop count)."""
    match = _MUSIQUE_ID.fullmatch(query_id)
    if match is None:
        return None
    numbers = tuple(int(n) for n in match.group(2).split("_"))
    return numbers if len(numbers) == int(match.group(1)[0]) else None


def resolve_rule(declared: str, query_ids: Iterable[str]) -> str:
    if declared != AUTO:
        if declared not in RULES:
            raise ClusterError(f"unknown cluster rule {declared!r} (known: {', '.join(RULES)}, {AUTO})")
        return declared
    return MUSIQUE_RULE if all(musique_components(q) is not None for q in query_ids) else TITLE_RULE


def link_keys(rule: str, query_ids: Sequence[str], queries: Mapping[str, Mapping] | None = None,
              titles: Mapping[str, str] | None = None) -> dict[str, Sequence[Hashable]]:
    """What each query shares with others under `rule`: component numbers or supporting titles."""
    keys: dict[str, Sequence[Hashable]] = {}
    for query_id in query_ids:
        if rule == MUSIQUE_RULE:
            numbers = musique_components(query_id)
            if numbers is None:
                raise ClusterError(f"query {query_id!r} is not a MuSiQue-Ans id <category>__<n1>_..._<nk> with one "
                                   f"number per hop; rule {MUSIQUE_RULE} cannot place it")
            keys[query_id] = list(numbers)
        elif rule == TITLE_RULE:
            if queries is None or titles is None:
                raise ClusterError(f"rule {TITLE_RULE} needs the queries' judgments and the documents' titles")
            judged = [doc for doc, grade in queries[query_id]["judgments"].items() if grade > 0]
            missing = [doc for doc in judged if doc not in titles]
            if missing:
                raise ClusterError(f"query {query_id!r}: judged document {missing[0]!r} has no title")
            keys[query_id] = sorted({titles[doc] for doc in judged})
        else:
            raise ClusterError(f"unknown cluster rule {rule!r}")
    return keys


def connected_clusters(keys: Mapping[str, Iterable[Hashable]]) -> list[list[str]]:
    """Connected components of "shares a key", each sorted, ordered by smallest member."""
    parent = {q: q for q in keys}

    def find(q: str) -> str:
        while parent[q] != q:
            parent[q] = parent[parent[q]]
            q = parent[q]
        return q

    owner: dict[Hashable, str] = {}
    for query_id in sorted(keys):
        for key in keys[query_id]:
            other = owner.setdefault(key, query_id)
            a, b = find(query_id), find(other)
            if a != b:  # the smaller id stays the root, so roots never depend on dict order
                parent[max(a, b)] = min(a, b)
    groups: dict[str, list[str]] = {}
    for query_id in sorted(keys):
        groups.setdefault(find(query_id), []).append(query_id)
    return sorted(groups.values(), key=lambda members: members[0])


def build_clusters(rule: str, query_ids: Sequence[str], queries: Mapping[str, Mapping] | None = None,
                   titles: Mapping[str, str] | None = None) -> list[list[str]]:
    return connected_clusters(link_keys(rule, query_ids, queries, titles))


def structure(clusters: Sequence[Sequence[str]]) -> dict:
    """Cluster count, largest cluster, singletons, and how many clusters of each size."""
    sizes: dict[int, int] = {}
    for members in clusters:
        sizes[len(members)] = sizes.get(len(members), 0) + 1
    return {
        "queries": sum(len(m) for m in clusters),
        "clusters": len(clusters),
        "largest": max((len(m) for m in clusters), default=0),
        "singletons": sizes.get(1, 0),
        "sizes": {str(size): count for size, count in sorted(sizes.items())},
    }
