"""The paired comparisons of a report as a reader sees them: one home for how a contrast is
printed (Markdown now; the HTML report and the comparison outputs render the same fields).

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
        return "this cohort is too small to estimate a detectable effect"
    return f"this cohort can detect effects of about {effect_text(value)}"


def methods_note(stats: Mapping) -> str:
    clusters = stats["clusters"]
    randomization = stats["randomization"]
    power = stats["detectable_effect"]
    return (f"Paired bootstrap, {stats['resamples']} resamples, {stats['confidence']:.0%} percentile interval, seed "
            f"{stats['seed']} ({stats['rng']}). Cluster interval: whole clusters resampled, rule `{clusters['rule']}` "
            f"({clusters['clusters']} clusters of {clusters['queries']} queries, largest {clusters['largest']}); the "
            f"primary interval is the {clusters['primary_interval']}-level one. p: paired sign-flip randomization "
            f"test, two-sided, {randomization['permutations']:,} permutations (exact over every sign pattern when they "
            f"are fewer), query level; Holm adjusts the exploratory contrasts of each metric as one family, the "
            f"confirmatory contrast is not adjusted. Detectable effect: {power['power']:.0%} power at alpha "
            f"{power['alpha']}, {power['factor']:.4f} x SE of the {clusters['primary_interval']}-level mean delta.")


def markdown(stats: Mapping | None) -> list[str]:
    """The "Paired comparisons" section of the Markdown summary (empty without statistics)."""
    if not stats:
        return []
    unit = primary_unit(stats)
    lines = ["", "## Paired comparisons", "", methods_note(stats), "",
             "| candidate | baseline | metric | label | candidate | baseline | delta | interval | cluster interval | "
             "p | p (Holm) | detectable | W/L/T |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in stats["contrasts"]:
        cluster = c.get("cluster") or {}
        lines.append(f"| {c['candidate']} | {c['baseline']} | {c['metric']} | {c['label']} | "
                     f"{c['candidate_mean']:.3f} | {c['baseline_mean']:.3f} | {c['mean_delta']:+.3f} | "
                     f"{interval_text(c['interval'])} | "
                     f"{interval_text(cluster['interval']) if cluster else 'n/a'} | {p_text(c.get('p_value'))} | "
                     f"{p_text(c.get('p_value_holm'))} | {effect_text(detectable(c, unit))} | "
                     f"{c['wins']}/{c['losses']}/{c['ties']} |")
    confirmatory = [c for c in stats["contrasts"] if c["label"] != "exploratory"]
    if confirmatory:
        lines.append("")
    for c in confirmatory:
        cluster = c.get("cluster") or {}
        lines.append(f"- {c['candidate']} − {c['baseline']}, {c['metric']}: {c['mean_delta']:+.3f} "
                     f"{interval_text(c['interval'])} over queries, "
                     f"{interval_text(cluster['interval']) if cluster else 'n/a'} over clusters, p = "
                     f"{p_text(c.get('p_value'))}; {detect_sentence(c, unit)}.")
    return lines
