"""Shared test plumbing: where ../shared lives, and a clear skip when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"
SAMPLE_DIR = SHARED_DATA / "musique-sample"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def require_shared(path: Path = SHARED_DATA) -> Path:
    """Skip (with the reason) when the shared data (MuSiQue CC BY 4.0, HotpotQA CC BY-SA 4.0,
    2WikiMultihopQA Apache-2.0) is not on this machine."""
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared samples live only in ../shared, never in this repo")
    return path
