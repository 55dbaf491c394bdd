"""The judged report's pages: `judged.md` and `judged.html` (one file, tables and the forest plot
inline), every number a `<data>` bound to its path in `judged.json`, like the public report's."""

from __future__ import annotations

from collections.abc import Mapping

from evaluator.numbers import verdicts
from evaluator.views import contrasts, html, plotting, tables
from evaluator.views.contrast_text import interval_text, p_phrase
from evaluator.views.tables import Table, metric_label, num


def title(judged: Mapping) -> str:
    return f"{judged['name']} ({judged['label']}) judged on {judged['campaign']['protocol_version']}"


def input_table(judged: Mapping) -> Table:
    given = judged["input"]
    t = Table("input", "What was judged", ["what", "value"])
    t.add("method", f"{judged['name']}: {judged['label']}")
    t.add("from", f"{given['kind']}: {given['source']}")
    if given.get("sha256"):
        t.add("run file SHA-256", given["sha256"])
    t.add("campaign", f"{judged['campaign']['protocol_version']}, private report {judged['campaign']['private_report_digest']}")
    t.add("cohort queries", num(judged, "campaign", "queries", fmt="d"))
    t.add("queries with no ranking (judged empty)", num(judged, "input", "missing_queries", fmt="d"))
    t.add("hits accepted", num(judged, "input", "hits_accepted", fmt="d"))
    t.add("depth (hits beyond it not judged)", num(judged, "input", "depth", fmt="d"))
    t.add("hits beyond the depth", num(judged, "input", "hits_beyond_depth", fmt="d"))
    t.add("equal scores", given["tie_rule"])
    ties = given.get("ties")
    if ties and ties["queries_with_ties"]:
        # the lab's figure and the one trec_eval would give the same file, side by side
        t.add(f"queries with equal scores; {metric_label(ties['metric'])} in the lab's order / trec_eval's",
              f"{ties['queries_with_ties']}; {ties['lab_order']:.4f} / {ties['trec_eval_order']:.4f}")
    retriever = judged.get("retriever")
    if retriever:
        t.add("retriever failures (judged empty)", num(judged, "retriever", "failures", fmt="d"))
        if retriever.get("latency_ms"):
            t.add("retriever latency p50 / p95 ms", tables.joined(num(judged, "retriever", "latency_ms", "p50", fmt=".2f"),
                                                                  num(judged, "retriever", "latency_ms", "p95", fmt=".2f")))
    return t


def methods_table(judged: Mapping) -> Table:
    methods = judged["aggregates"]["methods"]
    first = next(iter(methods.values()))
    names = [k for k in first if k != "queries"]
    t = Table("methods", "Methods", ["method", "label", "queries", *map(metric_label, names)])
    for m in methods:
        t.add(m, judged["aggregates"]["labels"][m], num(judged, "aggregates", "methods", m, "queries", fmt="d"),
              *(num(judged, "aggregates", "methods", m, n) for n in names))
    return t


def note(judged: Mapping) -> str:
    s = judged["statistics"]
    return (f"Each row: {judged['name']} − a frozen method, paired over the campaign's {judged['campaign']['queries']} "
            f"queries with the campaign's statistics: paired bootstrap, {s['resamples']} resamples, "
            f"{s['confidence']:.0%} percentile interval, seed {s['seed']}; clusters by {s['clusters']['rule']} "
            f"({s['clusters']['clusters']} clusters); paired sign-flip test, {s['randomization']['permutations']:,} "
            f"permutations. Holm family: {s['multiplicity']['families']}. p, Holm p and the detectable effect are "
            f"those of the {s['clusters']['primary_interval']}-level unit.")


def contrasts_table(judged: Mapping) -> Table:
    s = judged["statistics"]
    return contrasts.table(judged, ("statistics", "contrasts"),
                           [("external", lambda c: c["candidate"]), ("frozen method", lambda c: c["baseline"])],
                           id="contrasts", title=f"Paired comparisons: {judged['name']} − each frozen method",
                           note=note(judged), candidate="external", baseline="frozen",
                           unit=s["clusters"]["primary_interval"])


def sentence(judged: Mapping) -> str:
    """The contrast against the campaign's primary baseline on the first metric, in one sentence."""
    primary = judged["campaign"]["primary_contrast"]
    s = judged["statistics"]
    for c in judged["statistics"]["contrasts"]:
        if c["baseline"] == primary["baseline"]:
            # the p the family's correction gives (Holm over the external − frozen contrasts of this
            # metric), named as such, so the sentence agrees with the contrast table below it
            holm = c.get("p_value_holm")
            shown = p_phrase(holm, "Holm p") if holm is not None else p_phrase(c["p_value"])
            unit, permutations = s["clusters"]["primary_interval"], s["randomization"]["permutations"]
            word = verdicts.verdict(c, unit, permutations)
            least = verdicts.reachable_p(c, unit, permutations)
            limit = (f" (the smallest p the test can reach on this cohort is {least:.3g})"
                     if least > verdicts.ALPHA else "")
            why = verdicts.disagreement(c, unit, permutations)
            return (f"{c['candidate']} ({judged['label']}) − {c['baseline']}, {metric_label(c['metric'])}: "
                    f"{c['mean_delta']:+.3f} {interval_text(c['interval'])}, {shown}, "
                    f"W/L/T {c['wins']}/{c['losses']}/{c['ties']}. Verdict: {word}{limit}."
                    + (f" {why}" if why else ""))
    return ""


def figures(judged: Mapping) -> dict[str, str]:
    fig = contrasts.forest(judged["statistics"]["contrasts"], lambda c: f"{c['candidate']} − {c['baseline']}",
                           f"{judged['name']} ({judged['label']}) − each frozen method")
    return {"forest": plotting.svg(fig, "forest")}


CAPTION = "Each contrast external − frozen method: mean delta and 95% paired-bootstrap interval per metric."


def markdown(judged: Mapping) -> str:
    parts = [f"# {title(judged)}", "", f"> {sentence(judged)}", "",
             tables.markdown(input_table(judged)), tables.markdown(methods_table(judged)),
             tables.markdown(contrasts_table(judged)), "![forest](judged.figures/forest.svg)", "", f"*{CAPTION}*"]
    return "\n".join(parts).rstrip("\n") + "\n"


def page(judged: Mapping, svgs: Mapping[str, str]) -> str:
    body = [html.paragraph(sentence(judged)), tables.html_table(input_table(judged)),
            tables.html_table(methods_table(judged)), tables.html_table(contrasts_table(judged)),
            html.figure("forest", svgs["forest"], CAPTION)]
    return html.document(title(judged), body)
