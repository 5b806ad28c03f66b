"""Optical character recognition with Tesseract (Debian's ``tesseract-ocr`` and its English data),
run as a subprocess with a time limit: scanned PDF pages and pictures of text become text.

- A PDF page without a text layer is rendered at :data:`PDF_DPI` (pypdfium2) and read.
- An image file is read only when it is *mostly text*: a cheap test on a copy downscaled to at most
  :data:`PROBE_SIDE` pixels; it passes with at least :data:`MIN_WORDS` words recognised at
  confidence >= :data:`MIN_WORD_CONFIDENCE` making up at least :data:`MIN_CONFIDENT_SHARE` of all
  words found (photos and drawings yield few words, mostly low-confidence noise). The probe's text
  is the OCR text: no second pass.

The text becomes a page of the document (chunks cited by page); the image's CLIP vector is made
from the pixels as before, never from this text.
"""

from __future__ import annotations

import io
import logging
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from kgrag.core import Frozen
from kgrag.errors import IngestError

log = logging.getLogger(__name__)

PDF_DPI = 200
#: A rendered page has at most this many pixels (a poster-sized page is rendered below 200 dpi).
MAX_PIXELS = 40_000_000
PROBE_SIDE = 1600
MIN_WORDS = 8
MIN_WORD_CONFIDENCE = 60.0
MIN_CONFIDENT_SHARE = 0.6
#: Seconds Tesseract may spend on one page or image.
TIMEOUT_S = 60.0
#: Pages of one PDF read by OCR (at about 2 s a page: 10 minutes at most).
MAX_OCR_PAGES = 300

__all__ = ["OcrText", "available", "image_text", "pdf_page_texts"]


class OcrText(Frozen):
    """What Tesseract read: the text, its words and their mean confidence (0-100)."""

    text: str
    words: int
    confident_words: int
    mean_confidence: float


@cache
def available() -> bool:
    """Tesseract and its English data are installed."""
    exe = shutil.which("tesseract")
    if exe is None:
        return False
    try:
        out = subprocess.run(
            [exe, "--list-langs"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "eng" in out.stdout.split()


def _run(path: Path, image_png: bytes) -> OcrText:
    """Tesseract on one PNG: text with word confidences (TSV output)."""
    with tempfile.TemporaryDirectory(prefix="kgrag-ocr-") as tmp:
        src = Path(tmp) / "page.png"
        src.write_bytes(image_png)
        try:
            out = subprocess.run(
                ["tesseract", str(src), "stdout", "-l", "eng", "--psm", "3", "tsv"],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
                env={"OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin:/usr/local/bin"},
            )
        except subprocess.TimeoutExpired as e:
            raise IngestError(str(path), f"OCR took over {TIMEOUT_S:.0f} s on one page") from e
        except OSError as e:
            raise IngestError(str(path), f"OCR could not run: {e}") from e
    if out.returncode != 0:
        raise IngestError(str(path), f"OCR failed: {out.stderr.strip()[:300]}")
    return _from_tsv(out.stdout)


def _from_tsv(tsv: str) -> OcrText:
    lines: dict[tuple[str, str, str, str], list[str]] = {}
    confidences: list[float] = []
    for record in tsv.splitlines()[1:]:
        cols = record.split("\t")
        if len(cols) < 12 or cols[0] != "5":  # level 5 = word
            continue
        word = cols[11].strip()
        if not word:
            continue
        try:
            confidence = float(cols[10])
        except ValueError:
            continue
        confidences.append(confidence)
        lines.setdefault((cols[1], cols[2], cols[3], cols[4]), []).append(word)
    text = "\n".join(" ".join(words) for words in lines.values())
    words = len(confidences)
    return OcrText(
        text=text,
        words=words,
        confident_words=sum(1 for c in confidences if c >= MIN_WORD_CONFIDENCE),
        mean_confidence=round(sum(confidences) / words, 1) if words else 0.0,
    )


def _png(image: object) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")  # type: ignore[attr-defined]
    return buf.getvalue()


def is_mostly_text(ocr: OcrText) -> bool:
    """The documented test: enough confident words, and most words confident."""
    return (
        ocr.confident_words >= MIN_WORDS and ocr.confident_words >= MIN_CONFIDENT_SHARE * ocr.words
    )


def image_text(path: Path, data: bytes) -> str | None:
    """The text of a picture that is mostly text (a screenshot, a photographed page), else None
    (also when Tesseract is not installed: pictures are then images only)."""
    if not available():
        return None
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        probe = img.convert("L")
    if max(probe.size) > PROBE_SIDE:
        probe.thumbnail((PROBE_SIDE, PROBE_SIDE))
    ocr = _run(path, _png(probe))
    log.debug(
        "%s: OCR probe %d words (%d confident, mean %.0f)",
        path,
        ocr.words,
        ocr.confident_words,
        ocr.mean_confidence,
    )
    return ocr.text if is_mostly_text(ocr) and ocr.text.strip() else None


def pdf_page_texts(path: Path, data: bytes, numbers: list[int]) -> dict[int, str]:
    """OCR text of the given 1-based PDF pages (those without a text layer), rendered at
    :data:`PDF_DPI`. Raises :class:`IngestError` when Tesseract is not installed."""
    if not available():
        raise IngestError(
            str(path),
            f"PDF pages {_pages(numbers)} have no text layer and OCR is not available "
            "(install tesseract-ocr and tesseract-ocr-eng)",
        )
    import pypdfium2

    if len(numbers) > MAX_OCR_PAGES:
        log.warning(
            "%s: %d pages without a text layer; OCR reads the first %d",
            path,
            len(numbers),
            MAX_OCR_PAGES,
        )
        numbers = numbers[:MAX_OCR_PAGES]
    out: dict[int, str] = {}
    try:
        pdf = pypdfium2.PdfDocument(data)
    except Exception as e:
        raise IngestError(str(path), f"PDF cannot be rendered for OCR: {e}") from e
    try:
        for number in numbers:
            page = pdf[number - 1]
            try:
                width, height = page.get_size()  # points
                scale = min(PDF_DPI / 72, (MAX_PIXELS / max(1.0, width * height)) ** 0.5)
                image = page.render(scale=scale).to_pil().convert("L")
            finally:
                page.close()
            text = _run(path, _png(image)).text
            if text.strip():
                out[number] = text
    finally:
        pdf.close()
    return out


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    return shown + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
