"""Jupyter notebooks (.ipynb, nbformat 4): the text of every cell in order, Markdown and code, the
text its code printed, and the pictures it drew (PNG and JPEG outputs, embedded images).

A notebook is JSON; read as plain text it was its cells' source quoted line by line, with the
base64 of every plot between them (often lines of 100 KB: then not read at all). Here a Markdown
cell is its text, a code cell its source, an output its ``text/plain`` or stream text (at most
:data:`MAX_OUTPUT_CHARS` each: a printed data frame, a traceback), and an image output an image
of the document, captioned by the Markdown heading above it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest.decoding import decode_text
from kgrag.ingest.formats._common import capped_images, embedded_image
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedImage, ParsedPage, SourceItem

#: The most characters of one cell output kept (the head of a long print or traceback).
MAX_OUTPUT_CHARS = 2_000
_IMAGE_TYPES = ("image/png", "image/jpeg")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def parse_notebook(item: SourceItem, data: bytes) -> ParsedContent:
    path = item.path
    try:
        notebook = json.loads(decode_text(path, data).text)
    except json.JSONDecodeError as e:
        raise IngestError(
            str(path), f"not a Jupyter notebook: invalid JSON at line {e.lineno}, column {e.colno}"
        ) from e
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        version = notebook.get("nbformat") if isinstance(notebook, dict) else None
        raise IngestError(
            str(path),
            "not a Jupyter notebook of nbformat 4 (no list of cells"
            + (f"; nbformat {version}" if version is not None else "")
            + "): open and save it in a current Jupyter to convert it",
        )
    parts: list[str] = []
    images: list[ParsedImage] = []
    title: str | None = None
    heading: str | None = None
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict):
            raise IngestError(str(path), f"not a Jupyter notebook: cell {number} is not an object")
        source = _text(cell.get("source")).strip()
        if cell.get("cell_type") == "markdown" and source:
            found = _HEADING.search(source)
            if found:
                heading = found.group(1)
                title = title or heading
        if source:
            parts.append(source)
        for output in cell.get("outputs") or ():
            if not isinstance(output, dict):
                continue
            printed = _printed(output)
            if printed:
                parts.append(printed)
            for name, picture in _pictures(output):
                image = embedded_image(path, picture, caption=heading, name=f"cell {number} {name}")
                if image is not None:
                    images.append(image)
    text = "\n\n".join(parts)
    if not text.strip() and not images:
        raise EmptyInputError(str(path), "notebook has no cell with text, output or image")
    pages = (ParsedPage(number=None, text=text),) if text.strip() else ()
    return ParsedContent(title=title, pages=pages, images=capped_images(path, images))


def _text(value: object) -> str:
    """A notebook string: one string, or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return ""


def _printed(output: Mapping[str, Any]) -> str:
    """What a code cell printed or returned, as text (bounded)."""
    if output.get("output_type") == "stream":
        text = _text(output.get("text"))
    elif output.get("output_type") == "error":
        text = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    else:
        bundle = output.get("data")
        text = _text(bundle.get("text/plain")) if isinstance(bundle, dict) else ""
        if isinstance(bundle, dict) and any(t in bundle for t in _IMAGE_TYPES):
            text = ""  # "<Figure size 640x480 with 1 Axes>": the picture says it
    text = text.strip()
    return text[:MAX_OUTPUT_CHARS]


def _pictures(output: Mapping[str, Any]) -> Iterator[tuple[str, bytes]]:
    bundle = output.get("data")
    if not isinstance(bundle, dict):
        return
    for kind in _IMAGE_TYPES:
        encoded = _text(bundle.get(kind))
        if encoded:
            try:
                yield kind, base64.b64decode(encoded, validate=False)
            except (binascii.Error, ValueError):
                continue
            return  # one picture per output: its PNG, else its JPEG


FORMAT = register(
    DocumentFormat(
        name="Jupyter notebook",
        suffixes=(".ipynb",),
        mime="application/x-ipynb+json",
        parse=parse_notebook,
    )
)
