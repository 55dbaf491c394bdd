"""The synthetic MuSiQue-format generator: deterministic, well-formed, real chains, not trivial,
pinned by protocols/frozen/datasets/synthetic-v1.json and importable with it."""

from __future__ import annotations

import collections
import json
import math
import re

import pytest

from builders.title_graph import build_for_source
from ground.canonical import sha256_bytes
from ground.files import load_json
from importer import import_source, synthetic
from protocols.committed import committed_file
from tests.conftest import SAMPLE_DIR, lab_cli

PROTOCOL = committed_file("synthetic-v1.json")
ROW_KEYS = ["id", "paragraphs", "question", "question_decomposition", "answer", "answer_aliases", "answerable"]
PARAGRAPH_KEYS = ["idx", "title", "paragraph_text", "is_supporting"]
STEP_KEYS = ["id", "question", "answer", "paragraph_support_idx"]
STEPS = {"2hop": 2, "3hop1": 3, "3hop2": 3, "4hop1": 4, "4hop2": 4, "4hop3": 4}


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return synthetic.generate_files()


@pytest.fixture(scope="module")
def rows(files) -> list[dict]:
    return [json.loads(line) for data in files.values() for line in data.decode("utf-8").splitlines()]


def test_same_seed_and_size_give_identical_bytes(files):
    assert synthetic.generate_files() == files
    other = synthetic.generate_files(seed="another-seed")
    assert other[synthetic.DEV_NAME] != files[synthetic.DEV_NAME]


def test_rows_have_the_official_shape(rows):
    for row in rows:
        assert list(row) == ROW_KEYS, row["id"]
        category, _, numbers = row["id"].partition("__")
        steps = row["question_decomposition"]
        assert len(steps) == STEPS[category]
        assert numbers == "_".join(str(step["id"]) for step in steps)
        assert isinstance(row["question"], str) and row["question"]
        assert isinstance(row["answer"], str) and row["answer"] == steps[-1]["answer"]
        assert isinstance(row["answer_aliases"], list) and all(isinstance(a, str) for a in row["answer_aliases"])
        assert row["answerable"] is True
        assert [p["idx"] for p in row["paragraphs"]] == list(range(synthetic.PARAGRAPHS_PER_ROW))
        for paragraph in row["paragraphs"]:
            assert list(paragraph) == PARAGRAPH_KEYS
            assert isinstance(paragraph["title"], str) and isinstance(paragraph["paragraph_text"], str)
            assert isinstance(paragraph["is_supporting"], bool)
        for step in steps:
            assert list(step) == STEP_KEYS
            assert isinstance(step["id"], int) and not isinstance(step["id"], bool)
            assert isinstance(step["paragraph_support_idx"], int)
        supporting = {p["idx"] for p in row["paragraphs"] if p["is_supporting"]}
        assert supporting == {step["paragraph_support_idx"] for step in steps}, row["id"]
        assert len(supporting) == len(steps), f"{row['id']}: two steps share a paragraph"
        pairs = [(p["title"], p["paragraph_text"]) for p in row["paragraphs"]]
        assert len(set(pairs)) == len(pairs), f"{row['id']} repeats a paragraph"


def test_key_order_matches_the_shared_sample(rows):
    sample = SAMPLE_DIR / "musique_sample_dev.jsonl"
    if not sample.exists():
        pytest.skip(f"{sample} is absent: the MuSiQue sample lives only in ../shared")
    official = json.loads(sample.open(encoding="utf-8").readline())
    assert list(official) == list(rows[0])
    assert list(official["paragraphs"][0]) == list(rows[0]["paragraphs"][0])
    assert list(official["question_decomposition"][0]) == list(rows[0]["question_decomposition"][0])


def test_ids_and_questions_are_unique_across_both_files(rows):
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({row["question"].strip().casefold() for row in rows}) == len(rows)


def test_default_size_has_spare_rows_in_every_stratum(files):
    protocol = load_json(PROTOCOL)
    for split in protocol["selection"]["splits"].values():
        name = protocol["source_files"][split["source"]]["name"]
        ids = [json.loads(line)["id"] for line in files[name].decode("utf-8").splitlines()]
        hops = collections.Counter(row_id[0] for row_id in ids)
        for hop, wanted in split["counts"].items():
            assert hops[hop] > wanted, (name, hop, hops[hop], wanted)


def test_each_step_is_answered_by_its_supporting_paragraph(rows):
    for row in rows:
        steps = row["question_decomposition"]
        for number, step in enumerate(steps, start=1):
            paragraph = row["paragraphs"][step["paragraph_support_idx"]]
            seen = paragraph["title"] + "\n" + paragraph["paragraph_text"]
            assert _mentions(seen, step["answer"]), (row["id"], number)
            references = [int(k) for k in re.findall(r"#(\d+)", step["question"])]
            assert all(k < number for k in references), (row["id"], number)
            for k in references:  # the bridge: an earlier answer is what this paragraph is about
                assert _mentions(seen, steps[k - 1]["answer"]), (row["id"], number, k)
            if not references:  # a step about a named entity reads that entity's own paragraph
                assert paragraph["title"] in step["question"], (row["id"], number)
        # Every intermediate answer feeds a later step, and none is given away by the question.
        used = {int(k) for step in steps for k in re.findall(r"#(\d+)", step["question"])}
        assert used == set(range(1, len(steps))), row["id"]
        for step in steps[:-1]:
            assert not _mentions(row["question"], step["answer"]), (row["id"], step["answer"])


def _mentions(text: str, name: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text) is not None


def test_titles_are_shared_and_paragraphs_mention_other_titles(rows):
    corpus = synthetic.distinct_paragraphs(rows)
    texts_per_title = collections.Counter(title for title, _ in corpus)
    shared = [title for title, n in texts_per_title.items() if n > 1]
    assert len(shared) >= 0.1 * len(texts_per_title)
    titles = set(texts_per_title)
    mentioning = sum(
        1 for title, text in corpus
        if any(other != title and other in titles for other in _capitalized_spans(text))
    )
    assert mentioning >= 0.5 * len(corpus)


def _capitalized_spans(text: str) -> list[str]:
    # Every run of up to 7 consecutive words, capitalized or not ("The Road of Nocham"), as a
    # candidate title: a superset, so no real mention is missed; non-titles simply never match.
    words = re.findall(r"[\w']+", text)
    spans = []
    for start in range(len(words)):
        for end in range(start + 1, min(start + 7, len(words)) + 1):
            spans.append(" ".join(words[start:end]))
    return spans


def _bm25_recall_at_10(rows: list[dict]) -> float:
    """A tiny BM25 (docs/design.md §7 parameters) over the union corpus, written here independently."""
    corpus = synthetic.distinct_paragraphs(rows)
    position = {pair: i for i, pair in enumerate(corpus)}
    tokens = [re.findall(r"[^\W_]+", (t + "\n" + p).lower()) for t, p in corpus]
    lengths = [len(t) for t in tokens]
    average = sum(lengths) / len(lengths)
    postings = collections.defaultdict(list)
    for doc, words in enumerate(tokens):
        for word, tf in collections.Counter(words).items():
            postings[word].append((doc, tf))
    total = 0.0
    for row in rows:
        scores: collections.defaultdict[int, float] = collections.defaultdict(float)
        for word in dict.fromkeys(re.findall(r"[^\W_]+", row["question"].lower())):
            hits = postings.get(word, [])
            idf = math.log(1 + (len(corpus) - len(hits) + 0.5) / (len(hits) + 0.5))
            for doc, tf in hits:
                scores[doc] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths[doc] / average))
        top = set(sorted(scores, key=lambda d: (-scores[d], d))[:10])
        gold = {position[(p["title"], p["paragraph_text"])] for p in row["paragraphs"] if p["is_supporting"]}
        total += len(gold & top) / len(gold)
    return total / len(rows)


def test_lexical_retrieval_does_not_solve_it(rows):
    recall = _bm25_recall_at_10(rows)
    assert 0.2 < recall < 0.9, recall


def test_a_benchmark_corpus_of_exact_size():
    pairs = synthetic.corpus_of_size("bench-test", 3000)
    assert len(pairs) == 3000 == len(set(pairs))


def test_protocol_pins_the_default_output(files):
    protocol = load_json(PROTOCOL)
    for role, pinned in protocol["source_files"].items():
        assert sha256_bytes(files[pinned["name"]]) == pinned["sha256"], role
    # the rest is musique-sample-v1's, key for key (derived byte for byte: tests/protocols/test_protocol_registry.py)
    sample = load_json(committed_file("musique-sample-v1.json"))
    assert list(protocol) == list(sample)
    assert protocol["methods"] == sample["methods"] and protocol["evaluation"] == sample["evaluation"]


def _cli(*args: str):
    """`lab synth` in this process."""
    return lab_cli("synth", *args, check=False)


def test_cli_writes_the_pinned_files_and_imports_with_the_protocol(tmp_path):
    out = tmp_path / "synthetic"
    done = _cli("--output-dir", str(out))
    assert done.returncode == 0, done.stderr
    protocol = load_json(PROTOCOL)
    for pinned in protocol["source_files"].values():
        assert sha256_bytes((out / pinned["name"]).read_bytes()) == pinned["sha256"]
        assert f"{out / pinned['name']} sha256 {pinned['sha256']}" in done.stdout
    summary = import_source(PROTOCOL, out, tmp_path / "source.json", tmp_path / "relations.json", graph_builder=build_for_source)
    assert summary["queries"] == {"test": 100, "development": 30}
    assert 2000 <= summary["documents"] <= 3000
    assert summary["relation_counts"]["same_entity"] > 0
    assert summary["relation_counts"]["semantic_related"] > summary["documents"] // 2


def test_cli_refuses_an_existing_directory_and_writes_nothing(tmp_path):
    out = tmp_path / "exists"
    out.mkdir()
    done = _cli("--output-dir", str(out))
    assert done.returncode == 2
    assert "refusing to overwrite existing output" in done.stderr
    assert list(out.iterdir()) == []


def test_cli_refuses_a_nonpositive_size(tmp_path):
    done = _cli("--output-dir", str(tmp_path / "new"), "--questions", "0")
    assert done.returncode == 2 and not (tmp_path / "new").exists()
