"""document_title_graph_v1 on hand-built corpora, and against a brute-force reading of docs/design.md §5.1."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter

import pytest

from builders.normalize import normalize_text, title_is_eligible
from builders.title_graph import GraphInputError, build_relations, project, rebuild, verify_relations
from ground.artifacts import document_id
from ground.canonical import canonical, digest
from ground.command import run
from ground.errors import RefusedInput
from tests.conftest import SAMPLE_DIR, require_shared

SOURCE = "0" * 64


def doc(title: str, text: str) -> dict:
    return {"id": document_id(title, text), "title": title, "paragraph_text": text}


def edges_of(value: dict, kind: str) -> set[tuple[str, str]]:
    return {(r["source"], r["target"]) for r in value["relations"] if r["kind"] == kind}


# --- normalization and eligibility ---------------------------------------------------------------

def test_normalize_nfkc_casefold_word_tokens():
    assert normalize_text("  Zürich,  THE ﬁnest—City! ") == "zürich the finest city"
    assert normalize_text("Straße") == "strasse"
    assert normalize_text("...") == ""


@pytest.mark.parametrize("title, eligible", [
    ("1999", False),           # digits only
    ("２０１０", False),         # full-width digits are digits after NFKC
    ("war", False),            # short single token
    ("Rome", True),            # single token of 4 characters
    ("U S", True),             # several tokens, however short
    ("1999 2000", True),       # several tokens
    ("", False),
    ("!!", False),             # normalizes to nothing
])
def test_title_eligibility(title, eligible):
    assert title_is_eligible(normalize_text(title)) is eligible


# --- same_entity -----------------------------------------------------------------------------------

def test_same_title_neighbors_capped_at_four_one_assertion_per_pair():
    docs = [doc("Springfield", f"Town number {i}.") for i in range(6)]
    ids = sorted(d["id"] for d in docs)
    value = build_relations(docs, SOURCE)
    pairs = edges_of(value, "same_entity")
    # each document links to the first 4 others in id order; pairs asserted once, smaller id first
    expected = set()
    for me in ids:
        for other in [x for x in ids if x != me][:4]:
            expected.add(tuple(sorted((me, other))))
    assert pairs == expected
    assert all(s < t for s, t in pairs)
    assert len(value["relations"]) == len(pairs) == 14
    assert (ids[4], ids[5]) not in pairs          # the last two never reach each other's first 4
    degree = Counter(x for pair in pairs for x in pair)
    assert degree[ids[5]] == 4 and degree[ids[0]] == 5


def test_same_entity_matches_normalized_titles_only():
    a, b, c = doc("New-York", "One."), doc("new york", "Two."), doc("New York City", "Three.")
    pairs = edges_of(build_relations([a, b, c], SOURCE), "same_entity")
    assert pairs == {tuple(sorted((a["id"], b["id"])))}


# --- semantic_related --------------------------------------------------------------------------

def test_mention_direction_is_mentioning_to_mentioned():
    obama = doc("Barack Obama", "He was president.")
    speech = doc("A speech", "Delivered by barack OBAMA in 2009.")
    value = build_relations([obama, speech], SOURCE)
    assert edges_of(value, "semantic_related") == {(speech["id"], obama["id"])}


def test_mentions_are_space_delimited_and_read_paragraph_not_title():
    rome = doc("Rome", "The capital.")
    romeo = doc("Play", "Romeo loves Juliet.")                     # "romeo" is not "rome"
    titled = doc("Rome Hotel", "A hotel with a view.")             # its own title is not scanned
    value = build_relations([rome, romeo, titled], SOURCE)
    assert edges_of(value, "semantic_related") == set()


def test_ineligible_titles_are_never_mentioned():
    year = doc("1999", "A year.")
    war = doc("War", "A conflict.")
    text = doc("Essay", "In 1999 the war ended.")
    assert edges_of(build_relations([year, war, text], SOURCE), "semantic_related") == set()


def test_own_title_is_skipped_even_for_other_documents_of_that_title():
    p1, p2 = doc("Paris", "Paris is a city."), doc("Paris", "Paris, Texas is a town.")
    value = build_relations([p1, p2], SOURCE)
    assert edges_of(value, "semantic_related") == set()
    assert edges_of(value, "same_entity") == {tuple(sorted((p1["id"], p2["id"])))}


def test_candidates_ordered_by_title_length_then_id_and_capped_at_eight():
    titles = ["Alpha Beta Gamma Delta", "Alpha Beta Gamma", "Gamma Delta", "Epsilon",
              "Zeta Eta", "Theta", "Iota Kappa", "Lambda", "Mu Nu Xi", "Omicron"]
    targets = [doc(t, f"About {i}.") for i, t in enumerate(titles)]
    twin = doc("Theta", "Another theta.")                     # two targets share a title
    source = doc("Essay", "We read " + " and ".join(titles) + ".")
    value = build_relations(targets + [twin, source], SOURCE)
    got = {t for s, t in edges_of(value, "semantic_related") if s == source["id"]}
    everyone = targets + [twin]
    ranked = sorted(everyone, key=lambda d: (-len(normalize_text(d["title"])), d["id"]))
    assert got == {d["id"] for d in ranked[:8]}
    assert len(got) == 8


def test_evidence_refs_edge_ids_and_provenance():
    obama = doc("Barack Obama", "He was president.")
    obama2 = doc("Barack Obama", "A second page.")
    speech = doc("A speech", "Delivered by Barack Obama.")
    value = build_relations([obama, obama2, speech], SOURCE)
    title_ref = "title-sha256:" + digest("barack obama")
    for rel in value["relations"]:
        assert rel["id"] == "edge-" + digest([rel["source"], rel["target"], rel["kind"]])
        prov = rel["provenance"]
        assert prov["origin"] == "tool_observation" and prov["model"] is None
        assert prov["method"] == "document_title_graph_v1"
        assert prov["method_revision"] == value["policy_digest"] == digest(value["policy"])
        if rel["kind"] == "same_entity":
            assert prov["evidence_ref"] == title_ref
        else:
            assert rel["source"] == speech["id"]
            assert prov["evidence_ref"] == f"document-sha256:{digest(speech)}:{title_ref}"
    assert [r["id"] for r in value["relations"]] == sorted(r["id"] for r in value["relations"])
    assert value["counts"] == {"same_entity": 1, "semantic_related": 2}
    assert value["projection_digest"] == digest(value["projection"])
    assert value["relations_digest"] == digest(value["relations"])
    assert value["source_digest"] == SOURCE and value["format"] == "relations_v1"


# --- refusals -----------------------------------------------------------------------------------

@pytest.mark.parametrize("mutate, needle", [
    (lambda docs: docs[0].update(question="Who?"), "unexpected field"),
    (lambda docs: docs[0].pop("title"), "missing field"),
    (lambda docs: docs.append(dict(docs[1])), "duplicate id"),
    (lambda docs: docs[0].update(paragraph_text="edited"), "does not match"),
    (lambda docs: docs[0].update(title=7), "expected a string"),
])
def test_bad_projection_refused(mutate, needle):
    docs = [doc("Rome", "A city."), doc("Paris", "Another city.")]
    mutate(docs)
    with pytest.raises(GraphInputError, match=needle):
        build_relations(docs, SOURCE)
    # through the CLI wrapper a refused graph input is exit code 2
    assert run(lambda argv: build_relations(docs, SOURCE)) == 2


def test_project_keeps_only_builder_fields():
    d = doc("Rome", "A city.")
    source = {"documents": [dict(d, text="Rome\nA city.")]}
    assert project(source) == [d]


# --- determinism and rebuild ------------------------------------------------------------------------

def _random_corpus(seed: int, n: int = 300) -> list[dict]:
    rng = random.Random(seed)
    words = ["river", "north", "castle", "john", "smith", "the", "of", "battle", "1999", "war",
             "city", "st", "lake", "green", "hall", "park"]
    docs: list[dict] = []
    seen: set[str] = set()
    while len(docs) < n:
        title = " ".join(rng.choices(words, k=rng.randint(1, 3))).title()
        text = " ".join(rng.choices(words, k=rng.randint(5, 30))) + "."
        d = doc(title, text)
        if d["id"] not in seen:
            seen.add(d["id"])
            docs.append(d)
    return docs


def brute_force(docs: list[dict]) -> dict[str, set[tuple[str, str]]]:
    """docs/design.md §5.1 read literally, quadratic, sharing no code with the builder but normalization."""
    norm = {d["id"]: normalize_text(d["title"]) for d in docs}
    texts = {d["id"]: " " + normalize_text(d["paragraph_text"]) + " " for d in docs}
    ids = sorted(norm)
    holders: dict[str, list[str]] = {}
    for x in ids:
        holders.setdefault(norm[x], []).append(x)
    eligible = [t for t in holders if title_is_eligible(t)]
    same: set[tuple[str, str]] = set()
    mentions: set[tuple[str, str]] = set()
    for me in ids:
        others = [x for x in holders[norm[me]] if x != me]
        same.update(tuple(sorted((me, o))) for o in others[:4])
        cands = [(t, x) for t in eligible if t != norm[me] and f" {t} " in texts[me] for x in holders[t]]
        cands.sort(key=lambda c: (-len(c[0]), c[1]))
        mentions.update((me, x) for _, x in cands[:8])
    return {"same_entity": same, "semantic_related": mentions}


def test_matches_brute_force_and_ignores_input_order():
    docs = _random_corpus(1)
    value = build_relations(docs, SOURCE)
    expected = brute_force(docs)
    for kind in ("same_entity", "semantic_related"):
        assert edges_of(value, kind) == expected[kind]
    shuffled = copy.deepcopy(docs)
    random.Random(2).shuffle(shuffled)
    assert canonical(build_relations(shuffled, SOURCE)) == canonical(value)


def test_output_does_not_depend_on_the_hash_seed():
    # titles pass through sets inside the builder; their iteration order must never reach the file
    import subprocess
    import sys

    from tests.conftest import REPO
    # `-c` puts the working directory (the repository) first on the path: `tests` imports from there
    script = ("from tests.builders.test_graph_builder import _random_corpus, SOURCE; "
              "from builders.title_graph import build_relations; from ground import digest; "
              "print(digest(build_relations(_random_corpus(5), SOURCE)))")
    expected = digest(build_relations(_random_corpus(5), SOURCE))
    for seed in ("0", "1", "2"):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected, seed


def test_rebuild_reproduces_the_file_and_tampering_is_detected(tmp_path):
    value = build_relations(_random_corpus(3, 120), SOURCE)
    reloaded = json.loads(json.dumps(value))
    assert canonical(rebuild(reloaded)) == canonical(value)
    verify_relations(reloaded)
    tampered = copy.deepcopy(reloaded)
    tampered["relations"][0]["target"] = tampered["relations"][1]["target"]
    with pytest.raises(RefusedInput, match="differs from the rebuild"):
        verify_relations(tampered)


def test_sample_corpus_matches_brute_force():
    require_shared(SAMPLE_DIR)
    docs: list[dict] = []
    seen: set[str] = set()
    for name in ("musique_sample_dev.jsonl", "musique_sample_train.jsonl"):
        for line in (SAMPLE_DIR / name).read_text(encoding="utf-8").splitlines()[:25]:
            for p in json.loads(line)["paragraphs"]:
                d = doc(p["title"], p["paragraph_text"])
                if d["id"] not in seen:
                    seen.add(d["id"])
                    docs.append(d)
    value = build_relations(docs, SOURCE)
    expected = brute_force(docs)
    assert edges_of(value, "same_entity") == expected["same_entity"]
    assert edges_of(value, "semantic_related") == expected["semantic_related"]
    assert value["counts"]["semantic_related"] > 0
