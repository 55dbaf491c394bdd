"""The words around a report's paired comparisons: the recipe note, the one-sentence reading of
each confirmatory contrast, and the pooled suite's table and pages. The contrast table itself is
built in `contrasts.py` and rendered to Markdown and HTML from there.

Every contrast shows its query-level bootstrap interval, the cluster interval, the randomization p
(raw and Holm), the detectable effect of the primary unit and wins/losses/ties; each confirmatory
contrast also gets one sentence that cannot be misread: "this cohort can detect effects of about ±X".
"""

from __future__ import annotations

from collections.abc import Mapping


def p_text(p: float | None) -> str:
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def p_phrase(p: float | None, name: str = "p") -> str:
    """"p = 0.043", "p < 0.001" (never "p = < 0.001"), "p n/a"; `name` e.g. "Holm p"."""
    if p is None:
        return f"{name} n/a"
    return f"{name} < 0.001" if p < 0.001 else f"{name} = {p:.3f}"


def interval_text(interval) -> str:
    return f"[{interval[0]:+.3f}, {interval[1]:+.3f}]"


def effect_text(value: float | None) -> str:
    return "n/a" if value is None else f"±{value:.3f}"


def primary_unit(stats: Mapping) -> str:
    return (stats.get("clusters") or {}).get("primary_interval", "query")


def detectable(contrast: Mapping, unit: str) -> float | None:
    source = contrast.get("cluster") if unit == "cluster" else contrast
    return (source or {}).get("detectable_effect")


def detect_sentence(contrast: Mapping, unit: str) -> str:
    value = detectable(contrast, unit)
    if value is None:
        return ("no detectable effect can be estimated (fewer than two units, or every paired delta is the "
                "same)")
    return f"this cohort can detect effects of about {effect_text(value)}"


def primary_p(contrast: Mapping, unit: str) -> tuple[float | None, float | None]:
    """(raw p, Holm p) of the primary interval's unit."""
    source = (contrast.get("cluster") or {}) if unit == "cluster" else contrast
    return source.get("p_value"), source.get("p_value_holm")


def methods_note(stats: Mapping) -> str:
    clusters = stats["clusters"]
    randomization = stats["randomization"]
    power = stats["detectable_effect"]
    return (f"Paired bootstrap, {stats['resamples']} resamples, {stats['confidence']:.0%} percentile interval, seed "
            f"{stats['seed']} ({stats['rng']}). Cluster interval: whole clusters resampled, rule `{clusters['rule']}` "
            f"({clusters['clusters']} clusters of {clusters['queries']} queries, largest {clusters['largest']}); the "
            f"primary interval is the {clusters['primary_interval']}-level one. p: paired sign-flip randomization "
            f"test, two-sided, {randomization['permutations']:,} permutations (exact over every sign pattern when they "
            f"are fewer), at the {clusters['primary_interval']} level; Holm adjusts the exploratory contrasts of "
            f"each metric as one family, the confirmatory contrast is not adjusted. Detectable effect: "
            f"{power['power']:.0%} power at alpha {power['alpha']}, {power['factor']:.4f} x SE of the {clusters['primary_interval']}-level mean delta.")


def reading_note(stats: Mapping) -> str:
    """The short reading guide printed after the contrast table: what each column is, without the
    generator's detail (resample and permutation counts, the RNG; those stay in `statistics`)."""
    clusters = stats["clusters"]
    unit = clusters["primary_interval"]
    power = stats["detectable_effect"]
    return (f"Delta is candidate − baseline per query. Interval: {stats['confidence']:.0%} paired bootstrap; "
            f"cluster interval: whole clusters of dependent queries resampled ({clusters['clusters']} clusters). "
            f"p: two-sided paired randomization test at the {unit} level; Holm p adjusts each metric's exploratory "
            f"contrasts as one family (the confirmatory contrast is not adjusted). Detectable: the effect the "
            f"cohort finds with {power['power']:.0%} power at alpha {power['alpha']}.")


def after_note(stats: Mapping) -> str:
    """What follows the contrast table: the reading guide, then one sentence per confirmatory
    contrast. A report written before the randomization test and clusters existed has none."""
    if "clusters" not in stats:
        return ""
    return " ".join([reading_note(stats), *confirmatory_sentences(stats)])


def confirmatory_sentences(stats: Mapping) -> list[str]:
    """One sentence per confirmatory contrast: delta, both intervals, p and what the cohort can detect."""
    unit = primary_unit(stats)
    out = []
    for c in stats["contrasts"]:
        if c["label"] == "exploratory":
            continue
        cluster = c.get("cluster") or {}
        out.append(f"{c['candidate']} − {c['baseline']}, {c['metric']}: {c['mean_delta']:+.3f} "
                   f"{interval_text(c['interval'])} over queries, "
                   f"{interval_text(cluster['interval']) if cluster else 'n/a'} over clusters, "
                   f"{p_phrase(primary_p(c, unit)[0])}; {detect_sentence(c, unit)}.")
    return out


def note(stats: Mapping) -> str:
    """The note above a report's contrast table: the recipe, then the confirmatory sentences. A
    report written before the randomization test and clusters existed gets the bootstrap recipe only."""
    if "clusters" not in stats:
        return (f"Paired bootstrap, {stats['resamples']} resamples, {stats['confidence']:.0%} percentile interval, "
                f"seed {stats['seed']} ({stats['rng']}).")
    return " ".join([methods_note(stats), *confirmatory_sentences(stats)])


# ---------------------------------------------------------------- pooled suites


PLURAL = {"query": "queries", "cluster": "clusters"}
POOLED_HEADER = ("dataset", "weight", "queries", "clusters (largest)", "candidate", "baseline", "delta",
                 "interval", "cluster interval", "p", "detectable")


def pooled_rows(pooled: Mapping) -> list[list[str]]:
    """The pooled table's cells: one row per dataset, then the pooled row (unit as the suite declares)."""
    unit = pooled["pooling"]["unit"]
    rows = []
    for d in pooled["per_dataset"]:
        cluster = d["cluster"]
        rows.append([d["dataset"], f"{d['weight']:.3f}", str(d["queries"]),
                     f"{cluster['clusters']} ({cluster['largest']})", f"{d['candidate_mean']:.3f}",
                     f"{d['baseline_mean']:.3f}", f"{d['mean_delta']:+.3f}", interval_text(d["interval"]),
                     interval_text(cluster["interval"]), p_text(d["p_value"] if unit == "query" else cluster["p_value"]),
                     effect_text(detectable(d, unit))])
    p = pooled["pooled"]
    intervals = {unit: interval_text(p["interval"])}
    other = pooled.get("pooled_other_unit")  # absent from results pooled before it existed
    if other:
        intervals[other["unit"]] = f"({interval_text(other['interval'])})"
    clusters = p["units"] if unit == "cluster" else (other or {}).get("units", "")
    rows.append([f"pooled ({pooled['pooling']['weights'].replace('_', ' ')} weights, {PLURAL[unit]})", "1.000", str(p["queries"]),
                 str(clusters), "", "", f"{p['mean_delta']:+.3f}",
                 intervals.get("query", ""), intervals.get("cluster", ""),
                 p_text(p["p_value"]), effect_text(p["detectable_effect"])])
    return rows


def pooled_sentence(pooled: Mapping) -> str:
    c, p = pooled["primary_contrast"], pooled["pooled"]
    detect = ("the pooled cohort is too small to estimate a detectable effect" if p["detectable_effect"] is None
              else f"the pooled cohort can detect effects of about {effect_text(p['detectable_effect'])}")
    return (f"Pooled {c['candidate']} − {c['baseline']}, {c['metric']} ({c['label']}): {p['mean_delta']:+.3f} "
            f"{interval_text(p['interval'])}, {p_phrase(p['p_value'])}; {detect}.")


def pooled_note(pooled: Mapping) -> str:
    pooling = pooled["pooling"]
    return (f"Stratified paired bootstrap resampling {PLURAL[pooling['unit']]} within each dataset, datasets weighted "
            f"{pooling['weights'].replace('_', ' ')}, {pooling['resamples']} resamples, {pooling['confidence']:.0%} "
            f"percentile interval; paired sign-flip randomization test, two-sided, {pooling['permutations']:,} "
            f"permutations; seed {pooled['seed']}. Dataset rows: that dataset alone, same seed; p and detectable "
            f"effect at the {pooling['unit']} level (80% power, alpha 0.05)."
            + (f" The pooled interval in parentheses resamples {PLURAL[pooled['pooled_other_unit']['unit']]}, the "
               f"unit the suite did not declare: shown for comparison, not the result."
               if pooled.get("pooled_other_unit") else ""))


def pooled_markdown(pooled: Mapping) -> str:
    lines = [f"# {pooled['suite_version']}: pooled primary contrast", "", pooled["title"], "",
             pooled_sentence(pooled), "", pooled_note(pooled), "",
             "| " + " | ".join(POOLED_HEADER) + " |", "|" + "---|" * len(POOLED_HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in pooled_rows(pooled)]
    for part in secondary_views(pooled):
        lines += ["", f"## Secondary: {part['primary_contrast']['candidate']} − {part['primary_contrast']['baseline']}",
                  "", pooled_sentence(part), "", "| " + " | ".join(POOLED_HEADER) + " |", "|" + "---|" * len(POOLED_HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in pooled_rows(part)]
    lines += ["", "Reports (audited):", ""]
    lines += [f"- {name}: `{r['path']}` (protocol {r['protocol_version']}, digest `{r['protocol_digest']}`)"
              for name, r in pooled["reports"].items()]
    return "\n".join(lines) + "\n"


def secondary_views(pooled: Mapping) -> list[dict]:
    """Each secondary contrast shaped like a pooled result, so the primary's renderers draw it. Its
    other-unit row is its own (absent from results pooled before secondaries had one: then none is
    shown, never the primary's)."""
    views = []
    for part in pooled.get("secondary_contrasts", []):
        view = {k: v for k, v in pooled.items() if k != "pooled_other_unit"}
        view.update(primary_contrast=part["contrast"], per_dataset=part["per_dataset"], pooled=part["pooled"])
        if "pooled_other_unit" in part:
            view["pooled_other_unit"] = part["pooled_other_unit"]
        views.append(view)
    return views
