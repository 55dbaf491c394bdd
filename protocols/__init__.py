"""The protocol model and its lineage: the schema a frozen protocol is checked against, the routes,
profiles and metrics it names, the registry that derives every committed file from its parent, and
the committed files themselves (a data folder, protocols/frozen/, one subfolder per kind)."""
