"""Every graph builder, by the name a protocol's `graph_builder.method` gives it.

The importer builds relations.json with the builder its protocol names (lab/cross_stage_commands.py hands
this table to the import command); the evaluator rebuilds a relations file with the builder the
file names, and refuses one whose builder is not the protocol's (evaluator/inputs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from builders import entity_graph, imported_graph, ner_graph, title_graph

BUILDERS: dict[str, ModuleType] = {
    title_graph.METHOD: title_graph,  # document_title_graph_v1 (docs/design.md §5.1)
    entity_graph.METHOD: entity_graph,  # document_entity_graph_v1 (docs/graph-v4.md)
    ner_graph.METHOD: ner_graph,  # document_ner_graph_v1 (docs/field-graphs.md)
    imported_graph.METHOD: imported_graph,  # imported_triples_v1 (docs/graph-import.md)
}
# (source, source digest) -> relations; a builder of an external graph also takes `imported=`, the
# section importer/graph_import.py reads from the files its protocol pins
SOURCE_BUILDERS: dict[str, Callable[..., dict]] = {name: module.build_for_source
                                                            for name, module in BUILDERS.items()}


def builder(method: object) -> ModuleType:
    if not isinstance(method, str) or method not in BUILDERS:
        raise title_graph.GraphInputError(f"no graph builder {method!r}; builders: {', '.join(BUILDERS)}")
    return BUILDERS[method]


def rebuild(relations_file: dict) -> dict:
    """Rebuild a relations.json value, with the builder it names, from the projection and source
    digest it records."""
    if not isinstance(relations_file, dict) or "projection" not in relations_file or "source_digest" not in relations_file:
        raise title_graph.GraphInputError("relations file has no projection or source_digest to rebuild from")
    module = builder(relations_file.get("method"))
    if hasattr(module, "rebuild_file"):  # a builder with a pinned model output (or imported graph) rebuilds from it
        return module.rebuild_file(relations_file)
    return module.build_relations(relations_file["projection"], relations_file["source_digest"])
