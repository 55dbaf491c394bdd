"""Every text the lab encodes, by section: recipe 1, recipe 2 and sentence-transformers' own encode().

    lab bench encoding-plan --run-dir RUN [--every N] [--threads T] [--rounds R] [--stage] [--json PATH]

RUN is a finished run whose fixture holds the texts a LinearRAG protocol encodes: the documents,
the questions and each family section's texts (LinearRAG's entities, sentences and the questions'
entities; HippoRAG's phrases and facts). For each encoder at hand (all-MiniLM-L6-v2, and
all-mpnet-base-v2 when `lab embed install-model all-mpnet-base-v2` has installed it) and each
section, in one process at T threads (default: the machine's cores, so the limit below is the
machine's), it times over the same texts (every N-th of each section, source order):

- recipe 1: documents in the token-budget plan, questions one per call, section texts in fixed
  batches of 32 in their order (what fixtures built before recipe 2 did);
- recipe 2: every text in the one longest-first token-budget plan (builders/embedding/batching.py);
- the peer: `SentenceTransformer.encode(texts, batch_size=32)`, its own length-sorted batching.

Tokens are the model's tokens the encoder reads (special tokens included, cut at its limit).
Tokens/s of each, recipe 2 over the peer (target >= 1.0x), and recipe 2 against the machine's
limit: the encoder's floating-point work for those tokens (per layer 8d^2 + 4df + 4nd per token of
a sequence of n tokens: projections, feed-forward and attention) over this machine's measured
float32 matrix-multiply rate at T threads (the best torch.matmul rate over three feed-forward
shapes, 384 to 1,024 wide, so MiniLM's small products do not lower it), said as a ratio (aim >= 0.5). `--stage` also times the whole `lab embed build` of RUN's
source under MiniLM at recipe 1 and at recipe 2, each in its own process with the builder's
default layout, with the sections RUN's protocol needs (target: recipe 2 at most half of recipe 1).
Prints the load average beside each figure; writes nothing but the --json file and temp files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from builders.embedding.build import DEFAULT_BATCHING
from builders.embedding.providers.factory import open_provider
from builders.model_install import MPNET, models_dir
from ground.run_dir import FILES
from protocols.routes import fixture_flags

ROLES = ("entities", "sentences", "query_phrases", "phrases", "facts")
TARGET_PEER = 1.0
AIM_LIMIT = 0.5


def load() -> str:
    return "load " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def section_texts(fixture: dict, every: int) -> dict[str, tuple[list[str], str]]:
    """Section name -> (its texts, every `every`-th in source order; the role they are encoded as)."""
    out = {"documents": ([d["text"] for d in fixture["source"]["documents"]], "document"),
           "questions": ([q["question"] for q in fixture["source"]["queries"]], "query")}
    for name, value in fixture.items():
        if isinstance(value, dict):
            for role in ROLES:
                entries = value.get(role)
                if isinstance(entries, list) and entries and isinstance(entries[0], dict) and "vector" in entries[0]:
                    out[f"{name}.{role}"] = ([e["id"] for e in entries], "document")
    return {name: (texts[::every], role) for name, (texts, role) in out.items()}


def encoders() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = [("all-MiniLM-L6-v2", None)]
    folder = models_dir() / MPNET.name
    if folder.is_dir():
        found.append((MPNET.name, str(folder)))
    else:
        print(f"{MPNET.name}: not installed ({folder}); `lab {MPNET.command()}` adds it to this bench")
    return found


def machine_rate(threads: int, rounds: int = 5) -> float:
    """This machine's float32 matrix-multiply rate at `threads` threads, in GFLOP/s: the best of
    `rounds` timed torch.matmul calls over three shapes (the feed-forward products of a 384-, 768-
    and 1024-wide encoder over 2,048 tokens), so a small model's own small products do not set it."""
    import torch

    torch.set_num_threads(threads)
    best = 0.0
    for d, f in ((384, 1536), (768, 3072), (1024, 4096)):
        a, b = torch.randn(2048, d), torch.randn(d, f)
        torch.matmul(a, b)
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(4):
                torch.matmul(a, b)
            best = max(best, 4 * 2 * 2048 * d * f / (time.perf_counter() - t0) / 1e9)
    return best


def shape_of(provider) -> tuple[int, int, int]:
    config = provider.encoder.model.transformers_model.config
    return config.num_hidden_layers, config.hidden_size, config.intermediate_size


def flops(lengths: list[int], layers: int, d: int, f: int) -> float:
    """The encoder's work over sequences of these lengths (no padding counted)."""
    n = np.asarray(lengths, dtype=np.float64)
    return float(layers * np.sum(n * (8 * d * d + 4 * d * f + 4 * n * d)))


def timed(run) -> float:
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def measure_section(provider, section: str, texts: list[str], role: str, rounds: int) -> dict:
    """Each way's best time over `rounds`, the ways taken in turn (their order rotating each round)."""
    inputs = [provider.input_text(t, role) for t in texts]
    lengths = provider.padded_lengths(provider.count_tokens(inputs, role))
    plan = DEFAULT_BATCHING.plan(lengths)
    kind = section if section == "documents" else "queries" if section == "questions" else "texts"
    old = replace(DEFAULT_BATCHING, recipe=1).plan_of(kind, lengths)

    def batches(batches_of):
        return lambda: [provider.encode([inputs[i] for i in batch], role) for batch in batches_of]

    model = provider.encoder.model
    peer = lambda: model.encode(inputs, batch_size=32, prompt="", task=role, convert_to_numpy=True,  # noqa: E731
                                show_progress_bar=False, processing_kwargs={"text": {"max_length": provider.max_tokens}})
    ways = [("recipe 1", batches(old)), ("recipe 2", batches(plan)), ("peer", peer)]
    seconds: dict[str, float] = {}
    for r in range(rounds):
        for name, run in ways[r % 3:] + ways[:r % 3]:
            seconds[name] = min(seconds.get(name, float("inf")), timed(run))
    return {"texts": len(texts), "tokens": int(sum(lengths)), "seconds": seconds, "lengths": lengths, "load": load()}


def per_encoder(name: str, model_dir: str | None, sections: dict, threads: int, rate: float, rounds: int) -> dict:
    provider = open_provider({"provider": "sentence-transformers", "threads": threads, "overlength": None,
                              "model_dir": model_dir, "profile": None, "force_profile": False, "max_tokens": None,
                              "variant": "original", "native": False})
    layers, d, f = shape_of(provider)
    rows = {}
    with provider.thread_limit():
        provider.encode(["warm up"], "query")
        for section, (texts, role) in sections.items():
            found = measure_section(provider, section, texts, role, rounds)
            limit_seconds = flops(found.pop("lengths"), layers, d, f) / (rate * 1e9)
            found["limit_ratio"] = limit_seconds / found["seconds"]["recipe 2"]
            rows[section] = found
            print(line(name, section, found), flush=True)
    return {"shape": [layers, d, f], "sections": rows}


def line(name: str, section: str, found: dict) -> str:
    s, tokens = found["seconds"], found["tokens"]
    rate = {k: tokens / v for k, v in s.items()}
    return (f"{name:18} {section:32} {found['texts']:6} texts {tokens:8} tokens | tokens/s recipe 1 {rate['recipe 1']:7.0f}"
            f" recipe 2 {rate['recipe 2']:7.0f} peer {rate['peer']:7.0f} | recipe 2 / peer "
            f"{rate['recipe 2'] / rate['peer']:.2f}x (target >= {TARGET_PEER}x), / recipe 1 "
            f"{rate['recipe 2'] / rate['recipe 1']:.2f}x | of the machine's limit {found['limit_ratio']:.2f} "
            f"(aim >= {AIM_LIMIT}) | {found['load']}")


def stage(run_dir: Path, recipe: int) -> float:
    """One whole `lab embed build` of the run's source under MiniLM at `recipe`, its wall seconds."""
    protocol = json.loads((run_dir / FILES["protocol"]).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "lab", "embed", "build", "--source", str(run_dir / FILES["source"]),
                   "--relations", str(run_dir / FILES["relations"]), "--output", f"{tmp}/fixture.json",
                   "--generation", f"{tmp}/generation.json", "--recipe", str(recipe), *fixture_flags(protocol)]
        t0 = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab bench encoding-plan", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", type=Path, required=True, help="a finished run of a linearrag protocol")
    parser.add_argument("--every", type=int, default=1, help="every N-th text of each section (default: all)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="encoder threads (default: the cores)")
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds per way, the best kept (default: %(default)s)")
    parser.add_argument("--stage", action="store_true", help="also time the whole embed stage at recipe 1 and 2 (MiniLM)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    fixture = json.loads((args.run_dir / FILES["fixture"]).read_text(encoding="utf-8"))
    sections = section_texts(fixture, args.every)
    del fixture
    print(f"run {args.run_dir}: every {args.every} text(s) of each section; {args.threads} thread(s); {load()}")
    rate = machine_rate(args.threads)
    print(f"the machine's limit: float32 matrix multiply at {rate:.1f} GFLOP/s on {args.threads} thread(s) ({load()})")
    out = {"threads": args.threads, "every": args.every, "rounds": args.rounds, "matmul_gflops": rate, "encoders": {}}
    for name, model_dir in encoders():
        out["encoders"][name] = per_encoder(name, model_dir, sections, args.threads, rate, args.rounds)
    if args.stage:
        out["stage"] = {}
        for recipe in (1, 2):
            seconds = stage(args.run_dir, recipe)
            out["stage"][f"recipe {recipe}"] = seconds
            print(f"embed stage under all-MiniLM-L6-v2, recipe {recipe}: {seconds:.1f} s ({load()})", flush=True)
        ratio = out["stage"]["recipe 2"] / out["stage"]["recipe 1"]
        print(f"embed stage recipe 2 / recipe 1: {ratio:.2f} (target <= 0.50)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
