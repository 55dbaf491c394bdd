"""Tables of a report, built once and rendered to Markdown and to HTML.

A table is data: rows of cells, and every number in a cell is a `Num` that names the path of the
value in the JSON document it was read from (`/aggregates/methods/lexical/ndcg@10`). The Markdown
and the HTML show the same rounded text; the HTML also carries the path and the exact value
(`<data value="0.70452..." data-path="/aggregates/...">0.705</data>`), so a reader, or a test, can
check every number shown against the public report.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from protocols import metrics as metrics_registry


@dataclass(frozen=True)
class Num:
    path: tuple  # keys and indices from the document root
    value: float | int | None
    fmt: str = ".3f"  # a format spec: ".3f", "+.3f", ".2f", "d", ",d"

    def text(self) -> str:
        return "n/a" if self.value is None else format(self.value, self.fmt)

    def pointer(self) -> str:
        """RFC 6901 JSON pointer of the value."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)


Part = str | Num


@dataclass(frozen=True)
class Cell:
    parts: tuple[Part, ...]

    def text(self) -> str:
        return "".join(p.text() if isinstance(p, Num) else p for p in self.parts)

    @property
    def numeric(self) -> bool:
        return any(isinstance(p, Num) for p in self.parts)


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""
    after: str = ""  # read after the rows: how to read them, once the reader has seen them

    def add(self, *cells: Cell | str) -> None:
        self.rows.append([c if isinstance(c, Cell) else label(c) for c in cells])


def label(text: str) -> Cell:
    return Cell((str(text),))


def p_format(p: float | None, alpha: float) -> str:
    """The format that shows a p on the side of `alpha` it lies (edition 2): three decimals, more
    where three would round it onto alpha (0.0504 is not "0.050" under "separated at p <= 0.05")."""
    for places in range(3, 10):
        if p is None or p == alpha or format(p, f".{places}f") != format(alpha, f".{places}f"):
            return f".{places}f"
    return ".9f"


def lookup(document: Mapping, path: Sequence):
    value = document
    for key in path:
        value = value[key]
    return value


def num(document: Mapping, *path, fmt: str = ".3f") -> Cell:
    """One number read from `document` at `path` (missing or null: shown as n/a, bound to nothing)."""
    try:
        value = lookup(document, path)
    except (KeyError, IndexError, TypeError):
        return label("n/a")
    if value is None:
        return label("n/a")
    return Cell((Num(tuple(path), value, fmt),))


def interval(document: Mapping, *path, fmt: str = "+.3f") -> Cell:
    """`[low, high]` of a two-element list at `path` (missing: n/a)."""
    try:
        pair = lookup(document, path)
    except (KeyError, IndexError, TypeError):
        return label("n/a")
    return Cell(("[", Num((*path, 0), pair[0], fmt), ", ", Num((*path, 1), pair[1], fmt), "]"))


def unbroken_interval(document: Mapping, *path, fmt: str = "+.3f") -> Cell:
    """`interval`, its two ends joined by a no-break space: a narrow column never splits it."""
    cell = interval(document, *path, fmt=fmt)
    return Cell(tuple(",\u00a0" if part == ", " else part for part in cell.parts))


def joined(*cells: Cell, sep: str = " / ") -> Cell:
    parts: list[Part] = []
    for i, cell in enumerate(cells):
        if i:
            parts.append(sep)
        parts.extend(cell.parts)
    return Cell(tuple(parts))


def metric_label(name: str) -> str:
    """`judged_recall@10` -> `judged R@10`: the label its declaration gives (protocols/metrics/)."""
    return metrics_registry.label(name)


# ---- rendering --------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(table: Table) -> str:
    lines = [f"## {table.title}", ""]
    if table.note:
        lines += [table.note, ""]
    lines.append("| " + " | ".join(_md_escape(c) for c in table.columns) + " |")
    lines.append("|" + "---|" * len(table.columns))
    for row in table.rows:
        lines.append("| " + " | ".join(_md_escape(c.text()) for c in row) + " |")
    if table.after:
        lines += ["", table.after]
    return "\n".join(lines) + "\n"


# a browser may break a word after a hyphen or a slash that follows a letter or digit (not a minus
# sign before a number): "graph-multihop-v1" over two lines reads as
# two words, so such a word is kept whole (class "nw", white-space: nowrap in html.py); spaces
# remain the only places a cell's text wraps
_BREAKABLE = re.compile(r"\S*\w[-/\u2010\u2013]\S*")


def whole_words(text: str) -> str:
    """`text` escaped for HTML, each word that holds a hyphen or a slash kept on one line."""
    out, at = [], 0
    for match in _BREAKABLE.finditer(text):
        out += [html.escape(text[at:match.start()]), f'<span class="nw">{html.escape(match.group())}</span>']
        at = match.end()
    out.append(html.escape(text[at:]))
    return "".join(out)


def _html_part(part: Part) -> str:
    if isinstance(part, Num):
        value = "" if part.value is None else repr(part.value)
        return (f'<data value="{html.escape(value)}" data-path="{html.escape(part.pointer())}">'
                f"{whole_words(part.text())}</data>")
    return whole_words(part)


def html_table(table: Table) -> str:
    out = [f'<section id="table-{html.escape(table.id)}">', f"<h2>{html.escape(table.title)}</h2>"]
    if table.note:
        out.append(f"<p>{html.escape(table.note)}</p>")
    out.append("<table>")
    out.append("<thead><tr>" + "".join(f'<th scope="col">{whole_words(c)}</th>' for c in table.columns) + "</tr></thead>")
    out.append("<tbody>")
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            body = "".join(_html_part(p) for p in cell.parts)
            if i == 0:
                cells.append(f'<th scope="row">{body}</th>')
            else:
                cells.append(f'<td class="{"num" if cell.numeric else "text"}">{body}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    if table.after:
        out.append(f"<p>{html.escape(table.after)}</p>")
    out.append("</section>")
    return "\n".join(out)
