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
from kgrag.ingest.markdown_inline import inline_text
from kgrag.ingest.models import ParsedTable

__all__ = ["pipe_tables"]

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
#: A delimiter row's cell: dashes, a colon at either end for the alignment.
_DELIMITER_CELL = re.compile(r"\s*:?-+:?\s*")
#: A cell's pipe: not one escaped as ``\|``.
_PIPE = re.compile(r"(?<!\\)\|")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _cells(line: str) -> list[str]:
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return [_cell(c) for c in _PIPE.split(inner)]


def _cell(text: str) -> str:
    """A cell's words: line breaks (``<br>``) as spaces, inline markup and backslash escapes
    off (:func:`~kgrag.ingest.markdown_inline.inline_text`: an escaped pipe is a pipe)."""
    return " ".join(inline_text(_BREAK.sub(" ", text)).split())


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
