"""Tables as searchable rows: each data row of a :class:`ParsedTable` becomes a chunk whose text
names every non-empty cell by its column (``Metric: Revenue; 2022: 10.1; 2023: 12.4``), so a
question naming a row and a column finds the row by vector and full-text search alike, and the
chunk carries the table and row it came from for its citation.

Why rows are chunks (``(:Chunk)-[:ROW_OF]->(:Table)-[:PART_OF]->(:Document)``, the chunk also
``PART_OF`` its document) and not nodes of their own: every read of chunks already filters by the
document's ACL and status, is indexed (vector and full-text), feeds entity extraction, NEXT
expansion and citations; a row is one more kind of chunk, not a second search path to secure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgrag.core import Frozen
from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.models import ParsedPage, ParsedTable
from kgrag.ingest.records import TableRecord

__all__ = ["RowText", "read_row", "row_text", "table_chunks", "table_id", "table_records"]


def table_id(document_id: str, index: int) -> str:
    return f"{document_id}:t{index}"


def _column(header: tuple[str, ...], i: int) -> str:
    name = header[i] if i < len(header) else ""
    return name or f"column {i + 1}"


def row_cells(header: tuple[str, ...], row: tuple[str, ...]) -> list[str]:
    """``column: value`` for each non-empty cell of ``row``."""
    return [f"{_column(header, i)}: {value}" for i, value in enumerate(row) if value]


def row_text(header: tuple[str, ...], row: tuple[str, ...]) -> str:
    return CELL_MARK.join(row_cells(header, row))


#: Between a row chunk's table context and its cells, and between two cells (:func:`table_chunks`).
CONTEXT_MARK = " — "
CELL_MARK = "; "


class RowText(Frozen):
    """A row chunk's text read back: the table context it starts with (caption or sheet) and its
    cells as (column, value); a cell written without its column (a header-only table's row, or
    a piece of a long cell) has the column ``""``."""

    context: str = ""
    cells: tuple[tuple[str, str], ...] = ()


def read_row(text: str) -> RowText:
    """``text`` of a row chunk (:func:`table_chunks`) as its context and cells. A value holding
    ``"; "`` reads as two cells, the second without a column."""
    context = ""
    head, mark, rest = text.partition(CONTEXT_MARK)
    if mark and CELL_MARK not in head and ": " not in head:
        context, text = head.strip(), rest
    cells = []
    for cell in text.split(CELL_MARK):
        column, colon, value = cell.partition(": ")
        cells.append((column.strip(), value.strip()) if colon else ("", cell.strip()))
    return RowText(context=context, cells=tuple(c for c in cells if c[0] or c[1]))


def table_context(table: ParsedTable) -> str | None:
    """What a row's text starts with: the table's caption, else its sheet's name (so a question
    naming the table, "sales", "Finance", finds its rows); no closing punctuation, so the row
    stays one sentence."""
    context = (table.caption or table.sheet or "").strip().rstrip(".:;,")
    return context or None


def table_records(document_id: str, tables: tuple[ParsedTable, ...]) -> tuple[TableRecord, ...]:
    return tuple(
        TableRecord(
            id=table_id(document_id, t.index),
            number=t.index + 1,
            page=t.page,
            sheet=t.sheet,
            caption=t.caption,
            header=t.header,
            row_count=len(t.rows),
            column_count=max([len(t.header), *(len(r) for r in t.rows)]),
        )
        for t in tables
    )


def table_chunks(
    document_id: str,
    tables: tuple[ParsedTable, ...],
    start: int,
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> list[dict[str, Any]]:
    """Chunk fields (without embeddings) for every table row, positions from ``start``. A row
    too long for the text model is split into several chunks with the same coordinates, each
    holding whole cells (a single cell too long is split by :func:`chunk_text`)."""
    out: list[dict[str, Any]] = []
    for table in tables:
        tid = table_id(document_id, table.index)
        # a header-only table is searchable by its header (row 1)
        texts_of = [
            (n, row_cells(table.header, row))
            for n, row in enumerate(table.rows, start=2 if table.header else 1)
            if any(row)
        ]
        if not texts_of:
            texts_of = [(1, [c for c in table.header if c])]
        context = table_context(table)
        for number, cells in texts_of:
            pieces = _pack(
                cells, count_tokens, max_tokens - (count_tokens(context) + 2 if context else 0)
            )
            for k, text in enumerate(pieces):
                if context:
                    text = f"{context}{CONTEXT_MARK}{text}"
                out.append(
                    {
                        "id": f"{tid}r{number}" + (f"p{k}" if k else ""),
                        "text": text,
                        "position": start + len(out),
                        "page": table.page,
                        "table_id": tid,
                        "table": table.index + 1,
                        "sheet": table.sheet,
                        "table_row": number,
                    }
                )
    return out


def _pack(cells: list[str], count_tokens: Callable[[str], int], max_tokens: int) -> list[str]:
    pieces: list[str] = []
    current: list[str] = []
    for cell in cells:
        if count_tokens(cell) > max_tokens:
            if current:
                pieces.append(CELL_MARK.join(current))
                current = []
            pieces += [
                c.text for c in chunk_text([ParsedPage(text=cell)], count_tokens, max_tokens, 0)
            ]
            continue
        if current and count_tokens(CELL_MARK.join([*current, cell])) > max_tokens:
            pieces.append(CELL_MARK.join(current))
            current = []
        current.append(cell)
    if current:
        pieces.append(CELL_MARK.join(current))
    return [p for p in pieces if p.strip()]
