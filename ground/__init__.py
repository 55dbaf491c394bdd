"""The ground floor every stage stands on: canonical JSON and digests, atomic never-overwriting files,
the two errors a command ends on, the command base, child processes, the Dask connection, the run
directory's layout and the validators of the artifacts the stages hand each other."""

from ground.canonical import canonical, digest, sha256_bytes, sha256_file
from ground.errors import RefusedInput
from ground.files import load_json, refuse_existing, refuse_same_path, save

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
