"""Each graph route family end to end, one test parametrized over the families: a protocol derived by
the family's declared steps (`lab protocol derive`), the real model and lab, every page verified
independently during evaluate, export and the audit holding, plus what is particular to the family:
- rescue (with the ANN lane, one campaign for both: the ANN protocol keeps every v2 method): rescued
  candidates appended never fused, rank-derived scores, the ANN agreement, the rescue tables;
- walk (v3): the score exactly its channels' parts, some hits reached by the walk, clusters by
  supporting titles so the audit places queries with the documents' titles as evaluate does;
- entity_walk (v4, docs/graph-v4.md): the import builds document_entity_graph_v1 and the proofs
  name the shared name that linked two documents."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest

from tests.conftest import lab_cli
from tests.evaluation_fixtures import Inputs, built_inputs, prepared_lab

# heavy: three whole campaigns; run in `make test`, left out of `make test-fast`
pytestmark = pytest.mark.heavy

RESCUE_METHODS = {"graph_rescue", "graph_rescue_fuse_025", "graph_rescue_fuse_100"}


@dataclass(frozen=True)
class Family:
    """One route family's campaign: how its protocol is derived and what its report must show."""

    name: str
    derive: tuple[tuple[str, str], ...]  # (declared step, version) in order, from the base protocol
    primary: tuple[str, str]  # the confirmatory (candidate, baseline)
    check_protocol: Callable[[Mapping, Inputs], None]
    check_rows: Callable[[Mapping], None]
    check_public: Callable[[Path], None]
    edit_protocol: Callable[[dict], None] = field(default=lambda protocol: None)
    import_says: str | None = None  # a word the import's output must contain


def _rescue_protocol(protocol: Mapping, inputs: Inputs) -> None:
    assert RESCUE_METHODS <= set(protocol["methods"])


def _rescue_rows(report: Mapping) -> None:
    rows = [r for r in report["rows"] if r["method"] == "graph_rescue"]
    assert rows
    for row in rows:
        hits = row["page"]["hits"]
        stamps = [hit["rescued"] for hit in hits]
        # append, never fuse: no rescued candidate above any base candidate
        assert stamps == sorted(stamps), row["query_id"]
        # every score is rank-derived, exactly 1/(60 + rank)
        assert all(Fraction(hit["score_exact"]) == Fraction(1, 60 + hit["rank"]) for hit in hits)

    ann = report["ann"]["methods"]["semantic_ann"]  # per-query recall@10 and RBO against the exact lane
    queries = {r["query_id"] for r in report["rows"] if r["method"] == "semantic"}
    assert set(ann["per_query"]) == queries and ann["queries"] == len(queries)
    assert all(0.0 <= v["recall"] <= 1.0 and 0.0 <= v["rbo"] <= 1.0 for v in ann["per_query"].values())
    # a few hundred documents: the HNSW lane finds the exact top 10
    assert ann["recall_mean"] >= 0.9
    for row in (r for r in report["rows"] if r["method"] == "semantic_ann"):
        assert row["page"]["coverage"]["candidates"] is False

    rescue = report["rescue"]
    assert set(rescue["methods"]) == RESCUE_METHODS
    assert "graph_rescue" in rescue["oracle_bound"] and "graph_rescue" in rescue["budget_curve"]


def _rescue_public(folder: Path) -> None:
    summary = (folder / "public.md").read_text()
    assert "## Rescue family (exploratory)" in summary and "UPPER BOUND" in summary
    assert "](public.figures/budget_curve.svg)" in summary
    page = (folder / "public.html").read_text()
    assert 'id="fig-budget_curve"' in page and 'id="table-rescue-budget"' in page


def _walk_protocol(protocol: Mapping, inputs: Inputs) -> None:
    assert protocol["methods"]["graph_walk"]["route"] == "walk"
    assert protocol["evaluation"]["clusters"]["rule"] == "supporting_titles_v1"


def _by_supporting_titles(protocol: dict) -> None:
    # clusters by supporting titles (the HotpotQA and 2Wiki rule), so the audit must place the
    # queries with the documents' titles as evaluate and export do (it once derived without them)
    protocol["evaluation"]["clusters"] = {"rule": "supporting_titles_v1"}


def _walk_rows(report: Mapping) -> None:
    rows = [r for r in report["rows"] if r["method"] == "graph_walk"]
    assert rows
    walked = 0
    for row in rows:
        for hit in row["page"]["hits"]:
            channels = hit["channels"]
            parts = sum((Fraction(channels[c]["contribution_exact"]) for c in ("lexical", "semantic", "walk")),
                        Fraction(0))
            assert Fraction(hit["score_exact"]) == parts  # the score is exactly its parts
            walked += bool(hit["proof"] and hit["proof"]["inflow"])
    assert walked > 0


def _entity_protocol(protocol: Mapping, inputs: Inputs) -> None:
    assert protocol["graph_builder"] == {"method": "document_entity_graph_v1"}
    assert protocol["methods"]["graph_entity_walk"] == {"route": "walk", "profile": "entity_walk_v1", "limit": 10}
    relations = json.loads(inputs.relations.read_text())
    assert relations["method"] == "document_entity_graph_v1" and relations["counts"]["shares_name"] > 0


def _entity_rows(report: Mapping) -> None:
    rows = [r for r in report["rows"] if r["method"] == "graph_entity_walk"]
    assert rows
    named = 0
    for row in rows:
        page = row["page"]
        by_id = {rel["id"]: rel for rel in page["relations"]}
        for hit in page["hits"]:
            channels = hit["channels"]
            parts = sum((Fraction(channels[c]["contribution_exact"]) for c in ("lexical", "semantic", "walk")),
                        Fraction(0))
            assert Fraction(hit["score_exact"]) == parts  # the score is exactly its parts
            for step in (hit["proof"] or {}).get("inflow", []):
                if step["kind"] == "shares_name":  # the proof names the shared name that linked the two
                    evidence = by_id[step["relation_id"]]["provenance"]["evidence_ref"]
                    assert evidence.startswith("shared_name:") and step["step"] == 1
                    named += 1
    assert named > 0


def _names(method: str) -> Callable[[Path], None]:
    def check(folder: Path) -> None:
        assert method in (folder / "public.md").read_text()
    return check


FAMILIES = (
    # the declared steps of graph-multihop-protocol-v2 (rescue family) and graph-multihop-ann-v1 (ANN lane)
    Family("rescue", (("graph-multihop-protocol-v2", "synthetic-test-small-v2"),
                      ("graph-multihop-ann-v1", "synthetic-test-small-ann-v1")),
           ("graph_rescue", "weighted_rrf_v1"), _rescue_protocol, _rescue_rows, _rescue_public),
    # the declared step of graph-multihop-protocol-v3: add the seeded walk
    Family("walk", (("graph-multihop-protocol-v3", "synthetic-test-small-v3"),),
           ("graph_walk", "weighted_rrf_v2"), _walk_protocol, _walk_rows, _names("graph_walk"),
           edit_protocol=_by_supporting_titles),
    # the declared steps of musique-sample-v3 (the seeded walk) and musique-sample-v4 (the entity walk)
    Family("entity_walk", (("musique-sample-v3", "synthetic-test-small-v3"),
                           ("musique-sample-v4", "synthetic-test-small-v4")),
           ("graph_entity_walk", "graph_hybrid_balanced"), _entity_protocol, _entity_rows,
           _names("graph_entity_walk"), import_says="shares_name"),
)


def family_inputs(family: Family, tmp_path_factory) -> Inputs:
    """The family's protocol, source, relations and fixture, from the shared small synthetic inputs."""
    base = built_inputs(tmp_path_factory)
    root = tmp_path_factory.mktemp(f"{family.name}-inputs")
    inputs = Inputs(root, root / "protocol.json", root / "source.json", root / "relations.json",
                    root / "fixture.json", root / "generation.json")
    previous = base.protocol
    for i, (step, version) in enumerate(family.derive):
        output = inputs.protocol if i == len(family.derive) - 1 else root / f"step-{i}.json"
        lab_cli("protocol", "derive", step, "--protocol", previous, "--version", version, "--output", output)
        previous = output
    protocol = json.loads(inputs.protocol.read_text())
    family.edit_protocol(protocol)
    inputs.protocol.write_text(json.dumps(protocol, indent=2))
    out = lab_cli("import", "--protocol", inputs.protocol, "--data-dir", base.root / "synthetic",
                  "--output", inputs.source, "--relations", inputs.relations)
    if family.import_says:
        assert family.import_says in out.stdout
    lab_cli("embed", "build", "--source", inputs.source, "--output", inputs.fixture,
            "--generation", inputs.generation)
    return inputs


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_a_family_campaign_verifies_exports_and_audits(family: Family, tmp_path_factory, tmp_path):
    inputs = family_inputs(family, tmp_path_factory)
    family.check_protocol(json.loads(inputs.protocol.read_text()), inputs)
    prepared = prepared_lab(inputs, tmp_path / "lab")
    plan, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    try:
        prepared.evaluate(plan, report_path)
    finally:
        assert prepared.lab.stop() == 0
    report = json.loads(report_path.read_text())
    assert report["status"] == "complete"
    primary = [c for c in report["statistics"]["contrasts"] if c["label"] == "confirmatory"]
    assert {(c["candidate"], c["baseline"]) for c in primary} == {family.primary}
    family.check_rows(report)

    public = tmp_path / "public.json"
    lab_cli("export", "--report", report_path, "--fixture", inputs.fixture, "--output", public)
    family.check_public(tmp_path)
    out = lab_cli("audit", "--report", report_path, "--fixture", inputs.fixture,
                  "--relations", inputs.relations, "--protocol", inputs.protocol, "--public", public)
    assert "ok public" in out.stdout and "all checks hold" in out.stdout
