"""PowerPoint decks (.pptx): one page per slide, numbered as the deck numbers its slides.

Slides are taken in the order of ``ppt/presentation.xml``'s slide list (hidden ones too, so that
numbers match what PowerPoint shows); slide N is page N of every citation. A slide's text is its
title (a heading line) and its text shapes in order (group shapes included), followed by its
speaker notes as a paragraph starting ``Speaker notes:``. A table on a slide is a
:class:`~kgrag.ingest.models.ParsedTable` on that page (caption: the slide's title); a picture is
an embedded image on that page (a merged table cell's text is in each cell it covers). Slide
numbers, dates and footers are left out. The title is the deck's ``dc:title``, else the first
slide's title. Bounds: :mod:`._zipped`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kgrag.ingest.formats._common import TextBuilder, make_table, one_line
from kgrag.ingest.formats._ooxml import (
    A,
    P,
    R,
    alt_text,
    office_content,
    open_package,
    picture,
    read_part,
)
from kgrag.ingest.formats._zipped import Package
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedImage, ParsedPage, ParsedTable, SourceItem

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["PPTX", "parse_pptx"]

_NOTES = "/notesSlide"
_TITLE_TYPES = frozenset({"title", "ctrTitle"})
_CHROME_TYPES = frozenset({"sldNum", "dt", "ftr", "hdr", "sldImg"})


def _p(tag: str) -> str:
    return f"{{{P}}}{tag}"


def _a(tag: str) -> str:
    return f"{{{A}}}{tag}"


def _paragraphs(body: etree._Element) -> Iterator[tuple[str, int]]:
    """``(text, level)`` of each ``a:p`` of a text body."""
    for para in body.iter(_a("p")):
        parts = [(n.text or "") if n.tag == _a("t") else "\n" for n in para.iter(_a("t"), _a("br"))]
        ppr = para.find(_a("pPr"))
        level = ppr.get("lvl") if ppr is not None else None
        yield "".join(parts), int(level) if level and level.isdigit() else 0


def _placeholder(shape: etree._Element) -> str | None:
    ph = shape.find(f"{_p('nvSpPr')}/{_p('nvPr')}/{_p('ph')}")
    if ph is None:
        return None
    return ph.get("type") or "body"


def _shapes(tree: etree._Element) -> Iterator[etree._Element]:
    """Shapes of a shape tree in order, group shapes opened."""
    for child in tree:
        if child.tag == _p("grpSp"):
            yield from _shapes(child)
        elif child.tag in (_p("sp"), _p("graphicFrame"), _p("pic")):
            yield child


def _table_rows(tbl: etree._Element) -> list[list[str]]:
    """The rows of a slide's table; a merged cell gives its text to every cell it covers."""
    rows: list[list[str]] = []
    above: list[str] = []
    for tr in tbl.iter(_a("tr")):
        row: list[str] = []
        for tc in tr.iter(_a("tc")):
            if tc.get("vMerge") in ("1", "true"):
                row.append(above[len(row)] if len(row) < len(above) else "")
            elif tc.get("hMerge") in ("1", "true"):
                row.append(row[-1] if row else "")
            else:
                row.append(" ".join(one_line(t) for t, _ in _paragraphs(tc) if t.strip()))
        rows.append(row)
        above = row
    return rows


def _notes(package: Package, member: str) -> str:
    root = package.xml(member)
    texts: list[str] = []
    for shape in root.iter(_p("sp")):
        if _placeholder(shape) in _CHROME_TYPES:
            continue
        body = shape.find(_p("txBody"))
        if body is not None:
            texts.extend(one_line(t) for t, _ in _paragraphs(body) if t.strip())
    return " ".join(texts)


def parse_pptx(item: SourceItem, data: bytes) -> ParsedContent:
    package, deck = open_package(item, data, "PPTX", "ppt/presentation.xml")
    slide_list = package.xml(deck.name).find(_p("sldIdLst"))
    slide_ids = [] if slide_list is None else list(slide_list.iter(_p("sldId")))
    pages: list[ParsedPage] = []
    tables: list[ParsedTable] = []
    images: list[ParsedImage] = []
    first_title: str | None = None
    for number, sld in enumerate(slide_ids, start=1):
        member = deck.targets.get(sld.get(f"{{{R}}}id") or "", "")
        if not member or not package.has(member):
            raise package.fail(f"corrupt PPTX: slide {number} ({member or 'no part'}) is missing")
        slide = read_part(package, member)
        root = package.xml(member, cell_tags={_a("tc")})
        tree = root.find(f"{_p('cSld')}/{_p('spTree')}")
        out = TextBuilder()
        title: str | None = None
        for shape in [] if tree is None else _shapes(tree):
            kind = _placeholder(shape)
            if kind in _CHROME_TYPES:
                continue
            for blip in shape.iter(_a("blip")):
                found = picture(package, slide, blip, alt_text(shape), page=number)
                if found is not None:
                    images.append(found)
            for tbl in shape.iter(_a("tbl")):
                table = make_table(len(tables), _table_rows(tbl), page=number, caption=title)
                if table is not None:
                    tables.append(table)
            body = shape.find(_p("txBody"))
            if body is None:
                continue
            lines = [(t, lvl) for t, lvl in _paragraphs(body) if t.strip()]
            if kind in _TITLE_TYPES:
                title = one_line(" ".join(t for t, _ in lines)) or title
                out.heading(title or "")
                continue
            for text, level in lines:
                if kind == "body" or len(lines) > 1:
                    out.item(text, level)
                else:
                    out.paragraph(text)
            out.end_list()
        notes = slide.related(_NOTES)
        if notes is not None and package.has(notes):
            said = _notes(package, notes)
            if said:
                out.paragraph(f"Speaker notes: {said}")
        first_title = first_title or title
        text = out.text()
        if text.strip():
            pages.append(ParsedPage(number=number, text=text))
    if not pages and not tables and not images:
        raise package.empty(f"contains no text, tables or images on its {len(slide_ids)} slide(s)")
    return office_content(
        package, first_heading=first_title, pages=pages, images=images, tables=tables
    )


PPTX = register(
    DocumentFormat(
        name="PowerPoint (.pptx)",
        suffixes=(".pptx",),
        mime="application/vnd.openxmlformats-officedocument.presentationml.presentation",
        parse=parse_pptx,
    )
)
