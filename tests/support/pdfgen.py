"""Real PDF files for tests, written by the library's own dependency-free writer.

:func:`write_pdf` makes a valid multi-page PDF with text and embedded images (pypdf reads both
back); the helpers below make the damaged variants the parser must refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from kgrag.demo.pdf import pdf_bytes, write_pdf

__all__ = [
    "figure",
    "pdf_bytes",
    "write_blank_pdf",
    "write_pdf",
    "write_scanned_pdf",
    "write_table_pdf",
    "write_truncated_pdf",
]


def figure(width: int = 160, height: int = 120, colour: str = "red") -> Image.Image:
    """A small drawing (a filled circle on white) to embed as a figure."""
    image = Image.new("RGB", (width, height), "white")
    ImageDraw.Draw(image).ellipse(
        (width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill=colour
    )
    return image


def write_truncated_pdf(path: Path, pages: Sequence[str], keep: float = 0.6) -> Path:
    """A PDF cut after ``keep`` of its bytes (a partial download): no xref, no trailer."""
    data = pdf_bytes(pages, [(1, figure())])
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def write_blank_pdf(path: Path, page_count: int = 2) -> Path:
    """A valid PDF whose pages have neither text nor images (what a scan without OCR looks like
    to a text extractor)."""
    return write_pdf(path, [""] * page_count)


def write_table_pdf(
    path: Path, intro: str, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> Path:
    """A one-page PDF: a line of text, then a table drawn with ruled lines around every cell
    (what word processors export), each cell's text in the text layer."""
    cell_w, cell_h, left, top = 110.0, 22.0, 72.0, 680.0
    table = [list(header), *[list(r) for r in rows]]
    ops = [f"BT /F1 12 Tf {left} 740 Td ({_escape(intro)}) Tj ET", "0.8 w"]
    for r, row in enumerate(table):
        for c, value in enumerate(row):
            x, y = left + c * cell_w, top - r * cell_h
            ops.append(f"{x} {y} {cell_w} {cell_h} re S")
            ops.append(f"BT /F1 10 Tf {x + 4} {y + 7} Td ({_escape(value)}) Tj ET")
    content = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_scanned_pdf(path: Path, pages: Sequence[str], dpi: int = 200) -> Path:
    """What a scanner makes of a text PDF: each page rendered to a greyscale image (pypdfium2)
    and wrapped back into a PDF of images only (Pillow): no text layer."""
    import pypdfium2

    pdf = pypdfium2.PdfDocument(pdf_bytes(pages))
    try:
        images = [pdf[i].render(scale=dpi / 72).to_pil().convert("L") for i in range(len(pdf))]
    finally:
        pdf.close()
    images[0].save(path, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return path
