"""Running headers and footers of paged documents.

A PDF's text extraction gives each page's running header (the chapter's title, "Memcheck: a
memory error detector") and footer (its page number, "75") as ordinary lines at the top and
bottom of the page, with nothing between them and the page's first or last sentence: the
header ran into the page's first sentence ("Memcheck: a memory error detector The last part of
any suppression ...") and the page number became a word of the last one. Layout-aware parsers
leave both out of the text (Docling labels them page headers and footers); so does
:func:`strip_running_lines`, keeping every other line as it is. Measured on Valgrind's PDF
manual (BENCHMARKS.md), leaving them out answered better than keeping the header as a
paragraph of its own. The header's words stay the page's running title (a level-0
:class:`~kgrag.ingest.sections.Heading`): a chunk's vector is computed with its chapter's name
(:mod:`kgrag.ingest.sections`), its text is not.

A line is running when it is the first (or last) non-blank line of at least
:data:`MIN_REPEATS` pages of the document, compared with digits masked ("Page 3 of 40" and
"Page 4 of 40" are the same line), and holds at most :data:`MAX_WORDS` words. Up to
:data:`MAX_LINES` lines are taken from each edge of a page (a header, then a page number under
it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from kgrag.ingest.models import ParsedPage
from kgrag.ingest.sections import Heading

__all__ = ["MAX_LINES", "MAX_WORDS", "MIN_REPEATS", "strip_running_lines"]

#: A line at a page's edge is running when this many pages have it there ...
MIN_REPEATS = 3
#: ... and it is at most this long (a repeated paragraph is content, however often it repeats).
MAX_WORDS = 12
#: Lines looked at on each edge of a page: a header and a page number, or a footer's two lines.
MAX_LINES = 2

_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"\w")
_LETTER = re.compile(r"[^\W\d_]")


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).lower())


def _edge(lines: list[str], top: bool) -> list[int]:
    """Indices of the first (``top``) or last :data:`MAX_LINES` non-blank lines."""
    order = range(len(lines)) if top else range(len(lines) - 1, -1, -1)
    return [i for i in order if lines[i].strip()][:MAX_LINES]


def strip_running_lines(pages: Sequence[ParsedPage]) -> list[ParsedPage]:
    """``pages`` without their running headers and footers (the module doc); a document of
    fewer than :data:`MIN_REPEATS` pages, or one without such lines, comes back unchanged."""
    if len(pages) < MIN_REPEATS:
        return list(pages)
    split = [page.text.split("\n") for page in pages]
    counts: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    for lines in split:
        for top in (True, False):
            counts[top].update({_key(lines[i]) for i in _edge(lines, top)})

    def running(line: str, top: bool) -> bool:
        return (
            counts[top][_key(line)] >= MIN_REPEATS
            and len(line.split()) <= MAX_WORDS
            and _WORD.search(line) is not None  # not a code listing's closing "}"
        )

    out = []
    for page, lines in zip(pages, split, strict=True):
        drop: set[int] = set()
        header: list[str] = []
        for top in (True, False):
            for i in _edge(lines, top):  # from the edge inwards, up to the first content line
                if not running(lines[i], top):
                    break
                drop.add(i)
                if top:
                    header.insert(0, lines[i])
        kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
        # a page of nothing but its header and number is kept as it is: it is the page there is
        if drop and kept.strip():
            title = _running_title(header)
            headings = (Heading(start=0, level=0, text=title),) if title else ()
            out.append(page.model_copy(update={"text": kept, "headings": headings + page.headings}))
        else:
            out.append(page)
    return out


_EDGE_NUMBER = re.compile(r"^(?:\d+\s+)+|(?:\s+\d+)+$")


def _running_title(header: list[str]) -> str | None:
    """The words of a page's running header (its chapter's title), without a page number
    printed beside them; None when it has none ("75", "- 3 -")."""
    line = _EDGE_NUMBER.sub("", " ".join(" ".join(header).split()))
    return line if _LETTER.search(line) else None
