"""pooled.html: the pooled result as one self-contained page, in the public report's style: the
sentence, the note, then per contrast (the primary, then each secondary) its heading, a forest
figure of each dataset's delta and the pooled delta with their intervals, and its table."""

from __future__ import annotations

import html as markup
from collections.abc import Mapping

from evaluator.views import html, plotting
from evaluator.views.contrast_text import POOLED_HEADER, pooled_note, pooled_rows, pooled_sentence, secondary_views
from evaluator.views.tables import whole_words

CAPTION = ("Each dataset's mean paired delta (candidate − baseline) and its 95% interval, then the pooled one "
           "(filled, red); the dashed line is no difference.")


def forest(view: Mapping, name: str) -> str:
    """One line per dataset and one for the pool: mean delta and interval at the suite's unit."""
    rows = [(d["dataset"], d["mean_delta"], d["interval"] if view["pooling"]["unit"] == "query"
             else d["cluster"]["interval"], False) for d in view["per_dataset"]]
    rows.append(("pooled", view["pooled"]["mean_delta"], view["pooled"]["interval"], True))
    c = view["primary_contrast"]

    def build(fig):
        ax = fig.subplots()
        for y, (_, delta, (low, high), pooled) in enumerate(rows):
            colour = plotting.CONFIRMATORY if pooled else plotting.EXPLORATORY
            ax.plot([low, high], [y, y], color=colour, linewidth=1.6)
            ax.plot([delta], [y], marker="D" if pooled else "o", markersize=6, color=colour,
                    markerfacecolor=colour if pooled else "white", linestyle="none")
        ax.axvline(0.0, color="#888888", linewidth=0.8, linestyle="--")
        ax.set_yticks(range(len(rows)), [label for label, *_ in rows])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel(f"{c['candidate']} − {c['baseline']}, {c['metric']} (95% interval)")

    left = plotting.label_width([label for label, *_ in rows])
    return plotting.svg(plotting.figure(build, left + 6.0, 0.32 * len(rows) + 1.2, left=left, top=0.2), name)


def _table(view: Mapping) -> str:
    head = "".join(f'<th scope="col">{whole_words(h)}</th>' for h in POOLED_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{whole_words(cell)}</td>" for cell in row) + "</tr>"
                   for row in pooled_rows(view))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _section(view: Mapping, title: str, name: str) -> str:
    return (f'<section id="{name}"><h2>{markup.escape(title)}</h2>'
            f"<p><strong>{markup.escape(pooled_sentence(view))}</strong></p>"
            f"{html.figure(name, forest(view, name), CAPTION)}{_table(view)}</section>")


def pooled_html(pooled: Mapping) -> str:
    c = pooled["primary_contrast"]
    body = [html.paragraph(pooled["title"]), html.paragraph(pooled_note(pooled)),
            _section(pooled, f"Primary: {c['candidate']} − {c['baseline']}", "primary")]
    for i, part in enumerate(secondary_views(pooled)):
        s = part["primary_contrast"]
        body.append(_section(part, f"Secondary: {s['candidate']} − {s['baseline']}", f"secondary-{i}"))
    reports = "".join(f"<li>{markup.escape(name)}: <code>{markup.escape(r['path'])}</code> (protocol "
                      f"{markup.escape(r['protocol_version'])})</li>" for name, r in pooled["reports"].items())
    body.append(f'<section id="reports"><h2>Reports (audited)</h2><ul>{reports}</ul></section>')
    return html.document(f"{pooled['suite_version']}: pooled primary contrast", body)
