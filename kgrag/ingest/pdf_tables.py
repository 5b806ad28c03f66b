"""Tables on PDF pages (pdfplumber's ruled-line detection), each a :class:`ParsedTable` with its
page. A table the detector cannot read costs the document its tables, never its text: a failure
here is logged and the PDF is ingested as text."""

from __future__ import annotations

import io
import logging
import warnings
from pathlib import Path

from kgrag.ingest.models import ParsedTable
from kgrag.ingest.spreadsheet import MAX_COLUMNS, cell_text

log = logging.getLogger(__name__)

#: Pages searched for tables (table detection costs ~0.1 s a page; text is read from every page).
MAX_TABLE_PAGES = 300
#: Cells kept from one PDF's tables.
MAX_PDF_TABLE_CELLS = 100_000

__all__ = ["MAX_TABLE_PAGES", "pdf_tables"]


def pdf_tables(path: Path, data: bytes) -> list[ParsedTable]:
    """The ruled tables of the PDF's first :data:`MAX_TABLE_PAGES` pages, in page order. A table
    needs a header row and at least one data row with content."""
    try:
        import pdfplumber
    except ImportError:  # pragma: no cover - a core dependency
        log.warning("%s: pdfplumber is not installed; PDF tables are read as text only", path)
        return []
    tables: list[ParsedTable] = []
    cells = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pdfplumber.open(io.BytesIO(data)) as pdf:
                for number, page in enumerate(pdf.pages[:MAX_TABLE_PAGES], start=1):
                    for found in page.extract_tables():
                        rows = [
                            tuple(cell_text(v) for v in row[:MAX_COLUMNS])
                            for row in found
                            if row and any(v not in (None, "") for v in row)
                        ]
                        if len(rows) < 2:
                            continue
                        cells += sum(len(r) for r in rows)
                        if cells > MAX_PDF_TABLE_CELLS:
                            log.warning(
                                "%s: over %d table cells; tables after page %d are read as "
                                "text only",
                                path,
                                MAX_PDF_TABLE_CELLS,
                                number - 1,
                            )
                            return tables
                        tables.append(
                            ParsedTable(
                                index=len(tables),
                                page=number,
                                header=rows[0],
                                rows=tuple(rows[1:]),
                            )
                        )
    except Exception as e:  # pdfminer raises assorted errors on damaged files
        log.warning(
            "%s: tables could not be read (%s: %s); the PDF is ingested as text only",
            path,
            type(e).__name__,
            e,
        )
        return []
    return tables
