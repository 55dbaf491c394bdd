"""A block of a docs page that a command makes: held between two marker lines and written in place,
so the page's prose stays hand-written and the block stays the command's (the search-route table,
the page of every route)."""

from __future__ import annotations

from pathlib import Path

from ground.errors import RefusedInput


def block_in(text: str, begin: str, end: str) -> str | None:
    """The block a page holds, markers included (None without them)."""
    start, stop = text.find(begin), text.find(end)
    return None if start < 0 or stop < start else text[start:stop + len(end)]


def write_block(page: Path, begin: str, end: str, block: str, what: str) -> str:
    """Write `block` into `page` between its markers; returns what was done, for the user. Refuses
    (before writing) what `check_writable` refuses."""
    text = check_writable(page, begin, end, what)
    start, stop = text.find(begin), text.find(end)  # both there, in this order: checked
    updated = text[:start] + block + text[stop + len(end):]
    if updated == text:
        return f"{page}: the {what} is up to date"
    page.write_text(updated, encoding="utf-8")
    return f"wrote the {what} into {page}"


def check_writable(page: Path, begin: str, end: str, what: str) -> str:
    """The page's text; a missing page, or one without both markers, refused. Asked before the
    block is made too (making it may take a while)."""
    if not page.is_file():
        raise RefusedInput(f"--write {page}: no such page")
    text = page.read_text(encoding="utf-8")
    if block_in(text, begin, end) is None:
        raise RefusedInput(f"--write {page}: the page holds no markers for the {what} to write between "
                           f"({begin} ... {end})")
    return text
