"""Model profiles (docs/design.md §5.2): which prefixes, pooling and token limit a model must be run with.

A profile is chosen explicitly (`--profile`) or detected from the model directory's own files.
Detection only reads small text files, so a contradicting choice is refused before the model (and
torch) is loaded. The evidence is deliberately narrow: a model *named* E5 somewhere in its own
config, or declaring E5's prompts, is E5; a model that merely mentions E5 in its README body is
ambiguous, because model cards often compare themselves with E5.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ground.errors import RefusedInput


@dataclass(frozen=True)
class Profile:
    name: str
    query_prefix: str
    passage_prefix: str
    pooling: str | None  # None: whatever pooling the model itself declares
    max_tokens: int | None  # None: the model's own max sequence length


PROFILES = {
    # E5 models were trained with these prefixes and mean pooling; without them quality drops.
    "e5": Profile("e5", "query: ", "passage: ", "mean", 512),
    "plain": Profile("plain", "", "", None, None),
}

# "e5" as a word of its own: matches "e5-base-v2", "multilingual-e5-large", "E5"; not "1e5", "gte5".
E5_WORD = re.compile(r"(?<![A-Za-z0-9])e5(?![0-9])", re.IGNORECASE)
# Files whose contents decide how the model encodes; README is read only for the model's name.
CONFIG_NAMES = ("config.json", "tokenizer_config.json")


@dataclass
class ModelFacts:
    """What the model directory says about itself, read without loading it."""

    path: Path
    name: str
    prompts: dict[str, str]
    e5_names: list[str] = field(default_factory=list)  # strong evidence: where the model is named E5
    e5_mentions: list[str] = field(default_factory=list)  # weak evidence: E5 mentioned in prose


@dataclass(frozen=True)
class Detection:
    profile: str | None  # None when no profile can be decided
    status: str  # "decided", "ambiguous" (an explicit choice settles it) or "unsupported"
    reason: str


@dataclass(frozen=True)
class ProfileChoice:
    profile: Profile
    how: str  # "detected", "explicit" or "forced"
    detection: Detection


def read_model_facts(model_dir: str | Path) -> ModelFacts:
    """Refuse anything but an existing local sentence-transformers directory, then read its config."""
    path = Path(model_dir)
    if not path.exists():
        raise RefusedInput(f"--model-dir {model_dir} does not exist (models are loaded from local directories only)")
    if not path.is_dir():
        raise RefusedInput(f"--model-dir {model_dir} is not a directory")
    path = path.resolve()
    modules = path / "modules.json"
    if not modules.is_file():
        raise RefusedInput(f"--model-dir {model_dir} is not a sentence-transformers model directory: no modules.json")
    if not isinstance(_read_json(modules), list):
        raise RefusedInput(f"--model-dir {model_dir}: modules.json is not a list of modules")
    st_config = _read_json(path / "config_sentence_transformers.json", missing={})
    prompts = st_config.get("prompts") if isinstance(st_config, dict) else None
    if not isinstance(prompts, dict):
        prompts = {}
    # empty prompts are how sentence-transformers writes "no prompt"; they change nothing
    prompts = {k: v for k, v in prompts.items() if isinstance(v, str) and v}
    readme = _read_text(path / "README.md")
    facts = ModelFacts(path=path, name=_model_name(path, readme), prompts=prompts)
    _collect_e5_evidence(facts, readme)
    return facts


def detect_profile(facts: ModelFacts) -> Detection:
    e5_prompts = {PROFILES["e5"].query_prefix, PROFILES["e5"].passage_prefix}
    other_prompts = {k: v for k, v in facts.prompts.items() if v not in e5_prompts}
    if other_prompts:
        return Detection(None, "unsupported",
                         f"the model declares prompts {other_prompts} that no profile reproduces")
    if facts.e5_names:
        return Detection("e5", "decided", "named E5 in " + ", ".join(facts.e5_names))
    if facts.e5_mentions:
        return Detection(None, "ambiguous",
                         "E5 is mentioned in " + ", ".join(facts.e5_mentions)
                         + " but the model is not named E5 in its config; choose --profile")
    return Detection("plain", "decided", "no E5 name or prompts in the model's config files")


def choose_profile(facts: ModelFacts, requested: str | None = None, force: bool = False) -> ProfileChoice:
    """The profile to use; an explicit choice that contradicts the model needs `force`."""
    if requested is not None and requested not in PROFILES:
        raise RefusedInput(f"unknown --profile {requested!r}; known: {', '.join(sorted(PROFILES))}")
    detection = detect_profile(facts)
    if requested is None:
        if force:
            raise RefusedInput("--force-profile needs an explicit --profile")
        if detection.profile is None:
            raise RefusedInput(f"cannot detect the profile of {facts.path}: {detection.reason}")
        return ProfileChoice(PROFILES[detection.profile], "detected", detection)
    agrees = detection.profile == requested or detection.status == "ambiguous"
    if agrees:
        return ProfileChoice(PROFILES[requested], "explicit", detection)
    if not force:
        found = detection.profile or detection.status
        raise RefusedInput(
            f"--profile {requested} contradicts the model at {facts.path} ({found}: {detection.reason}); "
            "pass --force-profile to use it anyway"
        )
    return ProfileChoice(PROFILES[requested], "forced", detection)


def check_pooling(choice: ProfileChoice, pooling: str) -> None:
    """A profile that fixes the pooling refuses a model that pools otherwise (unless forced)."""
    wanted = choice.profile.pooling
    if wanted is not None and pooling != wanted and choice.how != "forced":
        raise RefusedInput(
            f"profile {choice.profile.name} needs {wanted} pooling but the model pools with {pooling}; "
            "pass --force-profile to use it anyway"
        )


def _collect_e5_evidence(facts: ModelFacts, readme: str) -> None:
    for name in CONFIG_NAMES:
        config = _read_json(facts.path / name, missing={})
        if isinstance(config, dict):
            for key in ("_name_or_path", "name_or_path"):
                value = config.get(key)
                if isinstance(value, str) and E5_WORD.search(value):
                    facts.e5_names.append(f"{name} {key}={value!r}")
    for part in (facts.path.name, *(p for p in facts.path.parts if p.startswith("models--"))):
        if E5_WORD.search(part):
            facts.e5_names.append(f"directory name {part!r}")
    if E5_WORD.search(facts.name) and facts.name != facts.path.name:
        facts.e5_names.append(f"README title {facts.name!r}")
    if facts.prompts and set(facts.prompts.values()) <= {PROFILES["e5"].query_prefix, PROFILES["e5"].passage_prefix}:
        facts.e5_names.append(f"config_sentence_transformers.json prompts {facts.prompts}")
    if E5_WORD.search(readme):
        facts.e5_mentions.append("README.md")


def _model_name(path: Path, readme: str) -> str:
    """The README's one-word title (`# all-MiniLM-L6-v2`), else the directory name.

    Informational only: the space revision, not the name, identifies the model.
    """
    for line in readme.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            if title and not any(c.isspace() for c in title):
                return title
            break
    return path.name


def _read_json(path: Path, missing: Any = None) -> Any:
    if not path.is_file():
        if missing is None:
            raise RefusedInput(f"model file missing: {path}")
        return missing
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RefusedInput(f"model file {path} is not valid JSON: {exc}") from None


def _read_text(path: Path) -> str:
    if not path.is_file():
        return ""
    return path.read_text(encoding="utf-8", errors="replace")
