"""Contracts shared by every stage: canonical JSON, digests, atomic saves, the protocol schema."""

from protocols.canonical import canonical, digest, sha256_bytes, sha256_file
from protocols.errors import RefusedInput
from protocols.files import load_json, refuse_existing, refuse_same_path, save

__all__ = [
    "RefusedInput",
    "canonical",
    "digest",
    "load_json",
    "refuse_existing",
    "refuse_same_path",
    "save",
    "sha256_bytes",
    "sha256_file",
]
