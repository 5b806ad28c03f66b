"""An excerpt of Valgrind's PDF manual (this machine's /usr/share/doc) made by tests: chapters
whose pages carry a running header, with the manual's outline entries for them."""

from __future__ import annotations

import gzip
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

MANUAL = Path("/usr/share/doc/valgrind/valgrind_manual.pdf.gz")
#: Pages of the manual's Memcheck chapter (73-80) and Helgrind chapter (131-142), 1-based.
EXCERPT = (*range(73, 81), *range(131, 143))


def manual_excerpt(folder: Path, pages: Sequence[int] = EXCERPT) -> Path:
    """``pages`` (1-based; by default two chapters, :data:`EXCERPT`) of Valgrind's PDF manual as
    a PDF of their own, with the manual's title and its outline entries for those pages (pypdf
    copies the pages; their running headers and page numbers come along)."""
    import pypdf

    if not MANUAL.exists():
        pytest.skip(f"{MANUAL} is not on this machine")
    reader = pypdf.PdfReader(io.BytesIO(gzip.decompress(MANUAL.read_bytes())))
    writer = pypdf.PdfWriter()
    for number in pages:
        writer.add_page(reader.pages[number - 1])
    writer.add_metadata({"/Title": reader.metadata["/Title"]})  # "Valgrind Documentation"
    parents: dict[int, Any] = {}

    def walk(items: Sequence[Any], depth: int) -> None:
        for entry in items:
            if isinstance(entry, list):
                walk(entry, depth + 1)
                continue
            page = (reader.get_destination_page_number(entry) or 0) + 1
            if page in pages:
                parents[depth] = writer.add_outline_item(
                    title=entry.title,
                    page_number=list(pages).index(page),
                    parent=parents.get(depth - 1),
                )

    walk(reader.outline, 0)
    path = folder / "valgrind_excerpt.pdf"
    with path.open("wb") as f:
        writer.write(f)
    return path
