"""What the document formats share: text blocks joined into page text, tables from rows of cells,
embedded images checked before they reach the image path."""

from __future__ import annotations

import importlib
import io
import logging
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from kgrag.errors import IngestError
from kgrag.ingest.models import ParsedImage, ParsedTable
from kgrag.ingest.sections import Heading, line_headings
from kgrag.ingest.spreadsheet import MAX_COLUMNS, cell_text

__all__ = [
    "MAX_IMAGES",
    "MAX_TABLE_CELLS",
    "MIN_IMAGE_SIDE",
    "CellBudget",
    "TextBuilder",
    "capped_images",
    "continues_sentence",
    "embedded_image",
    "make_table",
    "one_line",
    "require",
    "title_text",
]

log = logging.getLogger(__name__)

#: Embedded images kept from one document (the rest are logged and dropped).
MAX_IMAGES = 200
#: Embedded images smaller than this on a side (icons, bullets, rules) are not content.
MIN_IMAGE_SIDE = 32
MAX_TITLE_CHARS = 200
#: Table cells of one document, empty ones included.
MAX_TABLE_CELLS = 200_000


class CellBudget:
    """Table cells read from one file (empty ones count), refused past ``MAX_TABLE_CELLS``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells = 0

    def take(self, n: int, where: str = "") -> None:
        """Count ``n`` more cells; refuse past the bound."""
        self.cells += n
        self.check(0, where)

    def check(self, more: int, where: str = "") -> None:
        """Refuse if ``more`` cells on top of those counted would pass the bound."""
        if self.cells + more > MAX_TABLE_CELLS:
            at = f" in {where}" if where else ""
            raise IngestError(
                str(self.path),
                f"too many table cells: more than {MAX_TABLE_CELLS:,} (empty ones included)"
                f"{at}; split the document or delete the empty rows and columns",
            )


def require(path: Path, module: str, package: str, *, extra: str = "docs") -> ModuleType:
    """``module``, or an IngestError naming ``path`` and the extra that installs ``package``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise IngestError(
            str(path),
            f"reading this file needs the optional package {package!r}; install it with: "
            f"pip install 'kgrag[{extra}]'",
        ) from e


def one_line(text: str) -> str:
    """Runs of whitespace (newlines included) as one space, stripped."""
    return " ".join(text.split())


def title_text(text: str | None) -> str | None:
    """A title candidate as one line of at most :data:`MAX_TITLE_CHARS`, or None when blank."""
    if text is None:
        return None
    line = one_line(text)
    return line[:MAX_TITLE_CHARS] or None


#: How a sentence may end a line: its end, or a colon or semicolon announcing what follows.
_LINE_END = re.compile(r"[.!?:;]['\")\]]*\s*$")


def continues_sentence(previous: str, text: str) -> bool:
    """Whether the paragraph ``text`` goes on with the sentence ``previous`` ends with: that one
    ends with no full stop, colon or semicolon and this one starts with a lower-case letter."""
    first = text.lstrip()[:1]
    return first.isalpha() and first.islower() and _LINE_END.search(previous) is None


@dataclass
class TextBuilder:
    """Blocks of a page in reading order: headings stand alone between blank lines, so the
    chunker ends a sentence at each and a chunk's text names its section; list items are lines
    starting with ``- ``. With ``wrapped_lines``, a paragraph that goes on with the previous
    one's sentence (:func:`continues_sentence`), no empty paragraph between them, is a line of
    it: a hard-wrapped plain text opened or converted by a word processor (LibreOffice's
    ``--convert-to docx``) has one paragraph per line, and its sentences were cut at every
    line ("... while in a Linux console, your current" / "application will likely dump
    core.")."""

    lines: list[str] = field(default_factory=list)
    first_heading: str | None = None
    marks: list[tuple[int, int, str]] = field(default_factory=list)
    """(index in ``lines``, level, text) of each heading, in order."""
    wrapped_lines: bool = False
    _open: bool = field(default=False, init=False, repr=False)
    """The last block is a paragraph, no empty paragraph after it."""

    def heading(self, text: str, level: int = 1) -> None:
        self._open = False
        text = one_line(text)
        if text:
            if self.first_heading is None:
                self.first_heading = text
            self.marks.append((len(self.lines) + 1, max(level, 1), text))
            self.lines.extend(["", text, ""])

    def paragraph(self, text: str) -> None:
        text = "\n".join(one_line(line) for line in text.split("\n")).strip("\n")
        if not text.strip():
            self._open = False
            return
        if self.wrapped_lines and self._open and continues_sentence(self.lines[-2], text):
            self.lines[-2] += "\n" + text
        else:
            self.lines.extend([text, ""])
        self._open = True

    def item(self, text: str, depth: int = 0) -> None:
        self._open = False
        text = one_line(text)
        if text:
            self.lines.append("  " * depth + "- " + text)

    def end_list(self) -> None:
        self._open = False
        self.lines.append("")

    def preformatted(self, text: str) -> None:
        self._open = False
        if text.strip():
            self.lines.extend([text.strip("\n"), ""])

    def text(self) -> str:
        return self._lines()[0]

    def headings(self) -> tuple[Heading, ...]:
        """The headings on :meth:`text`'s lines (:mod:`kgrag.ingest.sections`)."""
        return self._lines()[1]

    def _lines(self) -> tuple[str, tuple[Heading, ...]]:
        out: list[str] = []
        at: dict[int, int] = {}  # index in self.lines -> index in out
        for n, line in enumerate(self.lines):
            if not line and (not out or not out[-1]):
                continue  # no leading or doubled blank lines
            at[n] = len(out)
            out.append(line.rstrip())
        marks = [(at[n], level, text) for n, level, text in self.marks if n in at]
        return "\n".join(out).strip("\n"), line_headings(out, marks)


def make_table(
    index: int,
    rows: Sequence[Sequence[str]],
    *,
    page: int | None = None,
    caption: str | None = None,
) -> ParsedTable | None:
    """A table whose first row with content is its header; None when no cell has content.
    Cells are one line each (:func:`kgrag.ingest.spreadsheet.cell_text`), rows padded to the
    widest, trailing empty rows and columns dropped, at most
    :data:`~kgrag.ingest.spreadsheet.MAX_COLUMNS` columns kept."""
    cleaned = [[cell_text(c) for c in row[:MAX_COLUMNS]] for row in rows]
    while cleaned and not any(cleaned[-1]):
        cleaned.pop()
    while cleaned and not any(cleaned[0]):
        cleaned.pop(0)
    if not cleaned:
        return None
    width = max(max((i + 1 for i, c in enumerate(r) if c), default=0) for r in cleaned)
    padded = [tuple(r[:width]) + ("",) * (width - len(r[:width])) for r in cleaned]
    body = tuple(r if any(r) else () for r in padded[1:])
    caption = title_text(caption)
    return ParsedTable(index=index, page=page, caption=caption, header=padded[0], rows=body)


def embedded_image(
    path: Path,
    data: bytes,
    *,
    page: int | None = None,
    caption: str | None = None,
    name: str = "",
) -> ParsedImage | None:
    """``data`` as an image to embed, or None (logged) when it is too small or not a raster
    format Pillow decodes (EMF/WMF drawings, damaged data); a decompression bomb is refused."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                img.load()
                width, height = img.size
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        raise IngestError(str(path), f"embedded image {name} is too large to decode: {e}") from e
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        log.warning("%s: embedded image %s cannot be decoded (%s); skipping it", path, name, e)
        return None
    if min(width, height) < MIN_IMAGE_SIDE:
        return None
    return ParsedImage(
        data=data, page=page, width=width, height=height, caption=title_text(caption)
    )


def capped_images(path: Path, images: Iterable[ParsedImage]) -> tuple[ParsedImage, ...]:
    """At most :data:`MAX_IMAGES` images, the rest dropped with a warning."""
    out = list(images)
    if len(out) > MAX_IMAGES:
        log.warning("%s: %d embedded images; keeping the first %d", path, len(out), MAX_IMAGES)
        out = out[:MAX_IMAGES]
    return tuple(out)
