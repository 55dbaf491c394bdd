"""The graph-rescue family (docs/rescue.md): method, page layout, catalog entries, title matching."""
