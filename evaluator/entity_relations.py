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

from ground.canonical import digest

ENTITY_METHOD = "document_entity_graph_v1"
NER_METHOD = "document_ner_graph_v1"
NER_KIND = "shares_entity"
IMPORTED_METHOD = "imported_triples_v1"
IMPORTED_KIND = "shares_argument"
KIND = "shares_name"
EVIDENCE_PREFIX = "shared_name:"
MIN_SINGLE_CHARS = 4
WORD = re.compile(r"\w+")


def entity_failures(relations: Mapping) -> list[str]:
    """Differences between the file's entity relations and the recomputation; [] when they agree
    or when the file is not an entity graph."""
    if relations.get("method") == IMPORTED_METHOD:
        return imported_failures(relations)
    if relations.get("method") == NER_METHOD:
        return _name_failures(relations, _v4_policy(relations["policy"])) + ner_failures(relations)
    if relations.get("method") != ENTITY_METHOD:
        return []
    return _name_failures(relations, relations["policy"])


def _v4_policy(ner_policy: Mapping) -> dict:
    """document_entity_graph_v1's policy inside document_ner_graph_v1's: its name relations keep
    the v4 revision, so the v4 policy is what their revision digests."""
    return {"method": ENTITY_METHOD, "inputs": ner_policy["inputs"], "title_graph": ner_policy["title_graph"],
            "entity": ner_policy["entity"]}


def _name_failures(relations: Mapping, whole_policy: Mapping) -> list[str]:
    policy = whole_policy["entity"]
    revision = digest(whole_policy)
    want = {}
    for (source, target), key in recompute_links(relations["projection"], policy).items():
        edge_id = "edge-" + digest([source, target, KIND])
        want[edge_id] = {"id": edge_id, "kind": KIND, "source": source, "target": target,
                         "provenance": {"origin": "tool_observation", "method": ENTITY_METHOD,
                                        "method_revision": revision, "evidence_ref": EVIDENCE_PREFIX + key,
                                        "model": None}}
    return kind_failures(relations, KIND, want, "rare name")


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


def ner_failures(relations: Mapping) -> list[str]:
    """document_ner_graph_v1's `shares_entity` relations against the evaluator's own reading of the
    pinned NER output (the model is an input pinned by `ner_digest`, not re-run): for each entity
    text, the set of passages whose entities hold it; a set of 2 to the policy's maximum passages
    gives a star from its smallest id. Same ids, ends, evidence and provenance, or a failure."""
    ner_output, policy = relations.get("ner"), relations["policy"]["ner"]
    if not isinstance(ner_output, Mapping) or digest(ner_output) != relations.get("ner_digest"):
        return ["the NER output is missing or is not the one ner_digest pins"]
    if sorted(d["id"] for d in ner_output["documents"]) != sorted(d["id"] for d in relations["projection"]):
        return ["the NER output's documents are not the projection's"]
    passages: dict[str, set[str]] = {}
    for doc in ner_output["documents"]:
        for text, _label in doc["entities"]:
            passages.setdefault(text, set()).add(doc["id"])
    low, high = policy["documents"]
    revision = digest(relations["policy"])
    model = ner_output["model"]
    label = f"{model['model_distribution']}=={model['model_version']} files:{digest(model['file_sha256'])[:16]}"
    want = {}
    for text, held in passages.items():
        evidence = policy["evidence_ref"].replace("<entity>", text)
        if not low <= len(held) <= high or len(evidence) > 1024:
            continue
        first, *rest = sorted(held)
        for other in rest:
            edge_id = "edge-" + digest([first, other, NER_KIND, text])
            want[edge_id] = {"id": edge_id, "kind": NER_KIND, "source": first, "target": other,
                             "provenance": {"origin": policy["origin"], "method": NER_METHOD,
                                            "method_revision": revision, "evidence_ref": evidence,
                                            "model": label}}
    return kind_failures(relations, NER_KIND, want, "entity")


IMPORTED_SUMMARY = ("format", "producer", "files", "policy", "counts", "left_out")


def imported_summary(relations: Mapping) -> dict | None:
    """What a report says of an imported graph (its provenance, policy and every count), read from
    the relations file; None for a graph the lab built itself."""
    imported = relations.get("imported")
    if not isinstance(imported, Mapping):
        return None
    return {key: imported[key] for key in IMPORTED_SUMMARY}


def imported_failures(relations: Mapping) -> list[str]:
    """imported_triples_v1's `shares_argument` relations against the evaluator's own reading of the
    pinned imported section (docs/graph-import.md): every subject and object, normalized (NFKC,
    casefold, whitespace split and joined), mapped to the passages naming it and their predicates;
    an argument named by 2 to the policy's maximum passages gives a star from its smallest id, each
    relation carrying the argument and the two passages' predicates cut to fit the reference."""
    imported, policy = relations.get("imported"), relations["policy"]["imported"]
    if not isinstance(imported, Mapping) or digest(imported) != relations.get("imported_digest"):
        return ["the imported graph is missing or is not the one imported_digest pins"]
    ids = {d["id"] for d in relations["projection"]}
    stray = [d["id"] for d in imported["documents"] if d["id"] not in ids]
    if stray:
        return [f"the imported graph's passage {stray[0]} is not in the projection"]
    named: dict[str, dict[str, set[str]]] = {}
    for doc in imported["documents"]:
        for subject, predicate, obj in doc["triples"]:
            for text in {subject, obj}:
                argument = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
                if argument:
                    named.setdefault(argument, {}).setdefault(doc["id"], set()).add(predicate)
    low, high = policy["documents"]
    revision = digest(relations["policy"])
    want = {}
    for argument, passages in named.items():
        if not low <= len(passages) <= high:
            continue
        first, *rest = sorted(passages)
        for other in rest:
            evidence = _argument_evidence(argument, sorted(passages[first] | passages[other]))
            if evidence is None:
                continue
            edge_id = "edge-" + digest([first, other, IMPORTED_KIND, argument])
            want[edge_id] = {"id": edge_id, "kind": IMPORTED_KIND, "source": first, "target": other,
                             "provenance": {"origin": policy["origin"], "method": IMPORTED_METHOD,
                                            "method_revision": revision, "evidence_ref": evidence,
                                            "model": imported["producer"]}}
    return kind_failures(relations, IMPORTED_KIND, want, "argument")


ARGUMENT_LIMIT = 1024  # the lab's short strings: an evidence_ref holds at most this many characters


def _argument_evidence(argument: str, predicates: list[str]) -> str | None:
    """'argument:<a>' newline 'predicates:' and the longest prefix of the sorted predicates, joined
    by ' | ', whose reference fits the limit with the ' (+N more)' note for the N cut; None when the
    argument alone does not fit."""
    head = f"argument:{argument}\npredicates:"
    lengths = [len(p) for p in predicates]
    for keep in range(len(predicates), -1, -1):
        cut = len(predicates) - keep
        size = len(head) + sum(lengths[:keep]) + 3 * max(keep - 1, 0) + (len(f" (+{cut} more)") if cut else 0)
        if size <= ARGUMENT_LIMIT:
            return head + " | ".join(predicates[:keep]) + (f" (+{cut} more)" if cut else "")
    return None


def kind_failures(relations: Mapping, kind: str, want: Mapping[str, dict], shared: str) -> list[str]:
    """The file's relations of `kind` against the recomputed ones (`want`, by id): each missing,
    each unexplained (it links no shared `shared`), each different."""
    have = {rel["id"]: rel for rel in relations["relations"] if rel.get("kind") == kind}
    failures = [f"relation {rid} ({want[rid]['provenance']['evidence_ref']!r}) is missing"
                for rid in sorted(set(want) - set(have))]
    failures += [f"relation {rid} ({have[rid]['provenance'].get('evidence_ref')!r}) links no shared {shared}"
                 for rid in sorted(set(have) - set(want))]
    failures += [f"relation {rid} differs: {have[rid]} against {want[rid]}"
                 for rid in sorted(set(have) & set(want)) if have[rid] != want[rid]]
    return failures
