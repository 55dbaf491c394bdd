"""One self-contained HTML page: inline CSS and inline SVG, no script, no external reference.

Nothing in the page is fetched (no link, image source, font or stylesheet URL), and nothing needs
JavaScript: the tables are HTML tables and the figures are SVG elements, so the file reads the same
offline, in a browser with scripts off, or saved as an attachment. No date is written: the same
report gives the same bytes.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

STYLE = """
body { font-family: 'DejaVu Sans', Verdana, sans-serif; margin: 2em auto; max-width: 82em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.8em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; overflow-wrap: normal; word-break: normal; hyphens: manual; }
thead th { background: #f0f0f0; } tbody th { text-align: left; font-weight: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } .nw { white-space: nowrap; }
section, figure { overflow-x: auto; } figure { margin: 1em 0 2em; } figure svg { max-width: 100%; height: auto; }
@media (max-width: 1000px) { figure svg { max-width: none; } }
figcaption { font-size: 0.85em; color: #444; max-width: 60em; }
p.note { font-size: 0.85em; color: #444; }
p.answer { font-size: 1.05em; border: 2px solid #444; padding: 0.6em 0.9em; max-width: 60em; }
""".strip()


def figure(name: str, svg: str, caption: str) -> str:
    return (f'<figure id="fig-{html.escape(name)}">\n{svg}\n<figcaption>{html.escape(caption)}</figcaption>\n'
            f"</figure>")


def paragraph(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>'


def document(heading: str, body: Sequence[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(heading)}</title>",
        f"<style>\n{STYLE}\n</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(heading)}</h1>",
        *body,
        "</body>",
        "</html>",
    ]) + "\n"
