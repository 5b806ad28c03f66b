"""A small, dependency-free PDF writer: pages of text (Helvetica) and embedded raster images.

Used by the demo to make a real multi-page PDF with a figure, and by the tests to make real PDFs
(``pypdf`` reads them back: text per page through ``extract_text`` and images through
``page.images``). It writes PDF 1.4 with a classic cross-reference table; images are embedded as
Flate-compressed DeviceRGB image XObjects.
"""

from __future__ import annotations

import textwrap
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image

PAGE_WIDTH = 612.0  # US Letter, in points
PAGE_HEIGHT = 792.0
MARGIN = 72.0
FONT_SIZE = 11.0
LEADING = 14.0
WRAP_COLUMNS = 90  # Helvetica 11pt averages ~5.5pt per character: 90 columns fit 468pt
IMAGE_MAX_HEIGHT = 260.0
IMAGE_GAP = 12.0
IMAGE_MAX_SCALE = 2.0  # points per pixel: small images are enlarged at most 2x


def write_pdf(
    path: Path | str,
    pages: Sequence[str],
    images: Sequence[tuple[int, Image]] = (),
    *,
    title: str | None = None,
) -> Path:
    """Write a PDF with one page per entry of ``pages`` and return its path.

    ``images`` places pictures as ``(page_number, image)`` with 1-based page numbers; each is
    drawn below that page's text, scaled to fit the text width. ``title`` goes to the document
    information dictionary. Text is wrapped at about 90 characters; blank lines separate
    paragraphs. Characters outside Windows-1252 are written as ``?``. Raises ``ValueError`` if a
    page's text and images do not fit on one page or a page number is out of range.
    """
    out = Path(path)
    out.write_bytes(pdf_bytes(pages, images, title=title))
    return out


def pdf_bytes(
    pages: Sequence[str],
    images: Sequence[tuple[int, Image]] = (),
    *,
    title: str | None = None,
) -> bytes:
    """The bytes :func:`write_pdf` writes."""
    if not pages:
        raise ValueError("a PDF needs at least one page")
    per_page: list[list[Image]] = [[] for _ in pages]
    for number, image in images:
        if not 1 <= number <= len(pages):
            raise ValueError(f"image page {number} is out of range 1..{len(pages)}")
        per_page[number - 1].append(image)

    objects: list[bytes] = []  # objects[i] is object number i + 1

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog_id = add(b"")  # filled in once the page tree exists
    pages_id = add(b"")
    font_id = add(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    page_ids: list[int] = []
    for index, text in enumerate(pages, start=1):
        content, xobjects = _layout_page(index, text, per_page[index - 1], add)
        content_id = add(_stream(b"", zlib.compress(content), flate=True))
        xobject_refs = b" ".join(b"/%s %d 0 R" % (name, oid) for name, oid in xobjects)
        resources = b"<< /Font << /F1 %d 0 R >> /XObject << %s >> >>" % (font_id, xobject_refs)
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources %s "
                b"/Contents %d 0 R >>"
                % (pages_id, _num(PAGE_WIDTH), _num(PAGE_HEIGHT), resources, content_id)
            )
        )
    kids = b" ".join(b"%d 0 R" % pid for pid in page_ids)
    objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    objects[catalog_id - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id
    info = b"<< /Producer (kgrag.demo.pdf)"
    if title:
        info += b" /Title " + _text_string(title)
    info_id = add(info + b" >>")
    return _serialise(objects, root=catalog_id, info=info_id)


def _layout_page(
    number: int,
    text: str,
    images: Sequence[Image],
    add: Callable[[bytes], int],
) -> tuple[bytes, list[tuple[bytes, int]]]:
    lines: list[str] = []
    for paragraph_index, paragraph in enumerate(_paragraphs(text)):
        if paragraph_index:
            lines.append("")
        lines.extend(textwrap.wrap(paragraph, WRAP_COLUMNS) or [""])
    width = PAGE_WIDTH - 2 * MARGIN
    y = PAGE_HEIGHT - MARGIN
    ops: list[bytes] = []
    if lines:
        ops.append(
            b"BT /F1 %s Tf %s TL %s %s Td"
            % (_num(FONT_SIZE), _num(LEADING), _num(MARGIN), _num(y - FONT_SIZE))
        )
        for i, line in enumerate(lines):
            if i:
                ops.append(b"T*")
            if line:
                ops.append(_literal(line) + b" Tj")
        ops.append(b"ET")
        y -= FONT_SIZE + LEADING * (len(lines) - 1) + IMAGE_GAP
    xobjects: list[tuple[bytes, int]] = []
    for i, image in enumerate(images):
        w_px, h_px = image.size
        scale = min(width / w_px, IMAGE_MAX_HEIGHT / h_px, IMAGE_MAX_SCALE)
        w, h = w_px * scale, h_px * scale
        if y - h < MARGIN:
            raise ValueError(f"page {number}: text and images do not fit on one page")
        y -= h
        name = b"Im%d" % (i + 1)
        oid = add(_image_xobject(image))
        xobjects.append((name, oid))
        ops.append(
            b"q %s 0 0 %s %s %s cm /%s Do Q" % (_num(w), _num(h), _num(MARGIN), _num(y), name)
        )
        y -= IMAGE_GAP
    if y < MARGIN - LEADING:
        raise ValueError(
            f"page {number}: {len(lines)} lines of text do not fit on one page "
            f"(at most {int((PAGE_HEIGHT - 2 * MARGIN) // LEADING)})"
        )
    return b"\n".join(ops), xobjects


def _paragraphs(text: str) -> list[str]:
    blocks = text.replace("\r\n", "\n").split("\n\n")
    return [" ".join(block.split()) for block in blocks if block.strip()]


def _image_xobject(image: Image) -> bytes:
    rgb = _to_rgb(image)
    w, h = rgb.size
    header = (
        b"/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
        b"/BitsPerComponent 8" % (w, h)
    )
    return _stream(header, zlib.compress(rgb.tobytes()), flate=True)


def _to_rgb(image: Image) -> Image:
    if image.mode == "RGB":
        return image
    if image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info):
        from PIL import Image as PILImage

        rgba = image.convert("RGBA")
        background = PILImage.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB")


def _stream(header: bytes, data: bytes, *, flate: bool) -> bytes:
    filt = b" /Filter /FlateDecode" if flate else b""
    head = b"<< " + header + (b" " if header else b"") + b"/Length %d" % len(data) + filt + b" >>"
    return head + b"\nstream\n" + data + b"\nendstream"


def _num(value: float) -> bytes:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text.encode("ascii")


def _literal(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    escaped = raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
    return b"(" + escaped + b")"


def _text_string(text: str) -> bytes:
    """A PDF text string: a literal for ASCII, UTF-16BE with a byte-order mark otherwise."""
    if text.isascii():
        return _literal(text)
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode("ascii") + b">"


def _serialise(objects: Sequence[bytes], *, root: int, info: int) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\n" % (len(objects) + 1, root, info)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
