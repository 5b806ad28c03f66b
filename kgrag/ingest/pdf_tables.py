"""Tables on PDF pages (pdfplumber's ruled-line detection), each a :class:`ParsedTable` with its
page. A table the detector cannot read costs the document its tables, never its text: a failure
here is logged and the PDF is ingested as text."""

from __future__ import annotations

import io
import logging
import re
import warnings
from pathlib import Path

from kgrag.core import Frozen
from kgrag.ingest.models import ParsedTable
from kgrag.ingest.spreadsheet import MAX_COLUMNS, cell_text

log = logging.getLogger(__name__)

#: Pages searched for tables (table detection costs ~0.1 s a page; text is read from every page).
MAX_TABLE_PAGES = 300
#: Cells kept from one PDF's tables.
MAX_PDF_TABLE_CELLS = 100_000

#: Path operators (``re`` rectangle, ``l`` line) a page's content must draw at least this many
#: of to be searched for ruled tables: text-only pages are skipped (table detection costs ~50 ms
#: a page of text, about 20 times what reading its text costs).
MIN_PATH_OPS = 4
_PATH_OP = re.compile(rb"\s(?:re|l)\s")

#: Points above a table searched for its caption.
CAPTION_GAP = 40.0

__all__ = ["MAX_TABLE_PAGES", "PdfTables", "pdf_tables"]


class PdfTables(Frozen):
    """The tables found, and the text of each page that has one, without the tables' cells (so
    a table is read as rows, not also as a stream of cells in the page's text)."""

    # Mutable defaults are per instance (pydantic copies them); ruff's RUF012 sees that only for
    # direct BaseModel subclasses, hence the noqa on each.

    tables: tuple[ParsedTable, ...] = ()
    page_texts: dict[int, str] = {}  # noqa: RUF012


def pdf_tables(path: Path, data: bytes) -> PdfTables:
    """The ruled tables of the PDF's first :data:`MAX_TABLE_PAGES` pages, in page order. A table
    needs a header row and at least one data row with content; its caption is the line of text
    just above it (within :data:`CAPTION_GAP` points)."""
    try:
        import pdfplumber
    except ImportError:  # pragma: no cover - a core dependency
        log.warning("%s: pdfplumber is not installed; PDF tables are read as text only", path)
        return PdfTables()
    tables: list[ParsedTable] = []
    texts: dict[int, str] = {}
    cells = 0
    drawn = _drawn_pages(path, data)
    if not drawn:
        return PdfTables()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pdfplumber.open(io.BytesIO(data)) as pdf:
                for number, page in enumerate(pdf.pages[:MAX_TABLE_PAGES], start=1):
                    if number not in drawn:
                        continue
                    outside = page
                    for found in page.find_tables():
                        rows = [
                            tuple(cell_text(v) for v in row[:MAX_COLUMNS])
                            for row in found.extract()
                            if row and any(v not in (None, "") for v in row)
                        ]
                        if len(rows) < 2:
                            continue
                        cells += sum(len(r) for r in rows)
                        if cells > MAX_PDF_TABLE_CELLS:
                            log.warning(
                                "%s: over %d table cells; tables from page %d on are read as "
                                "text only",
                                path,
                                MAX_PDF_TABLE_CELLS,
                                number,
                            )
                            return PdfTables(tables=tuple(tables), page_texts=texts)
                        x0, top, x1, bottom = found.bbox
                        above = page.crop((0, max(0.0, top - CAPTION_GAP), page.width, top))
                        lines = (above.extract_text() or "").strip().splitlines()
                        tables.append(
                            ParsedTable(
                                index=len(tables),
                                page=number,
                                caption=cell_text(lines[-1]) or None if lines else None,
                                header=rows[0],
                                rows=tuple(rows[1:]),
                            )
                        )
                        outside = outside.outside_bbox((x0, top, x1, bottom))
                    if outside is not page:
                        texts[number] = outside.extract_text() or ""
                    page.close()  # pdfplumber caches each page's objects until closed
    except Exception as e:  # pdfminer raises assorted errors on damaged files
        log.warning(
            "%s: tables could not be read (%s: %s); the PDF is ingested as text only",
            path,
            type(e).__name__,
            e,
        )
        return PdfTables()
    return PdfTables(tables=tuple(tables), page_texts=texts)


def _drawn_pages(path: Path, data: bytes) -> set[int]:
    """1-based numbers of the pages (of the first :data:`MAX_TABLE_PAGES`) whose content stream
    draws at least :data:`MIN_PATH_OPS` rectangles or lines (pypdf, no layout analysis)."""
    import pypdf

    out: set[int] = set()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                return out
            for number, page in enumerate(reader.pages[:MAX_TABLE_PAGES], start=1):
                contents = page.get_contents()
                raw = contents.get_data() if contents is not None else b""
                if len(_PATH_OP.findall(raw)) >= MIN_PATH_OPS:
                    out.add(number)
    except Exception as e:  # the text parser reports a damaged PDF; tables are optional
        log.warning("%s: cannot look for tables (%s: %s)", path, type(e).__name__, e)
    return out
