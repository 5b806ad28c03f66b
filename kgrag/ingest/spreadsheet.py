"""CSV and XLSX files as tables: each CSV file and each worksheet is one :class:`ParsedTable`.

Bounds (each a named :class:`~kgrag.errors.IngestError`, never a silent cut): a workbook may
unpack to at most :data:`MAX_XLSX_UNPACKED_BYTES`; at most :data:`MAX_SCANNED_CELLS` cells are
read from a file (empty ones count: a sheet formatted down to row 1,048,576 is refused within
seconds, not read for minutes); at most :data:`MAX_CELL_CHARS` characters are kept per cell (the
rest is cut with an ellipsis, logged). Trailing empty rows and columns are dropped; empty rows
inside a table are kept as empty tuples so that row numbers stay those of the sheet (the header
is row 1 of a table that starts at the sheet's first row). A first row that is data, not a header
(:func:`is_header`: a CSV of hashes or numbers written without one), leaves the table without a
header: its cells are named by their column numbers and its rows numbered from 1.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from kgrag.errors import IngestError
from kgrag.ingest.models import ParsedTable

log = logging.getLogger(__name__)

SUFFIXES: frozenset[str] = frozenset({".csv", ".tsv", ".xlsx"})
#: Cells read from one file, empty ones included.
MAX_SCANNED_CELLS = 500_000
#: Uncompressed size of all members of an .xlsx (a zip): the guard against zip bombs.
MAX_XLSX_UNPACKED_BYTES = 128 * 1024 * 1024
#: Characters kept of one cell.
MAX_CELL_CHARS = 1_000
#: Columns kept per row (a wider row is refused: it is not a table a person reads).
MAX_COLUMNS = 512

__all__ = ["SUFFIXES", "Preamble", "is_header", "parse_csv", "parse_xlsx", "split_preamble"]


def _fail(path: Path, reason: str) -> IngestError:
    return IngestError(str(path), reason)


class _Budget:
    """Counts scanned cells over a whole file and refuses past :data:`MAX_SCANNED_CELLS`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells = 0

    def take(self, n: int, at: str) -> None:
        self.cells += n
        if self.cells > MAX_SCANNED_CELLS:
            raise _fail(
                self.path,
                f"too many cells: more than {MAX_SCANNED_CELLS:,} (empty ones included) read by "
                f"{at}; a sheet formatted far past its data counts every formatted cell. "
                "Delete the unused rows and columns or split the file",
            )


def cell_text(value: object) -> str:
    """A cell as one line of text: None is empty, 3.0 is "3", runs of whitespace are one space."""
    if value is None:
        return ""
    text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    text = " ".join(text.split())
    if len(text) > MAX_CELL_CHARS:
        return text[: MAX_CELL_CHARS - 1] + "…"
    return text


def _trim(rows: Iterable[list[str]]) -> list[tuple[str, ...]]:
    """Drop trailing empty rows, then columns empty in every remaining row."""
    kept = list(rows)
    while kept and not any(kept[-1]):
        kept.pop()
    width = 0
    for row in kept:
        for i in range(len(row) - 1, -1, -1):
            if row[i]:
                width = max(width, i + 1)
                break
    out: list[tuple[str, ...]] = []
    for row in kept:
        if not any(row):
            out.append(())
        else:
            cells = row[:width]
            out.append(tuple(cells) + ("",) * (width - len(cells)))
    return out


def _table(
    index: int, rows: list[tuple[str, ...]], sheet: str | None, header: tuple[str, ...] = ()
) -> ParsedTable | None:
    # the header is the first non-empty row, unless that row is data (:func:`is_header`): then
    # the table has no header and its rows are numbered from 1; or the one a CSV's comment
    # lines end with (:func:`split_preamble`)
    start = 0
    while start < len(rows) and not rows[start]:
        start += 1
    if start == len(rows):
        return None
    if header:
        return ParsedTable(index=index, sheet=sheet, header=header, rows=tuple(rows[start:]))
    if not is_header(rows[start], rows[start + 1 :]):
        return ParsedTable(index=index, sheet=sheet, header=(), rows=tuple(rows[start:]))
    header = rows[start]
    body = tuple(rows[start + 1 :])
    return ParsedTable(index=index, sheet=sheet, header=header, rows=body)


#: Body rows :func:`is_header` compares the first row with.
HEADER_SAMPLE_ROWS = 200
#: A first-row cell found this many times in its column's sampled body is one of its values.
REPEATED_VALUE = 2
#: A column whose cells all have this many characters or more, and the same number, holds codes
#: (hashes, identifiers, dates): a label of exactly that length and make-up is data.
MIN_CODE_CHARS = 8
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_PLAIN_INT = re.compile(r"^\d+$")


def _classes(cell: str) -> frozenset[str]:
    """The kinds of characters of ``cell``: digits, lower and upper case letters, the others."""
    return frozenset(
        "9" if c.isdigit() else "a" if c.islower() else "A" if c.isupper() else c for c in cell
    )


def is_header(first: tuple[str, ...], body: Sequence[tuple[str, ...]]) -> bool:
    """Is ``first``, a table's first non-empty row, its header, or already data (a file written
    without one: a list of hashes, a matrix of numbers)? Each column whose body cells are alike
    votes: all numbers, or all codes of one length (:data:`MIN_CODE_CHARS` or more, no space).
    A label where the body has numbers, or of another length than its codes, votes header; a
    number with a fraction, sign or exponent where the body has numbers, or a code of the same
    length and make-up, votes data (a plain integer votes nothing: a year heads a column of
    figures). A label that is one of the column's repeated values ("NO" over a column of "YES"
    and "NO": PostgreSQL's ``sql_features.txt``) votes data: a header names its column, it is
    not one of its values. Data only when some column votes data and none votes header: a
    table of words alone keeps its first row as header, as before."""
    sample = [row for row in body[:HEADER_SAMPLE_ROWS] if row]
    header_votes = data_votes = 0
    for col, label in enumerate(first):
        cells = [row[col] for row in sample if col < len(row) and row[col]]
        if not label or len(cells) < 2:
            continue
        if sum(c == label for c in cells) >= REPEATED_VALUE:
            data_votes += 1
            continue
        if all(_NUMBER.match(c) for c in cells):
            if not _NUMBER.match(label):
                header_votes += 1
            elif not _PLAIN_INT.match(label):
                data_votes += 1
            continue
        length = len(cells[0])
        if length < MIN_CODE_CHARS or any(len(c) != length or " " in c for c in cells):
            continue
        made_of = frozenset().union(*(_classes(c) for c in cells))
        if len(label) == length and " " not in label and _classes(label) <= made_of:
            data_votes += 1
        else:
            header_votes += 1
    return not (data_votes and not header_votes)


# ----------------------------------------------------------------------------------------- csv


class Preamble(NamedTuple):
    """A CSV's comment lines (without their ``#``), the last of those it starts with (which may
    name its columns), and the rest of its text."""

    comments: list[str]
    last: str
    rest: str


def split_preamble(text: str) -> Preamble:
    """The comment lines of a CSV or TSV that starts with some (``#`` first, as the tz
    database's ``zone1970.tab`` and many data files write their description and column names).
    A file that starts with comments marks them so: its later ``#`` lines are comments too. A
    file of comments only has none."""
    lines = text.splitlines(keepends=True)
    n = 0
    while n < len(lines) and (not lines[n].strip() or lines[n].lstrip().startswith("#")):
        n += 1
    opening = [_uncomment(line) for line in lines[:n] if line.strip()]
    if n == len(lines) or not opening:
        return Preamble([], "", text)
    rest = [line for line in lines[n:] if not line.lstrip().startswith("#")]
    marked = [_uncomment(line) for line in lines if line.lstrip().startswith("#")]
    return Preamble(marked, opening[-1], "".join(rest))


def _uncomment(line: str) -> str:
    return line.strip().lstrip("#").strip()


def _preamble_header(
    last: str, rows: list[tuple[str, ...]], dialect: type[csv.Dialect] | csv.Dialect
) -> tuple[str, ...]:
    """The column names the opening comment lines end with ("#codes<TAB>coordinates<TAB>TZ<TAB>
    comments" over rows of four cells), when the last one splits into as many cells as the
    first row, two or more of them named; else none."""
    first = next((r for r in rows if r), None)
    if not last or first is None:
        return ()
    cells = tuple(cell_text(c) for c in next(csv.reader([last], dialect), []))
    if len(cells) != len(first) or sum(1 for c in cells if c) < 2:
        return ()
    return cells


def parse_csv(path: Path, text: str) -> list[ParsedTable]:
    """The CSV's rows as one table (dialect sniffed from the first 64 KB; comma if unsure).
    Comment lines first (:func:`split_preamble`) are no rows: the last one names the columns
    when it fits them."""
    preamble = split_preamble(text)
    text = preamble.rest
    sample = text[:65536]
    dialect: type[csv.Dialect] | csv.Dialect = csv.excel_tab
    if path.suffix.lower() != ".tsv":  # a .tsv says how it is separated
        try:
            dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel
    budget = _Budget(path)
    rows: list[list[str]] = []
    try:
        for n, record in enumerate(csv.reader(io.StringIO(text), dialect), start=1):
            if len(record) > MAX_COLUMNS:
                raise _fail(path, f"line {n} has {len(record)} fields; at most {MAX_COLUMNS}")
            budget.take(max(1, len(record)), f"line {n}")
            rows.append([cell_text(v) for v in record])
    except csv.Error as e:
        raise _fail(path, f"not valid CSV: {e}") from e
    trimmed = _trim(rows)
    table = _table(0, trimmed, None, _preamble_header(preamble.last, trimmed, dialect))
    if table is None:
        raise _fail(path, "CSV has no cells with content")
    return [table]


# ---------------------------------------------------------------------------------------- xlsx


def parse_xlsx(path: Path, data: bytes) -> list[ParsedTable]:
    """Every worksheet with content as a table named by its sheet (openpyxl, read-only)."""
    _check_zip(path, data)
    import openpyxl

    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except IngestError:
        raise
    except Exception as e:  # openpyxl raises assorted errors (KeyError, zip, XML) on damage
        raise _fail(path, f"corrupt or unreadable XLSX: {type(e).__name__}: {e}") from e
    budget = _Budget(path)
    tables: list[ParsedTable] = []
    try:
        for sheet in book.worksheets:
            name = str(sheet.title)
            # read every row the sheet holds, not only those its (writer-declared, often
            # wrong) dimension names
            if hasattr(sheet, "reset_dimensions"):
                sheet.reset_dimensions()
            try:
                rows = _trim(_sheet_rows(sheet.iter_rows(values_only=True), budget, name))
            except IngestError:
                raise
            except Exception as e:
                raise _fail(
                    path, f"corrupt or unreadable XLSX: sheet {name!r}: {type(e).__name__}: {e}"
                ) from e
            table = _table(len(tables), rows, name)
            if table is not None:
                tables.append(table)
    finally:
        book.close()
    if not tables:
        raise _fail(path, "workbook has no sheet with content")
    return tables


def _sheet_rows(
    rows: Iterable[tuple[object, ...]], budget: _Budget, sheet: str
) -> Iterator[list[str]]:
    for n, values in enumerate(rows, start=1):
        budget.take(max(1, len(values)), f"sheet {sheet!r} row {n}")
        cells = [cell_text(v) for v in values[:MAX_COLUMNS]]
        if len(values) > MAX_COLUMNS and any(cell_text(v) for v in values[MAX_COLUMNS:]):
            raise _fail(
                budget.path, f"sheet {sheet!r} row {n} has content past column {MAX_COLUMNS}"
            )
        yield cells


def _check_zip(path: Path, data: bytes) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            unpacked = sum(i.file_size for i in z.infolist())
    except zipfile.BadZipFile as e:
        raise _fail(path, f"corrupt or unreadable XLSX: not a zip archive ({e})") from e
    if unpacked > MAX_XLSX_UNPACKED_BYTES:
        raise _fail(
            path,
            f"XLSX unpacks to {unpacked:,} bytes, over the {MAX_XLSX_UNPACKED_BYTES:,} byte "
            "limit (a zip bomb, or a workbook to split)",
        )
