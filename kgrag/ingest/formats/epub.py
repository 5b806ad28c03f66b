"""E-books (.epub): each chapter of the reading order is a page, read like an HTML page.

``META-INF/container.xml`` names the package document (OPF); its spine gives the reading order.
Each linear spine item that is XHTML is read by :func:`kgrag.ingest.formats.html.extract_html`
(main content, headings as lines, tables as data, ``<img>`` as embedded images); the chapters
with text are numbered 1, 2, ... in reading order and that number is the page of every citation
(a cover or navigation page without text takes no number). The title is the OPF's ``dc:title``,
else the first chapter's heading. Bounds: :mod:`._zipped` for the container, and
:data:`~kgrag.ingest.formats.html.MAX_HTML_BYTES` for each chapter.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urldefrag

from kgrag.ingest.formats._common import (
    CellBudget,
    capped_images,
    embedded_image,
    title_text,
)
from kgrag.ingest.formats._ooxml import DC
from kgrag.ingest.formats._zipped import Package
from kgrag.ingest.formats.html import MAX_HTML_BYTES, decode_html, extract_html
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedImage, ParsedPage, ParsedTable, SourceItem

__all__ = ["EPUB", "parse_epub"]

CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
OPF = "http://www.idpf.org/2007/opf"
_XHTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def _package_document(package: Package) -> str:
    if not package.has("META-INF/container.xml"):
        raise package.fail("corrupt EPUB: no META-INF/container.xml")
    for rootfile in package.xml("META-INF/container.xml").iter(f"{{{CONTAINER}}}rootfile"):
        full = rootfile.get("full-path") or ""
        if package.has(full):
            return full
    raise package.fail("corrupt EPUB: container.xml names no package document that exists")


def parse_epub(item: SourceItem, data: bytes) -> ParsedContent:
    path = item.path
    package = Package(path, data, "EPUB")
    opf_name = _package_document(package)
    folder = posixpath.dirname(opf_name)
    opf = package.xml(opf_name)
    manifest = {
        it.get("id") or "": (it.get("href") or "", it.get("media-type") or "")
        for it in opf.iter(f"{{{OPF}}}item")
    }
    spine = [
        ref.get("idref") or ""
        for ref in opf.iter(f"{{{OPF}}}itemref")
        if (ref.get("linear") or "yes") != "no"
    ]
    budget = CellBudget(path)
    pages: list[ParsedPage] = []
    tables: list[ParsedTable] = []
    images: list[ParsedImage] = []
    first_heading: str | None = None
    for idref in spine:
        href, media = manifest.get(idref, ("", ""))
        member = posixpath.normpath(posixpath.join(folder, unquote(href)))
        if media not in _XHTML_TYPES or not package.has(member):
            continue
        raw = package.read(member)
        if len(raw) > MAX_HTML_BYTES:
            raise package.fail(
                f"EPUB chapter {member!r} is {len(raw):,} bytes, over the {MAX_HTML_BYTES:,} "
                "byte limit for one chapter"
            )
        number = len(pages) + 1
        found = extract_html(
            path, decode_html(path, raw), budget=budget, page=number, first_table=len(tables)
        )
        if not found.text.strip():
            continue
        pages.append(ParsedPage(number=number, text=found.text, headings=found.headings))
        tables.extend(found.tables)
        first_heading = first_heading or found.first_heading
        chapter_folder = posixpath.dirname(member)
        for src, alt in found.images:
            target = urldefrag(unquote(src)).url
            image = posixpath.normpath(posixpath.join(chapter_folder, target))
            if "://" in src or not package.has(image):
                continue
            parsed = embedded_image(path, package.read(image), page=number, caption=alt, name=image)
            if parsed is not None:
                images.append(parsed)
    if not pages:
        raise package.empty(f"contains no text in any of its {len(spine)} spine document(s)")
    meta = opf.find(f".//{{{DC}}}title")
    return ParsedContent(
        title=(title_text(meta.text) if meta is not None else None) or first_heading,
        pages=tuple(pages),
        images=capped_images(path, images),
        tables=tuple(tables),
    )


EPUB = register(
    DocumentFormat(name="EPUB", suffixes=(".epub",), mime="application/epub+zip", parse=parse_epub)
)
