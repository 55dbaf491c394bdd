"""The entity relations of `document_entity_graph_v1`, recomputed by the evaluator's own code.

evaluator/inputs.py rebuilds every relations file with the builder it names (byte for byte). For
the entity relations that is the builder checking itself, so they are also recomputed here from
the file's projection and the numbers and word lists of its policy, by another reading of the
rules of docs/graph-v4.md: the words are found one by one with their offsets (the builder splits
the text once), each word classed (capitalized, number, joiner, other), runs cut at every class or
gap that ends one, trimmed at both ends, keys enumerated per run, and every pair of paragraphs holding a key held by
2 or 3 paragraphs linked, with the longest (then smallest) such key as evidence. The file's
`shares_name` relations must be exactly those: same pairs, same evidence, same ids and provenance.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from protocols.canonical import digest

ENTITY_METHOD = "document_entity_graph_v1"
KIND = "shares_name"
EVIDENCE_PREFIX = "shared_name:"
MIN_SINGLE_CHARS = 4
WORD = re.compile(r"\w+")


def entity_failures(relations: Mapping) -> list[str]:
    """Differences between the file's entity relations and the recomputation; [] when they agree
    or when the file is not an entity graph."""
    if relations.get("method") != ENTITY_METHOD:
        return []
    policy = relations["policy"]["entity"]
    revision = digest(relations["policy"])
    want = {}
    for (source, target), key in recompute_links(relations["projection"], policy).items():
        edge_id = "edge-" + digest([source, target, KIND])
        want[edge_id] = {"id": edge_id, "kind": KIND, "source": source, "target": target,
                         "provenance": {"origin": "tool_observation", "method": ENTITY_METHOD,
                                        "method_revision": revision, "evidence_ref": EVIDENCE_PREFIX + key,
                                        "model": None}}
    have = {rel["id"]: rel for rel in relations["relations"] if rel.get("kind") == KIND}
    failures = [f"relation {rid} ({want[rid]['provenance']['evidence_ref']}) is missing"
                for rid in sorted(set(want) - set(have))]
    failures += [f"relation {rid} ({have[rid]['provenance'].get('evidence_ref')}) links no shared rare name"
                 for rid in sorted(set(have) - set(want))]
    failures += [f"relation {rid} differs: {have[rid]} against {want[rid]}"
                 for rid in sorted(set(have) & set(want)) if have[rid] != want[rid]]
    return failures


def recompute_links(projection: list[Mapping], policy: Mapping) -> dict[tuple[str, str], str]:
    """(smaller id, larger id) -> evidence key, per the policy's numbers and word lists."""
    names = policy["names"]
    joiners, leading = frozenset(names["joiners"]), frozenset(names["leading_words_dropped"])
    low, high = policy["shared_name"]["documents"]
    holders: dict[str, list[str]] = {}
    for doc in sorted(projection, key=lambda d: d["id"]):
        for key in sorted(keys_of(doc["paragraph_text"], joiners, leading, names["max_key_words"])):
            holders.setdefault(key, []).append(doc["id"])
    best: dict[tuple[str, str], str] = {}
    for key, ids in holders.items():
        if not low <= len(ids) <= high:
            continue
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                pair = (ids[i], ids[j])
                held = best.get(pair)
                if held is None or (-len(key.split(" ")), key) < (-len(held.split(" ")), held):
                    best[pair] = key
    return best


def keys_of(text: str, joiners: frozenset, leading: frozenset, max_words: int) -> set[str]:
    text = unicodedata.normalize("NFKC", text)
    runs: list[list[str]] = []
    run: list[str] = []
    previous_end = 0
    for match in WORD.finditer(text):  # the words with their offsets; a gap is what lies between two
        word = match.group()
        if run and not _joinable(text[previous_end:match.start()]):
            runs.append(run)
            run = []
        kind = _class(word, joiners)
        if kind == "capital" or (run and kind in ("number", "joiner")):
            run.append(word)
        elif run:
            runs.append(run)
            run = []
        previous_end = match.end()
    if run:
        runs.append(run)
    keys: set[str] = set()
    for words_of_run in runs:
        trimmed = _trim(words_of_run, leading)
        for start in range(len(trimmed)):
            if trimmed[start] in joiners or trimmed[start][:1].isdigit():
                continue
            for end in range(start, min(start + max_words, len(trimmed))):
                if trimmed[end] in joiners:
                    continue
                key = " ".join(trimmed[start:end + 1])
                if key not in leading and not key.isdecimal() and (" " in key or len(key) >= MIN_SINGLE_CHARS):
                    keys.add(key)
    return keys


def _joinable(gap: str) -> bool:
    """Whitespace only, or one hyphen with whitespace around it."""
    return gap.isspace() or gap.strip() == "-"


def _class(word: str, joiners: frozenset) -> str:
    if word[0].isupper():
        return "capital"
    if word[0].isdigit():
        return "number"
    return "joiner" if word.casefold() in joiners else "other"


def _trim(run: list[str], leading: frozenset) -> list[str]:
    end = len(run)
    while end and not (run[end - 1][0].isupper() or run[end - 1][0].isdigit()):
        end -= 1
    start = 0
    while start < end and run[start].casefold() in leading:
        start += 1
    return [word.casefold() for word in run[start:end]]
