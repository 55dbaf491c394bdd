"""importer stage of the lab (see docs/contracts.md)."""

from importer.pipeline import import_source

__all__ = ["import_source"]
