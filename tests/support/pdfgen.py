"""Real PDF files for tests, written by the library's own dependency-free writer.

:func:`write_pdf` makes a valid multi-page PDF with text and embedded images (pypdf reads both
back); the helpers below make the damaged variants the parser must refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from kgrag.demo.pdf import pdf_bytes, write_pdf

__all__ = ["figure", "pdf_bytes", "write_blank_pdf", "write_pdf", "write_truncated_pdf"]


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
