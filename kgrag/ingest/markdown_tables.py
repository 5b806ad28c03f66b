"""Markdown pipe tables (GitHub's ``| a | b |`` under a ``|---|---|`` line) as tables.

A pipe table in a README or a documentation page is data: an operator and its restriction, an
option and its default. Read as text it was one chunk of many rows, and a question about one
row ("What restrictions does NNAPI have for the Conv operator?") found the chunk, not the row,
and the header row ``|Operator|Note|`` became the document's title. Each table found here is a
:class:`~kgrag.ingest.models.ParsedTable` (its rows stored as rows, as an HTML table's are,
caption: the heading it sits under) and is kept out of the text. Code blocks are left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

from kgrag.ingest.formats._common import CellBudget, make_table
from kgrag.ingest.models import ParsedTable

__all__ = ["pipe_tables", "protect_escapes", "restore_escapes"]

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
#: A delimiter row's cell: dashes, a colon at either end for the alignment.
_DELIMITER_CELL = re.compile(r"\s*:?-+:?\s*")
#: A cell's pipe: not one escaped as ``\|``.
_PIPE = re.compile(r"(?<!\\)\|")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_MARKERS = re.compile(r"(\*\*|__|`)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


#: A backslash escape (CommonMark: a backslash before ASCII punctuation makes it a literal
#: character: ``node\_exporter``, ``\*NIX``), or a code span, in which a backslash is a
#: backslash.
_ESCAPE_OR_CODE = re.compile(r"(`+).+?\1|\\([!-/:-@\[-`{-~])")
#: Where an escaped character waits while the markup around it is removed: the Unicode private
#: use area, which no text of a Markdown file is expected to hold.
_PROTECTED = 0xF0000


def protect_escapes(text: str) -> str:
    """``text`` with each backslash escape outside code spans replaced by a stand-in character,
    so that no markup rule reads it as markup (``\\*NIX`` is no emphasis); see
    :func:`restore_escapes`."""

    def protect(m: re.Match[str]) -> str:
        escaped = m.group(2)
        return m.group(0) if escaped is None else chr(_PROTECTED + ord(escaped))

    return _ESCAPE_OR_CODE.sub(protect, text)


def restore_escapes(text: str) -> str:
    """``text`` with the stand-ins of :func:`protect_escapes` back as the characters they
    stand for, without their backslashes: "node_exporter", "*NIX"."""
    return re.sub(
        f"[{chr(_PROTECTED + 0x21)}-{chr(_PROTECTED + 0x7E)}]",
        lambda m: chr(ord(m.group(0)) - _PROTECTED),
        text,
    )


def _cells(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return [_cell(c) for c in _PIPE.split(inner)]


def _cell(text: str) -> str:
    text = _LINK.sub(r"\1", _BREAK.sub(" ", protect_escapes(text)))
    return " ".join(restore_escapes(_MARKERS.sub("", text)).split())


def _is_delimiter(line: str, width: int) -> bool:
    if "-" not in line or not line.strip():
        return False
    cells = _cells(line)
    return len(cells) == width and all(_DELIMITER_CELL.fullmatch(c or "-") for c in cells)


def _is_row(line: str) -> bool:
    return bool(line.strip()) and _PIPE.search(line) is not None


def pipe_tables(
    markdown: str, path: Path, *, first_index: int = 0
) -> tuple[str, tuple[ParsedTable, ...]]:
    """``markdown`` without its pipe tables, and those tables (numbered from ``first_index``)."""
    lines = markdown.split("\n")
    kept: list[str] = []
    tables: list[ParsedTable] = []
    budget = CellBudget(path)
    heading: str | None = None
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            m = _ATX_HEADING.match(line)
            if m:
                heading = m.group(1).strip() or heading
            elif _is_row(line) and i + 1 < len(lines):
                header = _cells(line)
                if len(header) > 1 and _is_delimiter(lines[i + 1], len(header)):
                    end = i + 2
                    while end < len(lines) and _is_row(lines[end]):
                        end += 1
                    rows = [header, *(_cells(r) for r in lines[i + 2 : end])]
                    budget.take(sum(len(r) for r in rows), "a Markdown table")
                    table = make_table(first_index + len(tables), rows, caption=heading)
                    if table is not None:
                        tables.append(table)
                        kept.append("")
                        i = end
                        continue
        kept.append(line)
        i += 1
    return "\n".join(kept), tuple(tables)
