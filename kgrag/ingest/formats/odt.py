"""OpenDocument text (.odt, LibreOffice Writer): headings, paragraphs, lists, tables, images.

``content.xml``'s text body is read in order: ``text:h`` is a heading line, ``text:list`` items are
``- `` lines indented by their nesting, ``table:table`` is a
:class:`~kgrag.ingest.models.ParsedTable` (caption: the heading it sits under) kept out of the
text (``number-columns-repeated``/``number-rows-repeated`` count as that many cells against the
cell bound, so a sheet-like table of a million empty cells is refused without being expanded),
and each ``draw:image`` is an embedded image with its frame's title or description as caption.
Sections, footnote bodies and tracked deletions: sections are read, notes and deletions are not.
An .odt has no pages: its text is one unpaged page. The title is ``meta.xml``'s ``dc:title``, else
the first heading. Bounds: :mod:`._zipped`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgrag.ingest.formats._common import (
    TextBuilder,
    capped_images,
    embedded_image,
    make_table,
    one_line,
    title_text,
)
from kgrag.ingest.formats._ooxml import DC
from kgrag.ingest.formats._zipped import Package
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedImage, ParsedPage, ParsedTable, SourceItem
from kgrag.ingest.spreadsheet import MAX_COLUMNS

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["ODT", "parse_odt"]

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
SVG = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
XLINK = "http://www.w3.org/1999/xlink"

_H, _P, _LIST = f"{{{TEXT}}}h", f"{{{TEXT}}}p", f"{{{TEXT}}}list"
_TABLE = f"{{{TABLE}}}table"
_CELL, _COVERED = f"{{{TABLE}}}table-cell", f"{{{TABLE}}}covered-table-cell"
_SKIP = frozenset(
    {f"{{{TEXT}}}{t}" for t in ("note", "tracked-changes", "sequence-decls", "table-of-content")}
    | {f"{{{OFFICE}}}annotation", f"{{{TEXT}}}soft-page-break"}
)
_CONTAINERS = frozenset(
    {f"{{{TEXT}}}{t}" for t in ("section", "list-item", "list-header", "index-body")}
)


def _inline(element: etree._Element) -> str:
    """A paragraph's text: spans and links read, ``text:s`` as spaces, tabs and line breaks kept,
    notes and frames (their text is read with the images) left out."""
    parts = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == f"{{{TEXT}}}s":
            count = child.get(f"{{{TEXT}}}c") or "1"
            parts.append(" " * min(int(count) if count.isdigit() else 1, 64))
        elif tag == f"{{{TEXT}}}tab":
            parts.append("\t")
        elif tag == f"{{{TEXT}}}line-break":
            parts.append("\n")
        elif tag not in _SKIP and tag != f"{{{DRAW}}}frame":
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _repeat(element: etree._Element, attribute: str) -> int:
    value = element.get(f"{{{TABLE}}}{attribute}") or "1"
    return int(value) if value.isdigit() and int(value) > 0 else 1


class _Reader:
    def __init__(self, package: Package) -> None:
        self.package = package
        self.out = TextBuilder(wrapped_lines=True)
        self.tables: list[ParsedTable] = []
        self.images: list[ParsedImage] = []
        self.heading: str | None = None

    def block(self, element: etree._Element, depth: int) -> None:
        for child in element:
            tag = child.tag
            if tag in _SKIP:
                continue
            self.frames(child)
            if tag == _H:
                text = _inline(child)
                level = child.get(f"{{{TEXT}}}outline-level") or "1"
                self.out.heading(text, int(level) if level.isdigit() else 1)
                self.heading = one_line(text) or self.heading
            elif tag == _P:
                if depth >= 0:
                    self.out.item(_inline(child), depth)
                else:
                    self.out.paragraph(_inline(child))
            elif tag == _LIST:
                self.block(child, depth + 1)
                if depth < 0:
                    self.out.end_list()
            elif tag == _TABLE:
                self.table(child)
            elif tag in _CONTAINERS:
                self.block(child, depth)

    def frames(self, element: etree._Element) -> None:
        if element.tag in (_TABLE, _LIST):
            return  # read where the table's cells or the list's items are
        # each image once, captioned by its own frame: a frame may hold a text box whose
        # paragraphs hold another frame (LibreOffice's captioned pictures)
        for image in element.iter(f"{{{DRAW}}}image"):
            frame = image.getparent()
            title = frame.find(f"{{{SVG}}}title") if frame is not None else None
            desc = frame.find(f"{{{SVG}}}desc") if frame is not None else None
            caption = (title.text if title is not None else None) or (
                desc.text if desc is not None else None
            )
            href = image.get(f"{{{XLINK}}}href") or ""
            if href.startswith("./"):
                href = href[2:]
            if href and self.package.has(href):
                data = self.package.read(href)
                found = embedded_image(self.package.path, data, caption=caption, name=href)
                if found is not None:
                    self.images.append(found)

    def table(self, element: etree._Element) -> None:
        rows: list[list[str]] = []
        for row in element.iter(f"{{{TABLE}}}table-row"):
            if row.getparent() is not element and row.getparent().getparent() is not element:
                continue  # a nested table's row
            cells: list[str] = []
            width = 0  # cells of the row, repeats included
            for cell in row:
                if cell.tag not in (_CELL, _COVERED):
                    continue
                repeat = _repeat(cell, "number-columns-repeated")
                width += repeat
                self.package.budget.take(repeat - 1, "a table")  # the element was counted
                self.frames(cell)
                text = " ".join(
                    one_line(_inline(p)) for p in cell.iter(_P, _H) if _inline(p).strip()
                )
                cells.extend([text] * max(0, min(repeat, MAX_COLUMNS + 1 - len(cells))))
            rows_repeated = _repeat(row, "number-rows-repeated")
            self.package.budget.take(width * (rows_repeated - 1), "a table")
            rows.extend([cells] * (min(rows_repeated, 64) if any(cells) else 1))
        table = make_table(len(self.tables), rows, caption=self.heading)
        if table is not None:
            self.tables.append(table)


def parse_odt(item: SourceItem, data: bytes) -> ParsedContent:
    package = Package(item.path, data, "ODT")
    if not package.has("content.xml"):
        raise package.fail("corrupt ODT: no content.xml part")
    root = package.xml("content.xml", cell_tags={_CELL, _COVERED})
    body = root.find(f"{{{OFFICE}}}body/{{{OFFICE}}}text")
    if body is None:
        raise package.fail("not a text document: content.xml has no office:text body")
    reader = _Reader(package)
    reader.block(body, -1)
    text = reader.out.text()
    if not text.strip() and not reader.tables and not reader.images:
        raise package.empty("contains no text, tables or images (an empty document)")
    title = None
    if package.has("meta.xml"):
        found = package.xml("meta.xml").find(f".//{{{DC}}}title")
        title = title_text(found.text) if found is not None else None
    return ParsedContent(
        title=title or reader.out.first_heading,
        pages=(ParsedPage(number=None, text=text, headings=reader.out.headings()),)
        if text.strip()
        else (),
        images=capped_images(item.path, reader.images),
        tables=tuple(reader.tables),
    )


ODT = register(
    DocumentFormat(
        name="OpenDocument text",
        suffixes=(".odt", ".ott"),  # a template is a document too
        mime="application/vnd.oasis.opendocument.text",
        parse=parse_odt,
    )
)
