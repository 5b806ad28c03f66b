"""SVG drawings (logos, icons, diagrams) read as pictures: drawn to pixels, and their words kept.

The file is parsed once, by lxml with external entities, DTDs and the network off and at most
:data:`~kgrag.ingest.formats._xml.MAX_XML_ELEMENTS` elements (internal entities, as Illustrator
writes them, are expanded within libxml2's amplification limits). Links to anything outside the
file (an ``<image>`` or ``<use>`` naming another file or a URL) are dropped, so drawing it reads
no other file. The tree left is drawn by resvg (``resvg-py``, in process, no network) on white,
fitted into :data:`RASTER_SIDE` pixels a side (a 16-pixel icon is drawn large enough for CLIP, a
65 cm diagram is not drawn at 2,457 pixels; a drawing too slow to draw that large is kept at
:data:`PROBE_SIDE`), and stored as a PNG picture like any other image:
CLIP embedding, DEPICTS links, listed among the pictures.

Its words are kept as the picture's text, so a question naming them finds it: the drawing's own
``<title>`` and ``<desc>`` (children of the ``<svg>`` root; a nested element's title is a
tooltip) and every ``<text>`` element, in document order, each once. The root title is the
document's title and the picture's caption. A file that is not an SVG drawing (not XML, cut
short, another format under an ``.svg`` name, another XML root) is refused, naming what it is.
A gzipped drawing (``.svgz``) is read as its ``.svg`` after the bounded decompression of any
``.gz`` (:func:`kgrag.ingest.containers.kinds.compressed_name`).
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

from kgrag.errors import IngestError
from kgrag.ingest.formats._common import one_line, require, title_text
from kgrag.ingest.formats._xml import MAX_XML_ELEMENTS, parse_bounded
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedImage, ParsedPage, SourceItem

if TYPE_CHECKING:
    from pathlib import Path

    from lxml import etree

__all__ = [
    "DRAW_BUDGET_S",
    "MIN_IMAGE_SIDE",
    "PROBE_SIDE",
    "RASTER_SIDE",
    "SVG",
    "SvgDrawing",
    "read_svg",
]

#: Pixels of the longer side the drawing is fitted into (aspect kept; CLIP looks at 224).
RASTER_SIDE = 1024
#: The drawing is first drawn this many pixels a side; it is drawn again at :data:`RASTER_SIDE`
#: only when that, at the time the first took (its part beyond a :data:`MIN_IMAGE_SIDE` drawing's
#: grows with the pixels), fits in :data:`DRAW_BUDGET_S`. Masks and filters over embedded
#: photographs make some icons slow: Adwaita's preferences-desktop-appearance-symbolic.svg took
#: 4.5 s at 256 pixels, 72 s at 1,024.
PROBE_SIDE = 256
DRAW_BUDGET_S = 2.0
#: A drawing thinner than this when drawn (a rule, a 1024x3 line) is not a picture; as for images.
MIN_IMAGE_SIDE = 16
#: CSS pixels per inch: the sizes written in cm, mm, in or pt are converted at it.
_DPI = 96.0

_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_WORD_TAGS = frozenset({"title", "desc"})

#: The first bytes of formats found under an ``.svg`` name, to say what the file is.
_OTHER_FORMATS: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"RIFF", "a RIFF file (WebP image or WAVE sound)"),
    (b"%PDF-", "a PDF document"),
    (b"\x1f\x8b", "gzip-compressed: a compressed drawing is read when named .svgz"),
    (b"PK\x03\x04", "a zip archive"),
)


@dataclass(frozen=True, slots=True)
class SvgDrawing:
    """One SVG file read: its pixels (PNG bytes), their size, its words, the drawing time."""

    png: bytes = field(repr=False)
    width: int
    height: int
    words: tuple[str, ...]
    title: str | None
    render_s: float


def read_svg(path: Path, data: bytes) -> SvgDrawing:
    """``data`` (the file ``path``) drawn and its words read; IngestError naming what is wrong."""
    root = _parse(path, data)
    title, words = _words(root)
    _drop_outside_links(root)
    lxml_etree = require(path, "lxml.etree", "lxml", extra="image")
    markup = lxml_etree.tostring(root, encoding="unicode")
    resvg = require(path, "resvg_py", "resvg-py", extra="image")
    fonts = any(_local(e) == "text" for e in root.iter())  # loading the system's fonts: ~50 ms
    t0 = time.perf_counter()
    _draw(path, resvg, markup, MIN_IMAGE_SIDE, fonts)  # what any drawing costs: fonts, parsing
    fixed = time.perf_counter() - t0
    png = _draw(path, resvg, markup, PROBE_SIDE, fonts)
    probe = time.perf_counter() - t0 - fixed
    # only the part that grows with the pixels grows 16-fold at RASTER_SIDE (loading the fonts
    # counted 16 times made a plain diagram too slow on a busy machine)
    pixels = max(0.0, probe - fixed) * (RASTER_SIDE / PROBE_SIDE) ** 2
    if fixed + pixels <= DRAW_BUDGET_S:
        png = _draw(path, resvg, markup, RASTER_SIDE, fonts)
    render_s = time.perf_counter() - t0
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        width, height = img.size
    if min(width, height) < MIN_IMAGE_SIDE:
        raise IngestError(
            str(path),
            f"SVG drawing is {width}x{height} pixels when drawn {RASTER_SIDE} pixels long; "
            f"pictures need at least {MIN_IMAGE_SIDE} pixels on each side",
        )
    return SvgDrawing(png, width, height, words, title, render_s)


def _draw(path: Path, resvg: ModuleType, markup: str, side: int, fonts: bool) -> bytes:
    try:
        return bytes(
            resvg.svg_to_bytes(
                svg_string=markup,
                width=side,
                height=side,
                dpi=_DPI,
                background="#ffffff",
                skip_system_fonts=not fonts,
            )
        )
    except (ValueError, RuntimeError) as e:
        raise IngestError(str(path), f"SVG drawing cannot be drawn: {e}") from e


def _parse(path: Path, data: bytes) -> etree._Element:
    for magic, what in _OTHER_FORMATS:
        if data.startswith(magic):
            raise IngestError(str(path), f"not an SVG drawing: the file is {what}")
    lxml_etree = require(path, "lxml.etree", "lxml", extra="image")
    root = parse_bounded(
        lxml_etree,
        data,
        internal_entities=True,
        too_many=lambda: IngestError(
            str(path), f"SVG drawing has more than {MAX_XML_ELEMENTS:,} XML elements"
        ),
        invalid=lambda e: IngestError(str(path), f"corrupt SVG: not valid XML ({e})"),
    )
    if root is None:
        raise IngestError(str(path), "corrupt SVG: no XML element")
    if _local(root) != "svg":
        raise IngestError(
            str(path), f"not an SVG drawing: its root element is <{_local(root)}>, not <svg>"
        )
    return root


def _local(element: etree._Element) -> str:
    tag = element.tag
    if not isinstance(tag, str):  # an entity or other node that is not an element
        return ""
    namespace, _, local = tag[1:].rpartition("}") if tag.startswith("{") else ("", "", tag)
    return local if namespace in ("", _SVG_NS) else ""


def _words(root: etree._Element) -> tuple[str | None, tuple[str, ...]]:
    """The root ``<title>`` and the words to keep: root title and desc, then every ``<text>``."""
    title: str | None = None
    found: list[str] = []
    for child in root:
        local = _local(child)
        if local in _WORD_TAGS:
            line = one_line("".join(child.itertext()))
            if local == "title" and title is None:
                title = title_text(line)
            found.append(line)
    for element in root.iter():
        if _local(element) == "text":
            found.append(one_line("".join(element.itertext())))
    return title, tuple(dict.fromkeys(w for w in found if w))


def _drop_outside_links(root: etree._Element) -> None:
    """Remove every link that leaves the file: only ``#id`` and ``data:`` references stay."""
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        for name in ("href", _XLINK_HREF):
            value = element.get(name)
            if value is not None and not value.strip().startswith(("#", "data:")):
                del element.attrib[name]


def parse_svg(item: SourceItem, data: bytes) -> ParsedContent:
    """:data:`SVG`'s parser: one picture (PNG bytes), its words as the one page."""
    drawing = read_svg(item.path, data)
    caption = item.title or drawing.title
    image = ParsedImage(
        data=drawing.png, width=drawing.width, height=drawing.height, caption=caption
    )
    text = "\n".join(drawing.words)
    pages = (ParsedPage(number=None, text=text),) if text else ()
    return ParsedContent(title=drawing.title, pages=pages, images=(image,))


SVG = register(
    DocumentFormat(
        name="SVG",
        suffixes=(".svg",),
        mime="image/svg+xml",
        parse=parse_svg,
        modality="image",
    )
)
