"""docs/example/: the committed example is what its example.json renders, byte for byte, and the
example of a campaign does not depend on its timings or its lab's random id."""

from __future__ import annotations

import json

import pytest

from evaluator.export.example import RUN_SPECIFIC, decode, differences
from tests.conftest import REPO, lab_cli
from tests.evaluation_fixtures import exported_runs

EXAMPLE = REPO / "docs" / "example"


@pytest.mark.heavy  # renders the whole example
def test_the_committed_example_is_what_its_report_renders():
    assert (EXAMPLE / "example.json").is_file(), "docs/example/ is absent: run `make example`"
    assert differences(EXAMPLE) == []
    ran = lab_cli("example", "--check", EXAMPLE)
    assert "every file is what example.json renders" in ran.stdout
    example = decode((EXAMPLE / "example.json").read_bytes())
    assert example["protocol_version"] == "synthetic-v1" and example["lab"]["lab_id"] == RUN_SPECIFIC
    markdown = (EXAMPLE / "public.md").read_text()
    assert markdown.index("## Answer") < markdown.index("## Campaign")
    assert "](public.figures/forest.svg)" in markdown and "## Latency" not in markdown


@pytest.mark.heavy  # renders the whole example
def test_a_changed_file_fails_the_check(tmp_path):
    import shutil

    copy = tmp_path / "example"
    shutil.copytree(EXAMPLE, copy)
    (copy / "public.md").write_text((copy / "public.md").read_text().replace("0.", "1.", 1))
    (copy / "public.figures" / "extra.svg").write_text("<svg/>")
    assert differences(copy) == ["public.md: not what example.json renders",
                                 "public.figures/extra.svg: not rendered from example.json"]
    assert lab_cli("example", "--check", copy, check=False).returncode == 1


@pytest.mark.heavy  # two exported campaigns
def test_two_campaigns_that_differ_only_in_timings_give_the_same_example(tmp_path_factory, tmp_path):
    a, b = exported_runs(tmp_path_factory)
    assert json.loads(a.public.read_text())["jobs"] != json.loads(b.public.read_text())["jobs"]
    for run, name in ((a, "a"), (b, "b")):
        lab_cli("example", "--run-dir", run.directory, "--output-dir", tmp_path / name)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) >= 7
    assert [f for f in files if (tmp_path / "a" / f).read_bytes() != (tmp_path / "b" / f).read_bytes()] == []
    ran = lab_cli("example", "--run-dir", a.directory, "--output-dir", tmp_path / "a", check=False)
    assert ran.returncode == 2 and "refusing to overwrite" in ran.stderr
    example = (tmp_path / "a" / "example.json").read_text()
    assert "http_ms" not in example and "rss_bytes" not in example
