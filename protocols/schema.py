"""Loading and validating a frozen protocol file, field by field.

A protocol is checked completely before any stage uses it: every field's type and allowed values,
the row format (`row_format`, absent: MuSiQue) and counts keyed by its strata (MuSiQue's hops
"2"/"3"/"4", HotpotQA's and 2Wiki's types), methods that reference existing ranking profiles of the matching
family, a primary contrast between existing methods, expected ids that agree with the counts.
Each failure names the field path and the reason. A method's route, its profile family and its own
fields come from ROUTES (protocols/routes.py), where a route is declared once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ground.artifacts import (
    ALL_ROWS,
    HOP_KEYS,
    WARMUP_DEVELOPMENT,
    WARMUP_RULES,
    RowFormat,
    check_dataset,
    check_row_format,
    check_splits,
    hop_category,
)
from ground.command import typed
from ground.errors import RefusedInput
from ground.fields import Fields, join
from ground.files import load_validated
from protocols import metrics as metric_registry
from protocols.embedding_space import FIELD as EMBEDDING_SPACE
from protocols.embedding_space import check_embedding_space, encoder_of
from protocols.fusion import check_profile_rules
from protocols.graph_file import IMPORTED_BUILDER, check_graph_builder
from protocols.published import FIELD as PUBLISHED_COHORT
from protocols.published import check_published_cohort
from protocols.route import SEARCH_LIMIT
from protocols.routes import FAMILIES, ROUTES

TEST_ONLY = "test_only"


class ProtocolError(RefusedInput):
    """A protocol file that is missing, malformed or breaks the protocol format."""


GRAPH_BUILDERS = ("document_title_graph_v1", "document_entity_graph_v1", "document_ner_graph_v1",
                  IMPORTED_BUILDER)  # builders/graph_builders.py
# a builder whose file holds another's relations byte for byte (builders/ner_graph.py keeps the v4
# ones, builders/imported_graph.py the title graph's)
BUILDER_INCLUDES = {"document_ner_graph_v1": ("document_entity_graph_v1",),
                    IMPORTED_BUILDER: ("document_title_graph_v1",)}
TOP_KEYS = ("protocol_version", "title", "dataset", "source_files", "selection", "protocol_seed",
            "graph_builder", "evaluation", "methods", "ranking_profiles")
# `row_format` is optional: absent means MuSiQue (the frozen MuSiQue protocols predate it).
# `test_only` states that a cohort has no development split (docs/hipporag.md); `published_cohort`
# names the published cohort a protocol is, or is a twin of (protocols/published.py).
OPTIONAL_TOP_KEYS = ("row_format", EMBEDDING_SPACE, TEST_ONLY, PUBLISHED_COHORT)


def load_protocol(path: str | Path) -> dict:
    """Read and validate a protocol file; raise ProtocolError naming the field on any fault."""
    return load_validated(path, "protocol", validate_protocol, ProtocolError)


def validate_protocol(value: Any) -> dict:
    """Return `value` unchanged when it is a valid protocol; else raise ProtocolError."""
    f = Fields(ProtocolError)
    f.obj(value, "", TOP_KEYS, optional=OPTIONAL_TOP_KEYS)
    f.string(value["protocol_version"], "protocol_version")
    f.string(value["title"], "title")
    row_format = check_row_format(f, value)
    check_dataset(f, value["dataset"])
    _check_source_files(f, value["source_files"])
    _check_selection(f, value["selection"], value["source_files"], row_format)
    _check_layout(f, value, row_format)
    f.integer(value["protocol_seed"], "protocol_seed", minimum=0)
    builder = check_graph_builder(f, value["graph_builder"], GRAPH_BUILDERS)
    profiles = _check_profiles(f, value["ranking_profiles"])
    _check_relations_needed(f, profiles, builder["method"])
    methods = _check_methods(f, value["methods"], profiles)
    _check_evaluation(f, value["evaluation"], methods, value["selection"]["splits"])
    if EMBEDDING_SPACE in value:  # optional: a protocol that pins the encoder (protocols/embedding_space.py)
        check_embedding_space(f, value[EMBEDDING_SPACE])
    _check_thresholds(f, value, methods)
    if PUBLISHED_COHORT in value:
        check_published_cohort(f, value[PUBLISHED_COHORT])
    return value


def _check_layout(f: Fields, value: dict, row_format: RowFormat) -> None:
    """A corpus layout pins its corpus file, which no split draws from; a test-only cohort says so and
    has no development split."""
    splits = value["selection"]["splits"]
    if row_format.corpus_role is not None:
        if row_format.corpus_role not in value["source_files"]:
            f.fail("source_files", f"row format {row_format.name} reads its documents from a "
                                   f"{row_format.corpus_role!r} file: pin it there")
        for name, split in splits.items():
            if split["source"] == row_format.corpus_role:
                f.fail(join(join("selection.splits", name), "source"), "the corpus holds passages, not questions")
    if TEST_ONLY in value:
        f.string(value[TEST_ONLY], TEST_ONLY)
        if "development" in splits:
            f.fail(TEST_ONLY, "a test-only cohort has no development split")


def _check_source_files(f: Fields, files: Any) -> None:
    f.mapping(files, "source_files")
    for role, entry in files.items():
        path = join("source_files", role)
        f.obj(entry, path, ("name", "sha256"), optional=("bytes",))
        name = f.string(entry["name"], join(path, "name"))
        # names are looked up inside --source-dir; a path here could point anywhere
        if "/" in name or "\\" in name or name in (".", ".."):
            f.fail(join(path, "name"), f"must be a plain file name, got {name!r}")
        f.hex64(entry["sha256"], join(path, "sha256"))
        if "bytes" in entry:  # the size, checked before the hash (importer.reading.verify_hash)
            f.integer(entry["bytes"], join(path, "bytes"), minimum=0)


def _check_selection(f: Fields, selection: Any, files: dict, row_format: RowFormat) -> None:
    f.obj(selection, "selection", ("version", "seed", "order", "splits", "expected_ids"))
    # one rule (protocols.selection), named per row format: by hop for MuSiQue, by type otherwise
    f.string(selection["version"], "selection.version", allowed=[row_format.selection_version])
    f.string(selection["seed"], "selection.seed")
    splits = check_splits(f, selection, files, row_format.strata)
    expected = selection["expected_ids"]
    if expected is None:
        return
    f.obj(expected, "selection.expected_ids", (), optional=sorted(splits))
    for name, ids in expected.items():
        if ids is not None:
            _check_expected_ids(f, ids, join("selection.expected_ids", name), splits[name]["counts"],
                                row_format)


def _check_expected_ids(f: Fields, ids: Any, path: str, counts: dict, row_format: RowFormat) -> None:
    f.strings(ids, path)
    f.ascending(ids, path, "id")
    if row_format.by_type:
        # a type lives in the row, not in its id: only the total can be checked here
        if len(ids) != sum(counts.values()):
            f.fail(path, f"holds {len(ids)} ids, counts ask for {sum(counts.values())}")
        return
    per_hop = {hop: 0 for hop in HOP_KEYS}
    for i, row_id in enumerate(ids):
        strata = hop_category(row_id)
        if strata is None:
            f.fail(join(path, i), f"unknown hop prefix in {row_id!r}")
        per_hop[str(strata[0])] += 1
    if counts == ALL_ROWS:  # no count to agree with: the importer compares the ids themselves
        return
    for hop in HOP_KEYS:
        if per_hop[hop] != counts[hop]:
            f.fail(path, f"holds {per_hop[hop]} {hop}-hop ids, counts ask for {counts[hop]}")


def _check_profiles(f: Fields, profiles: Any) -> dict:
    """Each profile names a family of ROUTES, whose declaration checks it further (its `check_profile`)."""
    f.mapping(profiles, "ranking_profiles")
    for name, profile in profiles.items():
        path = join("ranking_profiles", name)
        f.obj(profile, path, ("family", "tie_break"), extra=True)
        family = f.string(profile["family"], join(path, "family"), allowed=FAMILIES)
        f.string(profile["tie_break"], join(path, "tie_break"))
        check_profile_rules(f, profile, path, profiles)  # a fusion rule no side implements stops the load
        check = ROUTES[family].check_profile
        if check is not None:
            check(f, profile, path, profiles)
    return profiles


def _check_relations_needed(f: Fields, profiles: dict, method: str) -> None:
    """A profile that follows the relations of one builder (a `relations` field of its own or of one
    of its sections) needs the protocol to build them; without them the method would silently rank
    as another one."""
    built = (method,) + BUILDER_INCLUDES.get(method, ())
    for name, profile in profiles.items():
        holders = [("", profile)] + [(key, value) for key, value in profile.items() if isinstance(value, dict)]
        for part, holder in holders:
            if "relations" in holder and holder["relations"] not in built:
                path = join(join("ranking_profiles", name), part) if part else join("ranking_profiles", name)
                f.fail(join(path, "relations"), f"follows the relations of {holder['relations']!r}, but "
                                                f"graph_builder.method is {method!r}")


def _check_methods(f: Fields, methods: Any, profiles: dict) -> dict:
    f.mapping(methods, "methods")
    for name, method in methods.items():
        path = join("methods", name)
        if not isinstance(method, dict):
            f.fail(path, "expected an object")
        if "route" not in method:
            f.fail(join(path, "route"), "missing field")
        route_name = f.string(method["route"], join(path, "route"), allowed=sorted(ROUTES))
        route = ROUTES[route_name]
        f.obj(method, path, ("route", "profile", "limit") + route.fields)
        profile = f.string(method["profile"], join(path, "profile"))
        if profile not in profiles:
            f.fail(join(path, "profile"), f"{profile!r} is not a ranking profile of this protocol")
        if profiles[profile]["family"] != route.family:
            f.fail(join(path, "profile"),
                   f"profile {profile!r} is of family {profiles[profile]['family']!r}, route {route_name!r} needs {route.family!r}")
        f.integer(method["limit"], join(path, "limit"), minimum=1)
        if route.check is not None:
            route.check(f, method, path, profiles)
    return methods


def _check_thresholds(f: Fields, value: dict, methods: dict) -> None:
    """A similarity threshold runs only on the encoder it was set for, or one its profile says how it
    carries over to (protocols/route.py `Threshold`): the same number means another rule elsewhere.
    Every method that breaks the rule is named, each profile's reason once, with advice a user can
    follow: the profile calibrated for this encoder and a protocol that runs it, where they exist."""
    encoder = encoder_of(value)
    offenders: dict[str, list[str]] = {}  # profile -> the methods that run it
    reasons: dict[str, str] = {}
    for name, method in methods.items():
        for threshold in ROUTES[method["route"]].thresholds.get(method["profile"], ()):
            if not threshold.runs_under(encoder):
                offenders.setdefault(method["profile"], []).append(name)
                reasons[method["profile"]] = _threshold_reason(method, threshold, value, encoder)
    if offenders:
        raise f.error(f"{len(offenders)} profile(s) hold a similarity threshold that does not run under this "
                      f"protocol's encoder, {encoder} (docs/embeddings.md, \"Thresholds and their encoder\"):\n"
                      + "\n".join(f"- {'method' if len(names) == 1 else 'methods'} {', '.join(names)} (profile "
                                   f"{profile}): {reasons[profile]}" for profile, names in offenders.items()))


def _threshold_reason(method: dict, threshold, protocol: dict, encoder: str) -> str:
    from protocols.embedding_space import how_to_get

    route = ROUTES[method["route"]]
    number = threshold.value_in(protocol["ranking_profiles"][method["profile"]])
    runs = [threshold.set_for, *threshold.carries_over]
    said = (f"{'.'.join(threshold.path)} = {number} was set for {threshold.set_for} ({threshold.source}); it runs "
            f"under {', '.join(runs)}. ")
    calibrated = [p for p, held in route.thresholds.items() if any(t.path == threshold.path and t.runs_under(encoder)
                                                                  for t in held)]
    if calibrated:
        where = _protocols_running(calibrated, encoder)
        return said + (f"Use the profile calibrated for {encoder}: {', '.join(calibrated)}"
                       + (f"; protocol {where[0]} runs it, and `{typed(f'protocol show {where[0]}')}` shows the "
                          f"step that swaps it into a protocol" if where else "") + ".")
    ways = "; ".join(how_to_get(e) for e in runs)
    return said + f"No profile calibrated for {encoder} exists yet: pin an encoder it runs under ({ways})."


def _protocols_running(profiles: list[str], encoder: str) -> list[str]:
    """The committed protocols that run one of `profiles` under `encoder` (read as files, not validated)."""
    import json

    from protocols.committed import DATASETS_DIR

    found = []
    for path in sorted(DATASETS_DIR.glob("*.json")):
        if path.name.endswith(".lock.json"):
            continue
        protocol = json.loads(path.read_text(encoding="utf-8"))
        if encoder_of(protocol) == encoder and any(m.get("profile") in profiles for m in protocol["methods"].values()):
            found.append(protocol["protocol_version"])
    return found


EVALUATION_KEYS = ("split", "k", "recall_cutoffs", "repetitions", "warmup", "min_score", "scan_limit",
                   "bootstrap", "tie_tolerance", "primary_contrast", "exploratory_contrasts",
                   "contrast_metrics")


def _check_evaluation(f: Fields, evaluation: Any, methods: dict, splits: dict) -> None:
    f.obj(evaluation, "evaluation", EVALUATION_KEYS,
          optional=("exploratory_analyses", "depth", "metrics") + STATISTICS_OPTIONS)
    if "exploratory_analyses" in evaluation:  # protocol v2: declared, labelled exploratory
        _check_exploratory_analyses(f, evaluation["exploratory_analyses"], methods)
    _check_statistics_options(f, evaluation)
    f.string(evaluation["split"], "evaluation.split", allowed=sorted(splits))
    k = f.integer(evaluation["k"], "evaluation.k", minimum=1)
    depth = _check_depth(f, evaluation, methods, k)
    cutoffs = f.array(evaluation["recall_cutoffs"], "evaluation.recall_cutoffs", nonempty=True)
    for i, cutoff in enumerate(cutoffs):
        f.integer(cutoff, join("evaluation.recall_cutoffs", i), minimum=1)
        if cutoff > depth:
            f.fail(join("evaluation.recall_cutoffs", i),
                   f"{cutoff} exceeds evaluation.k = {k}" if depth == k else f"{cutoff} exceeds evaluation.depth = {depth}")
    f.ascending(cutoffs, "evaluation.recall_cutoffs", "cutoff")
    f.integer(evaluation["repetitions"], "evaluation.repetitions", minimum=1)
    warmup = f.string(evaluation["warmup"], "evaluation.warmup", allowed=WARMUP_RULES)
    if warmup == WARMUP_DEVELOPMENT and "development" not in splits:
        f.fail("evaluation.warmup", f"{WARMUP_DEVELOPMENT} needs a development split; a test-only cohort "
                                    f"warms up with {WARMUP_RULES[1]}")
    f.number(evaluation["min_score"], "evaluation.min_score", low=-1.0, high=1.0)
    f.integer(evaluation["scan_limit"], "evaluation.scan_limit", minimum=1)
    bootstrap = f.obj(evaluation["bootstrap"], "evaluation.bootstrap", ("resamples", "confidence", "order"))
    f.integer(bootstrap["resamples"], "evaluation.bootstrap.resamples", minimum=1)
    confidence = f.number(bootstrap["confidence"], "evaluation.bootstrap.confidence")
    if not 0.0 < confidence < 1.0:
        f.fail("evaluation.bootstrap.confidence", f"must lie strictly between 0 and 1, got {confidence}")
    f.string(bootstrap["order"], "evaluation.bootstrap.order")
    f.number(evaluation["tie_tolerance"], "evaluation.tie_tolerance", low=0.0)
    contrast = f.obj(evaluation["primary_contrast"], "evaluation.primary_contrast",
                     ("candidate", "baseline", "label"))
    for role in ("candidate", "baseline"):
        f.string(contrast[role], join("evaluation.primary_contrast", role), allowed=sorted(methods))
    if contrast["candidate"] == contrast["baseline"]:
        f.fail("evaluation.primary_contrast.baseline", "must differ from the candidate")
    f.string(contrast["label"], "evaluation.primary_contrast.label")
    f.string(evaluation["exploratory_contrasts"], "evaluation.exploratory_contrasts")
    _check_metric_names(f, evaluation)


def _check_metric_names(f: Fields, evaluation: dict) -> None:
    """`evaluation.metrics` (optional) asks for metrics beyond the standard ones; every contrast metric
    is a column this evaluation reports (protocols/metrics/), so a misspelt name stops the load."""
    if "metrics" in evaluation:
        added = [m for m in metric_registry.METRICS if m not in metric_registry.STANDARD]
        for i, name in enumerate(f.strings(evaluation["metrics"], "evaluation.metrics", nonempty=True, unique=True)):
            if name not in added:
                f.fail(join("evaluation.metrics", i),
                       f"{name!r} is not a metric added to the standard ones; added: {', '.join(added) or 'none'} "
                       f"(every report holds the standard {', '.join(metric_registry.STANDARD)})")
    known = metric_registry.names(evaluation)
    for i, name in enumerate(f.strings(evaluation["contrast_metrics"], "evaluation.contrast_metrics", nonempty=True,
                                       unique=True)):
        if name not in known:
            f.fail(join("evaluation.contrast_metrics", i),
                   f"{name!r} is not a metric this evaluation reports; known: {', '.join(known)}")


SEARCH_LIMIT_MAX = SEARCH_LIMIT[1]  # the most any method may return (protocols/route.py)


def _check_depth(f: Fields, evaluation: dict, methods: dict, k: int) -> int:
    """`evaluation.depth` (optional; absent: k): at least k, at most the search limit, and every
    method returns exactly that many documents, so every ranking is judged to the same depth."""
    if "depth" not in evaluation:
        return k
    depth = f.integer(evaluation["depth"], "evaluation.depth", minimum=k)
    if depth > SEARCH_LIMIT_MAX:
        f.fail("evaluation.depth", f"{depth} exceeds the lab's search limit {SEARCH_LIMIT_MAX}")
    for name, spec in sorted(methods.items()):
        if isinstance(spec, dict) and spec.get("limit") != depth:
            f.fail(join(join("methods", name), "limit"), f"{spec.get('limit')} is not evaluation.depth = {depth}")
    return depth


# Optional statistics fields, added after the v1 protocols froze (docs/reports.md "Statistics"); a protocol without them gets
# 10,000 permutations, the cluster rule "auto" and the query-level interval as the primary one.
STATISTICS_OPTIONS = ("randomization", "clusters")
MIN_PERMUTATIONS = 10_000
CLUSTER_RULES = ("auto", "musique_single_hop_components_v1", "supporting_titles_v1")
PRIMARY_INTERVALS = ("query", "cluster")


def _check_statistics_options(f: Fields, evaluation: dict) -> None:
    if "randomization" in evaluation:
        randomization = f.obj(evaluation["randomization"], "evaluation.randomization", ("permutations",))
        f.integer(randomization["permutations"], "evaluation.randomization.permutations", minimum=MIN_PERMUTATIONS)
    if "clusters" in evaluation:
        clusters = f.obj(evaluation["clusters"], "evaluation.clusters", (), optional=("rule", "primary_interval"))
        if "rule" in clusters:
            f.string(clusters["rule"], "evaluation.clusters.rule", allowed=CLUSTER_RULES)
        if "primary_interval" in clusters:
            f.string(clusters["primary_interval"], "evaluation.clusters.primary_interval", allowed=PRIMARY_INTERVALS)


def _check_exploratory_analyses(f: Fields, analyses: Any, methods: dict) -> None:
    path = "evaluation.exploratory_analyses"
    f.obj(analyses, path, ("label",), extra=True)
    f.string(analyses["label"], join(path, "label"), allowed=("exploratory",))
    for name, analysis in analyses.items():
        if isinstance(analysis, dict) and "methods" in analysis:
            for i, method in enumerate(f.strings(analysis["methods"], join(join(path, name), "methods"), nonempty=True)):
                if method not in methods:
                    f.fail(join(join(join(path, name), "methods"), i), f"{method!r} is not a method of this protocol")
    budget = analyses.get("budget_curve")
    if budget is not None:
        f.obj(budget, join(path, "budget_curve"), ("budgets",), extra=True)
        budgets = f.array(budget["budgets"], join(path, "budget_curve.budgets"), nonempty=True)
        for i, value in enumerate(budgets):
            f.integer(value, join(join(path, "budget_curve.budgets"), i), minimum=1)
        f.ascending(budgets, join(path, "budget_curve.budgets"), "budget")
