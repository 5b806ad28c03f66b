"""The section a chunk sits in, and the text its vector is computed from.

A passage deep in a manual ("It is the default tool ...", a page of Valgrind's manual under
"Memcheck: a memory error detector") names neither its document nor its section, so a question
about the section ("What is Memcheck?") did not find it by similarity. Each chunk therefore
carries its section's heading path (:attr:`kgrag.ingest.models.TextChunk.section`, outermost
first) and its vector is computed from :func:`context_text`: the document's title and that path
on a line before the chunk's text (contextual chunk headers). The chunk's stored and cited text
is its own text, unchanged.

Where headings come from (:attr:`kgrag.ingest.models.ParsedPage.headings`): the formats that mark
them (Markdown's ``#`` and underlined headings, roff's ``.SH``/``.SS``, HTML's ``<h1>``-``<h6>``
and the headings of DOCX/ODT/PPTX), a PDF page's running header (level 0: the chapter a page is
in, :mod:`kgrag.ingest.running_lines`), and otherwise numbered heading lines ("4.5. Details of
Memcheck's checking machinery": level 2, one per number) found in the text. A heading closes the
sections at its level and below; a section goes on across pages until another heading closes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from kgrag.core import Frozen
from kgrag.text.sentences import numbered_heading_spans

__all__ = [
    "CONTEXT_SEPARATOR",
    "MAX_CONTEXT_TOKENS",
    "Heading",
    "SectionPath",
    "context_text",
    "line_headings",
    "locate_headings",
    "numbered_headings",
]

#: Between the title and the headings of a chunk's context line ("Valgrind Documentation ›
#: Memcheck: a memory error detector").
CONTEXT_SEPARATOR = " › "
#: The longest context line, in the embedder's tokens. The model reads at most its
#: ``max_tokens``, so a context line pushes as many tokens off the end of a full chunk; kept
#: within the overlap of consecutive chunks (32 tokens by default), what falls off is mostly
#: read again at the start of the next chunk.
MAX_CONTEXT_TOKENS = 32


class Heading(Frozen):
    """A heading of a page: where its line starts in the page's text, its depth (1 for a
    top-level heading, 0 for a page's running header) and its text."""

    start: int
    level: int
    text: str


_LEADER = re.compile(r"(?:\.\s?){4,}")
_NUMBER = re.compile(r"^\s*(\d{1,3}(?:\.\d{1,3})*)\.?\s+")


def numbered_headings(text: str) -> tuple[Heading, ...]:
    """The numbered heading lines of ``text`` (kgrag.text.sentences' rule), each at the depth
    of its number ("4." 1, "4.5." 2, "4.5.1" 3)."""
    out = []
    for start, end in numbered_heading_spans(text):
        line = " ".join(text[start:end].split())
        if _LEADER.search(line) or line.count("(") != line.count(")"):
            continue  # a table of contents' line ("5. Cachegrind ....... 91"), a cut-off line
        number = _NUMBER.match(line)
        level = number.group(1).count(".") + 1 if number else 1
        out.append(Heading(start=start, level=level, text=line))
    return tuple(out)


def line_headings(
    parts: Sequence[str], marks: Iterable[tuple[int, int, str]], joiner: str = "\n"
) -> tuple[Heading, ...]:
    """The headings of ``joiner.join(parts)`` with its leading line breaks stripped, from
    ``marks``: (index of the heading's part, level, text)."""
    starts = []
    offset = 0
    for part in parts:
        starts.append(offset)
        offset += len(part) + len(joiner)
    lead = len(joiner.join(parts)) - len(joiner.join(parts).lstrip("\n"))
    return tuple(
        Heading(start=max(starts[i] - lead, 0), level=level, text=" ".join(text.split()))
        for i, level, text in marks
        if text.strip()
    )


def locate_headings(text: str, headings: Iterable[tuple[int, str]]) -> tuple[Heading, ...]:
    """``headings`` ((level, text), in reading order) placed on the lines of ``text`` that hold
    them, each after the one before: the line that is the heading, else the first line that
    starts with it (its words wrapped onto the next line), else the page's start (a PDF
    outline's entry whose words the page does not show as one line)."""
    lines: list[tuple[int, str]] = []
    offset = 0
    for line in text.split("\n"):
        lines.append((offset, _bare(line)))
        offset += len(line) + 1
    out = []
    at = 0  # the first line not yet used
    for level, heading in headings:
        wanted = _bare(heading)
        if not wanted:
            continue
        if level == 0:
            out.append(Heading(start=0, level=0, text=" ".join(heading.split())))
            continue
        found = next((i for i in range(at, len(lines)) if lines[i][1] == wanted), None)
        if found is None:
            found = next(
                (
                    i
                    for i in range(at, len(lines))
                    if lines[i][1]
                    and wanted.startswith(lines[i][1])
                    and len(lines[i][1]) >= len(wanted) // 2
                ),
                None,
            )
        start = lines[found][0] if found is not None else (lines[at][0] if at < len(lines) else 0)
        if found is not None:
            at = found + 1
        out.append(Heading(start=start, level=level, text=" ".join(heading.split())))
    return tuple(sorted(out, key=lambda h: h.start))


class SectionPath:
    """The open sections while a document's pages are read in order."""

    def __init__(self) -> None:
        self._open: list[Heading] = []

    def enter(self, heading: Heading) -> None:
        """``heading`` starts: it closes the open sections at its level and deeper. A running
        header (level 0) equal to the one open changes nothing (the chapter goes on)."""
        opened = self._open[0] if self._open else None
        if heading.level == 0 and opened and opened.level == 0 and _same(opened.text, heading.text):
            return
        self._open = [h for h in self._open if h.level < heading.level]
        self._open.append(heading)

    def path(self) -> tuple[str, ...]:
        """The open headings' texts, outermost first; one that repeats another (a running
        header "Memcheck: a memory error detector" and the chapter's "4. Memcheck: a memory
        error detector") once."""
        out: list[str] = []
        for h in self._open:
            if not any(_same(h.text, seen) for seen in out):
                out.append(h.text)
        return tuple(out)


def _bare(text: str) -> str:
    return " ".join(_NUMBER.sub("", text).lower().split())


def _same(a: str, b: str) -> bool:
    return _bare(a) == _bare(b)


def context_text(
    title: str,
    section: Sequence[str],
    text: str,
    count_tokens: Callable[[str], int] | None = None,
) -> str:
    """The text a chunk's vector is computed from: a line naming its document (``title``) and
    its ``section`` (outermost first), then the chunk's ``text``. A name the chunk's text
    already starts with (a passage whose first line is its title, a chunk opening on its
    section's heading) is not repeated; with no name left, ``text`` itself. The line keeps
    within :data:`MAX_CONTEXT_TOKENS` (``count_tokens``), the outer headings going first.

    A chunk outside any section (a document without headings: a passage, a note, a
    recording's segment, a table's row) is embedded as it is, title or not: measured on
    MuSiQue's folds (BENCHMARKS.md), giving the second chunk of a long passage its title
    lowered recall@2 on the folds the form was chosen on."""
    if not section:
        return text
    opening = _bare(text[:400])
    names: list[str] = []
    for name in (title, *section):
        bare = _bare(name)
        if not bare or opening.startswith(bare) or any(_same(name, n) for n in names):
            continue
        names.append(" ".join(name.split()))
    if count_tokens is not None:
        while len(names) > 1 and count_tokens(CONTEXT_SEPARATOR.join(names)) > MAX_CONTEXT_TOKENS:
            names.pop(1 if len(names) > 2 else 0)  # the title and the innermost stay longest
    if not names:
        return text
    return CONTEXT_SEPARATOR.join(names) + "\n\n" + text
