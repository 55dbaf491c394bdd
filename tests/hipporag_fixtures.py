"""Cohorts in the HippoRAG layout for the tests: a question file (one JSON array of rows) and a corpus
file (one JSON array of {title, text}), written the way HippoRAG's files are (json.dumps defaults)."""

from __future__ import annotations

import json
from pathlib import Path

from importer import synthetic, synthetic_context

QUESTIONS = "questions.json"
CORPUS = "corpus.json"


def write_layout(folder: Path, rows: list[dict], passages: list[tuple[str, str]]) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    questions, corpus = folder / QUESTIONS, folder / CORPUS
    questions.write_text(json.dumps(rows), encoding="utf-8")
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in passages]), encoding="utf-8")
    return questions, corpus


def musique_twin(folder: Path, questions: int = 10, seed: str = "hipporag-twin") -> tuple[list[dict], list]:
    """Synthetic MuSiQue rows and their distinct paragraphs as the corpus (HippoRAG builds its corpus
    from its questions' paragraphs the same way)."""
    rows = synthetic.generate_rows(seed, questions)
    passages = synthetic.distinct_paragraphs(rows)
    write_layout(folder, rows, passages)
    return rows, passages


def context_twin(folder: Path, shape: str, questions: int = 12) -> tuple[list[dict], list]:
    """Synthetic 2Wiki- or HotpotQA-shaped rows and their context paragraphs as the corpus, one passage
    per title (the first text seen: a title's text may vary between synthetic rows)."""
    files = synthetic_context.generate_context_file(shape, synthetic_context.DEFAULT_SEED, questions)
    rows = json.loads(next(iter(files.values())))
    joiner = synthetic_context.SHAPES[shape]["joiner"]
    first: dict[str, str] = {}
    for row in rows:
        for title, sentences in row["context"]:
            first.setdefault(title, joiner.join(sentences))
    passages = list(first.items())
    write_layout(folder, rows, passages)
    return rows, passages
