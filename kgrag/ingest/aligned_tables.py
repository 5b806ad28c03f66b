"""Tables a plain text file lays out with spaces: columns at the same places on consecutive lines.

PostgreSQL's ``errcodes.txt`` lists its codes as ``23505    E    ERRCODE_UNIQUE_VIOLATION
unique_violation`` under a ``Section: Class 23 - Integrity Constraint Violation`` line; read as
prose, the rows of a class were one chunk of codes, and "What is the error code for a unique
violation?" found the file's comment, not the row. A block found here is a
:class:`~kgrag.ingest.models.ParsedTable` (its rows stored as rows, as a CSV file's are; caption:
the line it sits under) and is kept out of the text.

A line's cells are its runs of words separated by two or more spaces, a tab (tabs expanded to
columns of 8) or a bar between spaces (psql's ``uid   | name``); two spaces after a sentence's
full stop separate no cells. A run is consecutive lines whose cells start where the first
line's do (a line may leave cells empty). Runs of one layout at most :data:`MAX_GAP` lines apart
are one group (a table cut by sub-headings: errcodes.txt's classes, each run a table captioned
by its own line), kept when it has :data:`MIN_ROWS` rows of three cells or more, or
:data:`MIN_PAIR_ROWS` of two (two cells are also a key and a wrapped sentence, so more lines
must agree), two of them consecutive. A line of only dashes or equals signs (and spaces) under
the first line makes that line the header; otherwise the first line is the header when it holds
words over a column of numbers (:func:`_labels`), else a comment line that names as many columns
is (:func:`_commented_headers`), else the table has none (its columns are numbered). A line
whose cells are mostly without a letter or digit (ASCII art, rules) is no row.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from kgrag.ingest.formats._common import CellBudget, title_text
from kgrag.ingest.models import ParsedTable
from kgrag.ingest.spreadsheet import MAX_COLUMNS, cell_text

__all__ = ["MIN_PAIR_ROWS", "MIN_ROWS", "aligned_tables"]

#: Consecutive lines of three or more cells at the same starts that make a block.
MIN_ROWS = 2
#: Consecutive lines of two cells at the same starts that make a block.
MIN_PAIR_ROWS = 3
#: A caption is looked for this many lines above a block (blank and comment lines skipped).
CAPTION_REACH = 4
#: Runs of one layout at most this many lines apart are one table's (blank lines, a sub-heading).
MAX_GAP = 4
MAX_CAPTION_CHARS = 120

#: A cell: words one space apart, or two after a sentence's end (prose typed with two spaces
#: after a full stop is one cell, not two).
_CELL = re.compile(r"\S+(?:(?: |(?<=[a-z)][.!?])  (?=[A-Z]))\S+)*")
_RULE = re.compile(r"^[ \t]*[-=+|]{3,}(?:[ \t]+[-=+|]{3,})*[ \t]*$")
_DIFFSTAT = re.compile(r"\S\s+\|\s+(?:\d+ ?[-+]*|Bin .*)\s*$")
#: A bar between spaces (or at a line's end) separates columns, as psql prints them.
_BAR = re.compile(r"(?:^|(?<=\s))\|(?=\s|$)")
#: A cell of only bars or colons separates two others.
_SEPARATOR = re.compile(r"[|:]+")
#: A line of code: ending as a statement or block does, or in a comment after two spaces.
_CODE_LINE = re.compile(r"[;{},\\][ \t]*$|\S(?: {2,}|\t)[ \t]*(?:#|/\*|//|%).*$")
_COMMENT = re.compile(r"^[ \t]*(?:#|//|;|--[ \t])")
_NUMBER = re.compile(r"^[-+]?[\d.,]*\d[%]?$")
#: A column's name has a word of two letters or more and is no hexadecimal number ("00a7").
_NAME = re.compile(r"[^\W\d_]{2}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_ALNUM = re.compile(r"[^\W_]")
#: A caption line's label ("Section: Class 23 - ..."): the row's context is what follows it
#: (a context holding ": " would read back as a cell: :func:`kgrag.ingest.table_rows.read_row`).
_LABEL = re.compile(r"^[A-Za-z][\w-]*:\s+(?=\S)")

_Layout = tuple[int, ...]


def _cells(line: str) -> tuple[_Layout, tuple[str, ...]]:
    """The starts of ``line``'s cells (tabs expanded) and their texts; none for a line of a
    diff's statistics ("src/fcint.h  |  6 ++++++": a change log's, not a table)."""
    if _DIFFSTAT.search(line):
        return (), ()
    spaced = _BAR.sub(" ", line.expandtabs(8))
    found = [m for m in _CELL.finditer(spaced) if not _SEPARATOR.fullmatch(m.group())]
    return tuple(m.start() for m in found), tuple(m.group() for m in found)


def _is_row(cells: tuple[str, ...]) -> bool:
    """Two cells or more, most of them holding a letter or digit, not a list item: a bullet
    mark, then words (mhash's README lists its features as "   o  Reentrancy support", which
    were read as a table whose first column was "o")."""
    if len(cells) >= 2 and cells[0] in _BULLETS and cells[1][:1].isalpha():
        return False
    return len(cells) >= 2 and 2 * sum(bool(_ALNUM.search(c)) for c in cells) > len(cells)


#: Marks that open a list item in plain text.
_BULLETS = frozenset({"o", "*", "+", "•", "·", "‣", "◦"})


def aligned_tables(
    text: str, path: Path, *, first_index: int = 0
) -> tuple[str, tuple[ParsedTable, ...]]:
    """``text`` without its aligned tables (their lines left blank), and those tables (numbered
    from ``first_index``)."""
    lines = text.split("\n")
    parsed = [_cells(line) if not _COMMENT.match(line) else ((), ()) for line in lines]
    rows = [i for i, (_, cells) in enumerate(parsed) if _is_row(cells)]
    if len(rows) < MIN_ROWS:
        return text, ()
    blocks = _blocks(lines, parsed)
    if not blocks:
        return text, ()
    budget = CellBudget(path)
    kept = list(lines)
    tables: list[ParsedTable] = []
    named = _commented_headers(lines)
    for start, end, header_rule, layout in blocks:
        body = [_placed(parsed[i], layout) for i in range(start, end) if i != header_rule]
        header = body.pop(0) if header_rule is not None or _labels(body) else None
        if header is None:
            header = named.get(len(layout))
        budget.take(sum(len(r) for r in body), "an aligned table")
        tables.append(_table(first_index + len(tables), header, body, _caption(lines, start)))
        for i in range(start, end):
            kept[i] = ""
    return "\n".join(kept), tuple(tables)


def _commented_headers(lines: list[str]) -> dict[int, tuple[str, ...]]:
    """Column names a comment gives, by their number: a comment line whose words split into
    three or more cells, each a name (one or two words), the only such line of its width in
    the file (errcodes.txt's "#      sqlstate    E/W/S    errcode_macro_name    spec_name"
    under "The format of this file is one error code per line, with the following
    whitespace-separated fields:"), as a CSV file's last comment line can name its columns."""
    found: dict[int, list[tuple[str, ...]]] = {}
    for line in lines:
        marker = _COMMENT.match(line)
        if marker is None:
            continue
        _, cells = _cells(" " * marker.end() + line[marker.end() :])
        if len(cells) >= 3 and all(len(c.split()) <= 2 and _ALNUM.search(c) for c in cells):
            found.setdefault(len(cells), []).append(cells)
    return {width: names[0] for width, names in found.items() if len(names) == 1}


def _labels(body: list[tuple[str, ...]]) -> bool:
    """Whether the first row names the columns without a rule under it: words over a column
    of numbers (a table of words alone cannot tell its header from its first row)."""
    first, rest = body[0], [r for r in body[1:] if any(r)]
    if len(rest) < 2:
        return False
    for col, label in enumerate(first):
        cells = [r[col] for r in rest if col < len(r) and r[col]]
        if (
            _NAME.search(label)
            and not _HEX.fullmatch(label)
            and len(cells) == len(rest)
            and all(_NUMBER.match(c) for c in cells)
        ):
            return True
    return False


def _table(
    index: int, header: tuple[str, ...] | None, body: list[tuple[str, ...]], caption: str | None
) -> ParsedTable:
    width = min(max(len(r) for r in [header or (), *body]), MAX_COLUMNS)

    def cells(row: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(cell_text(c) for c in row[:width]) + ("",) * (width - len(row[:width]))

    return ParsedTable(
        index=index,
        caption=title_text(caption),
        header=cells(header) if header else (),
        rows=tuple(cells(r) for r in body),
    )


def _fits(line: tuple[_Layout, tuple[str, ...]], layout: _Layout) -> bool:
    """Whether a line is a row of a block laid out at ``layout``: its cells start where the
    block's do, from the first (a row may leave cells empty: a code without a name)."""
    starts, cells = line
    return _is_row(cells) and starts[0] == layout[0] and set(starts) <= set(layout)


def _placed(line: tuple[_Layout, tuple[str, ...]], layout: _Layout) -> tuple[str, ...]:
    """A row's cells in the block's columns, empty where it has none."""
    at = dict(zip(*line, strict=True))
    return tuple(at.get(start, "") for start in layout)


class _Block(NamedTuple):
    start: int
    end: int
    """The line after its last."""
    rule: int | None
    """The line of its header's rule, if any."""
    layout: _Layout


def _runs(lines: list[str], parsed: list[tuple[_Layout, tuple[str, ...]]]) -> list[_Block]:
    """Runs of consecutive lines laid out as their first (a rule under the first allowed)."""
    runs: list[_Block] = []
    i = 0
    n = len(lines)
    while i < n:
        layout, cells = parsed[i]
        if not _is_row(cells):
            i += 1
            continue
        end = i + 1
        rule = None
        if end < n and _RULE.match(lines[end]) and end + 1 < n and _fits(parsed[end + 1], layout):
            rule = end
            end += 1
        while end < n and _fits(parsed[end], layout):
            end += 1
        runs.append(_Block(i, end, rule, layout))
        i = end
    return runs


def _blocks(lines: list[str], parsed: list[tuple[_Layout, tuple[str, ...]]]) -> list[_Block]:
    """The tables' blocks: runs of one layout at most :data:`MAX_GAP` lines apart (a table cut
    by sub-headings: errcodes.txt's classes) grouped, each group kept when it has enough rows
    (:data:`MIN_ROWS`, :data:`MIN_PAIR_ROWS`) and two of them consecutive."""
    groups: list[list[_Block]] = []
    for run in _runs(lines, parsed):
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and run.start - last.end <= MAX_GAP
            and _fits(parsed[run.start], groups[-1][0].layout)
        ):
            groups[-1].append(run._replace(layout=groups[-1][0].layout))
        else:
            groups.append([run])
    out: list[_Block] = []
    for group in groups:
        sizes = [r.end - r.start - (r.rule is not None) for r in group]
        needed = MIN_ROWS if len(group[0].layout) >= 3 else MIN_PAIR_ROWS
        if sum(sizes) >= needed and max(sizes) >= 2 and not _is_code(lines, group):
            out += group
    return out


def _is_code(lines: list[str], group: list[_Block]) -> bool:
    """Whether most of a group's lines are code, not rows: ending as a statement or a block
    does (``;``, ``{``, ``,``, a backslash) or in a comment (``/* target file */``, ``# GNU
    sed``, ``% lower-case str``), as examples in manuals and configuration files are
    aligned."""
    rows = [lines[i] for b in group for i in range(b.start, b.end) if i != b.rule]
    return 2 * sum(bool(_CODE_LINE.search(r)) for r in rows) > len(rows)


def _caption(lines: list[str], start: int) -> str | None:
    """The line a block sits under: the nearest non-blank line above it that is not a comment,
    within :data:`CAPTION_REACH` lines, short, without its label ("Section: ")."""
    for i in range(start - 1, max(start - 1 - CAPTION_REACH, -1), -1):
        line = lines[i].strip()
        if not line or _COMMENT.match(lines[i]) or _RULE.match(line):
            continue
        if len(line) > MAX_CAPTION_CHARS:
            return None
        starts, cells = _cells(lines[i])
        if _is_row(cells):
            # a row less indented than the block is its parent (pci.ids' vendor over its
            # devices); another row is a table's, not a caption
            if starts[0] < _cells(lines[start])[0][0]:
                return " ".join(cells)
            return None
        return _LABEL.sub("", line).rstrip(":").strip() or None
    return None
