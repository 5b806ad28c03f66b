"""Word documents (.docx, Office Open XML): paragraphs, headings, lists, tables, embedded images.

The main part (``word/document.xml``, found through the package's relationships) is read in
body order: a paragraph whose style is a heading ("heading 1".."heading 9", "Title", or one with
an outline level) is a heading line, a numbered or bulleted paragraph is a ``- `` item indented by
its level, a table (``w:tbl``) is a :class:`~kgrag.ingest.models.ParsedTable` (caption: the
caption paragraph just above it, else the heading it sits under; a merged cell's text in each
row and column it spans) kept out of the text, and each picture (``a:blip``) is an embedded
image with its alt text as caption. Deleted tracked changes and field codes are left out; so are
headers, footers, footnotes and comments (not read). A .docx has no pages: its text is one
unpaged page. The title is the core property ``dc:title``, else the first heading. Bounds:
:mod:`._zipped`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kgrag.ingest.formats._common import TextBuilder, make_table, one_line
from kgrag.ingest.formats._ooxml import (
    BLIP,
    VML_IMAGE,
    Part,
    alt_text,
    office_content,
    open_package,
    picture,
)
from kgrag.ingest.formats._zipped import Package
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedImage, ParsedPage, ParsedTable, SourceItem

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["DOCX", "parse_docx"]

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _w(tag: str) -> str:
    return f"{{{W}}}{tag}"


_P, _TBL, _TR, _TC = _w("p"), _w("tbl"), _w("tr"), _w("tc")
_CONTAINERS = frozenset({_w("sdt"), _w("sdtContent"), _w("customXml"), _w("ins"), _w("smartTag")})
#: built-in heading styles keep their English name in the file whatever the language of Word
_HEADING_NAME = re.compile(r"^heading\s*(\d)$")


@dataclass
class _Styles:
    headings: dict[str, int] = field(default_factory=dict)  # style id -> level (0: title)
    captions: set[str] = field(default_factory=set)


def _styles(package: Package, part: Part) -> _Styles:
    member = part.related("/styles")
    out = _Styles()
    if member is None or not package.has(member):
        return out
    for style in package.xml(member).iter(_w("style")):
        sid = style.get(_w("styleId")) or ""
        name_el = style.find(_w("name"))
        name = (name_el.get(_w("val")) or "").lower() if name_el is not None else ""
        outline = style.find(f"{_w('pPr')}/{_w('outlineLvl')}")
        m = _HEADING_NAME.match(name)
        if name == "title":
            out.headings[sid] = 0
        elif m:
            out.headings[sid] = int(m.group(1))
        elif outline is not None and (outline.get(_w("val")) or "").isdigit():
            out.headings[sid] = int(outline.get(_w("val")) or "0") + 1
        if "caption" in name:
            out.captions.add(sid)
    return out


def _run_text(element: etree._Element) -> str:
    """The text of a paragraph (or cell): runs, tabs and breaks; no deleted text, no field code."""
    parts: list[str] = []
    for node in element.iter(_w("t"), _w("tab"), _w("br"), _w("cr"), _w("noBreakHyphen")):
        if node.tag == _w("t"):
            parts.append(node.text or "")
        elif node.tag == _w("noBreakHyphen"):
            parts.append("-")
        elif node.tag == _w("tab"):
            if node.getparent() is not None and node.getparent().tag == _w("r"):
                parts.append("\t")
        else:
            parts.append("\n")
    return "".join(parts)


def _blocks(container: etree._Element) -> Iterator[etree._Element]:
    """Paragraphs and tables of a body in order, looking into content controls."""
    for child in container:
        if child.tag in (_P, _TBL):
            yield child
        elif child.tag in _CONTAINERS:
            yield from _blocks(child)


def _style(p: etree._Element) -> str:
    el = p.find(f"{_w('pPr')}/{_w('pStyle')}")
    return (el.get(_w("val")) or "") if el is not None else ""


def _list_level(p: etree._Element) -> int | None:
    num = p.find(f"{_w('pPr')}/{_w('numPr')}")
    if num is None:
        return None
    num_id = num.find(_w("numId"))
    if num_id is not None and num_id.get(_w("val")) == "0":
        return None  # numbering explicitly removed
    level = num.find(_w("ilvl"))
    value = level.get(_w("val")) if level is not None else "0"
    return int(value) if value and value.isdigit() else 0


def _table_rows(tbl: etree._Element) -> list[list[str]]:
    """The rows of a table; a merged cell gives its text to every row and column it spans."""
    rows: list[list[str]] = []
    above: list[str] = []
    for tr in tbl.iter(_TR):
        if tr.getparent() is not tbl and tr.getparent().getparent() is not tbl:
            continue  # a row of a nested table: its text is in the cell that holds it
        row: list[str] = []
        for tc in tr.iter(_TC):
            if tc.getparent() is not tr and tc.getparent().getparent() is not tr:
                continue
            props = tc.find(_w("tcPr"))
            merge = props.find(_w("vMerge")) if props is not None else None
            if merge is not None and merge.get(_w("val"), "continue") == "continue":
                text = above[len(row)] if len(row) < len(above) else ""
            else:
                paragraphs = [one_line(_run_text(p)) for p in tc.iter(_P)]
                text = " ".join(p for p in paragraphs if p)
            span = props.find(_w("gridSpan")) if props is not None else None
            value = span.get(_w("val")) if span is not None else None
            width = min(int(value), 64) if value and value.isdigit() and int(value) > 0 else 1
            row.extend([text] * width)
        rows.append(row)
        above = row
    return rows


def parse_docx(item: SourceItem, data: bytes) -> ParsedContent:
    package, part = open_package(item, data, "DOCX", "word/document.xml")
    styles = _styles(package, part)
    root = package.xml(part.name, cell_tags={_TC})
    body = root.find(_w("body"))
    if body is None:
        raise package.fail(f"corrupt DOCX: {part.name} has no body")
    out = TextBuilder(wrapped_lines=True)
    tables: list[ParsedTable] = []
    images: list[ParsedImage] = []
    heading: str | None = None
    caption: str | None = None
    list_open = False
    for block in _blocks(body):
        for drawing in block.iter(_w("drawing"), _w("pict")):
            for blip in drawing.iter(BLIP, VML_IMAGE):
                found = picture(package, part, blip, alt_text(drawing))
                if found is not None:
                    images.append(found)
        if block.tag == _TBL:
            table = make_table(len(tables), _table_rows(block), caption=caption or heading)
            if table is not None:
                tables.append(table)
            caption = None
            continue
        text = _run_text(block)
        style = _style(block)
        level = _list_level(block)
        if list_open and level is None:
            out.end_list()
            list_open = False
        if style in styles.headings:
            out.heading(text, styles.headings[style])
            heading = one_line(text) or heading
        elif level is not None:
            out.item(text, level)
            list_open = True
        else:
            out.paragraph(text)
        caption = one_line(text) if style in styles.captions and text.strip() else None
    text = out.text()
    if not text.strip() and not tables and not images:
        raise package.empty("contains no text, tables or images (an empty document)")
    return office_content(
        package,
        first_heading=out.first_heading,
        pages=[ParsedPage(number=None, text=text, headings=out.headings())] if text.strip() else [],
        images=images,
        tables=tables,
    )


DOCX = register(
    DocumentFormat(
        name="Word (.docx)",
        suffixes=(".docx",),
        mime="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        parse=parse_docx,
    )
)
