"""The fast page renderer gives exactly `ground.canonical.canonical` bytes (ground/fast_canonical.py).

Compared on real pages of every route and profile (a corpus with non-ASCII, control characters,
emoji and line separators in its texts, exact rationals and float scores of every size a page
holds) and on values built to hit each difference between orjson and Python's json.
"""

from __future__ import annotations

import json
import math
import random
import struct

import numpy as np
import orjson
import pytest

from ground.canonical import canonical
from ground.fast_canonical import _risky, render
from protocols.committed import committed_protocols
from protocols.families.lists.rescue import RESCUE_PROFILES
from protocols.routes import ROUTES
from server.retrieval.indexes import Indexes
from server.routes import search

SPACE = "space-" + "c" * 64
TEXTS = ["Zürich — café ☕ river", "naïve résumé\u2028line\u2029para", "tab\there\nnew \"quoted\" \\ slash /",
         "control \x01\x1f\x7f chars", "emoji 😀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 river", "Ελληνικά κείμενο river castle",
         "日本語のテキスト castle", "plain castle river film", "film album director", "capital bridge island"]


@pytest.fixture(scope="module")
def index():
    rng = np.random.default_rng(4)
    index = Indexes().scope("s")
    ids = [f"mem-{i:032x}" for i in range(60)]
    for i, rid in enumerate(ids):
        text = TEXTS[i % len(TEXTS)] + f" doc{i}"
        index.put_memory(rid, 1, text, {"content": text, "metadata": {"title": f"Título {i} ✓", "k": "\x00"}})
        index.put_binding(rid, 1, SPACE, rng.standard_normal(8).astype(np.float32), binding_id=f"emb-{i:032x}")
    for n in range(120):
        a, b = rng.choice(60, size=2, replace=False).tolist()
        index.put_relation({"id": f"rel-{n:032x}", "revision": 1, "kind": ("same_entity", "semantic_related")[n % 2],
                            "source": {"id": ids[a], "revision": 1}, "target": {"id": ids[b], "revision": 1},
                            "provenance": {"origin": "tool_observation", "method": "t", "method_revision": "r",
                                           "evidence_ref": "é", "model": None}})
    return index


def bodies(vector: list[float]) -> list[tuple[str, dict]]:
    out = [("lexical", {"query": "river castle café", "limit": 10}),
           ("semantic", {"query_vector": vector, "space_id": SPACE, "limit": 10})]
    for profile in ROUTES["hybrid"].profiles:
        out.append(("hybrid", {"profile": profile, "query": "river film", "query_vector": vector, "space_id": SPACE,
                               "limit": 20}))
    for profile in ROUTES["graph"].profiles:
        for seed in ("hybrid", "lexical"):
            out.append(("graph", {"profile": profile, "seed": seed, "query": "river castle", "query_vector": vector,
                                  "space_id": SPACE, "limit": 30, "expansion": {"max_depth": 3}}))
    for profile in RESCUE_PROFILES:
        out.append(("rescue", {"profile": profile, "query": "river castle", "query_vector": vector, "space_id": SPACE,
                               "limit": 30, "graph_mode": "force"}))
    return out


def test_every_route_renders_canonical_bytes(index):
    rng = np.random.default_rng(8)
    rendered = 0
    for _ in range(5):
        vector = [float(x) for x in rng.standard_normal(8).astype(np.float32)]
        for route, body in bodies(vector):
            page = search(index, route, body)
            page["fence"] = {"journal_id": "journal-é", "high_watermark": 2**53}
            assert render(page) == canonical(page), (route, body.get("profile"))
            rendered += 1
    assert rendered == 5 * len(bodies([0.0] * 8))


def test_sample_protocol_pages_render_canonical_bytes():
    # the protocol files themselves: deep nesting, floats and integers, non-ASCII attribution text
    for path in committed_protocols():
        value = json.loads(path.read_text(encoding="utf-8"))
        assert render(value) == canonical(value), path.name


def test_floats_of_every_magnitude_render_canonical_bytes():
    rng = random.Random(5)
    values = [0.0, -0.0, 1.0, 0.1, 1 / 3, 2 / 3, 0.0001, 0.00009999, 1e-5, 1e-6, 1e-7, 5e-324, 1e15, 1e16, 1e17,
              1e21, 1.7976931348623157e308, 0.09999999999999999, 2.2250738585072014e-308]
    for _ in range(20000):
        values.append(struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0])
        values.append(rng.uniform(-1, 1) * 10 ** rng.uniform(-9, 18))
    fast = 0
    for x in values:
        if math.isfinite(x):
            value = {"score": x, "nested": [x, {"v": -x}], "text": "one-time, pre-war"}
            assert render(value) == canonical(value), x
            fast += not _risky(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    assert fast > 10000  # the orjson path itself was compared, not only the fallback
    for text in ("a:1e-5,[0.00001", "x 3e-4", "1e+5"):  # look-alikes in text only cost the fallback
        assert render({"t": text, "s": 0.5}) == canonical({"t": text, "s": 0.5})


def test_strings_integers_and_keys_render_canonical_bytes():
    every_control = "".join(chr(c) for c in range(0, 0x20)) + "\x7f\u2028\u2029\ufeff"
    value = {"z": every_control, "é": "😀", "a": [2**53, -(2**53), 2**64, 10**30, True, False, None],
             "": {"b": 1, "a": 2, "ä": 3, "Z": 4}}
    assert render(value) == canonical(value)
