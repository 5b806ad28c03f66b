"""Sentence splitting.

:func:`sentence_spans` is the careful splitter (abbreviations such as "e.g." or "Dr.", initials
and decimals do not end a sentence; a blank line and a list item's line always do) that chunking
and the answer checks use; :func:`sentence_texts` gives its sentences as tidy strings.
:func:`simple_sentences` is the plain one that summaries are built from (a full stop, ! or ?
followed by a space and a capital or digit): it is kept apart because stored summaries depend
on it.
"""

from __future__ import annotations

import re

from kgrag.text.abbreviations import NUMBERED_ABBREVIATIONS, SENTENCE_ABBREVIATIONS

__all__ = [
    "is_numbered_heading",
    "numbered_heading_spans",
    "sentence_spans",
    "sentence_texts",
    "simple_sentences",
]

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# terminal punctuation and any closing quotes/brackets, followed by whitespace; CJK full stops
# end a sentence without a following space
_CANDIDATE = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s)|[。！？]+[」』”’）]*")
_OPENERS = "\"'“‘«([{"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences of ``text``, whitespace trimmed, in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    for brk in _PARAGRAPH_BREAK.finditer(text):
        _paragraph_sentences(text, start, brk.start(), spans)
        start = brk.end()
    _paragraph_sentences(text, start, len(text), spans)
    return spans


#: A line that starts a bulleted list item ("- fix ...", "* ...", "• ..."): the item is a
#: sentence of its own even without a full stop before it (changelogs, release notes, README
#: lists: one item ran into the next, a whole changelog release as one "sentence"). Numbered
#: steps ("1) open", "2) click") are a sequence and stay together up to a full stop.
_LIST_ITEM = re.compile(r"\n[ \t]*[-*+•][ \t]+(?=\S)")
#: A line that starts with a term and a colon ("sponge: soak up standard input ...", "Files:
#: debian/*"): in a paragraph with two or more such lines (a definition list, a header's
#: fields), each starts a sentence; a tool's description ran into all the others before. A lone
#: "Note: ..." line stays in its sentence.
_DEFINITION = re.compile(r"\n[ \t]*[\w][\w.+-]*:[ \t]+(?=\S)")


#: A numbered section heading on a line of its own ("4.5. Details of Memcheck's checking
#: machinery", "3.2 Results", "2. Installation"): a section number, a capital, at most
#: NUMBERED_HEADING_WORDS words and no closing punctuation. PDF text and plain-text manuals
#: put it on the line before the section's first sentence, and nothing but the line break
#: separates the two.
_NUMBERED_HEADING = re.compile(
    r"^[ \t]*\d{1,3}(?:\.\d{1,3})*\.?[ \t]+[A-Z][^\n]*?(?<![.!?:;,])[ \t]*$", re.MULTILINE
)
NUMBERED_HEADING_WORDS = 10


def is_numbered_heading(line: str) -> bool:
    """Whether ``line`` is a numbered section heading ("4.5.1. Valid-value (V) bits")."""
    return (
        _NUMBERED_HEADING.fullmatch(line) is not None
        and len(line.split()) - 1 <= NUMBERED_HEADING_WORDS
    )


def numbered_heading_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the numbered heading lines of ``text`` (the lines that end a
    sentence in :func:`sentence_spans`), in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    for brk in _PARAGRAPH_BREAK.finditer(text):
        spans += _heading_lines(text, start, brk.start())
        start = brk.end()
    return spans + _heading_lines(text, start, len(text))


def _heading_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the numbered heading lines in ``text[start:end]`` that the next line does not
    continue (it starts with a capital, a digit or a list mark, or the paragraph ends)."""
    spans = []
    for m in _NUMBERED_HEADING.finditer(text, start, end):
        if not is_numbered_heading(m.group()):
            continue
        n = m.end()
        while n < end and text[n].isspace():
            n += 1
        if n >= end or not text[n].islower():
            spans.append((m.start(), m.end()))
    return spans


def _paragraph_sentences(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    sentence_start = start
    headings = _heading_lines(text, start, end)
    ends = [
        m.end()
        for m in _CANDIDATE.finditer(text, start, end)
        if _is_boundary(text, m.start(), m.end(), end, m.group())
        and not any(a < m.end() < b for a, b in headings)  # "4.5." of "4.5. Details of ..."
    ]
    ends += [m.start() for m in _LIST_ITEM.finditer(text, start, end)]
    ends += [edge for span in headings for edge in span]
    definitions = [m.start() for m in _DEFINITION.finditer(text, start - 1 if start else 0, end)]
    if len(definitions) >= 2:
        ends += definitions
    for boundary in sorted(set(ends)):
        if boundary > sentence_start:
            _emit(text, sentence_start, boundary, out)
            sentence_start = boundary
    _emit(text, sentence_start, end, out)


def _is_boundary(text: str, punct_start: int, punct_end: int, limit: int, punct: str) -> bool:
    if punct[0] in "。！？":
        return True
    n = punct_end
    while n < limit and text[n].isspace():
        n += 1
    if n >= limit:
        return True
    if text[n].islower():  # "e.g. the", "Yahoo! is", "wait... then"
        return False
    if "!" in punct or "?" in punct or "…" in punct or punct.startswith(".."):
        return True
    # a single period: look at the word in front of it
    w = punct_start
    while w > 0 and not text[w - 1].isspace():
        w -= 1
    word = text[w:punct_start].lstrip(_OPENERS)
    if not word:
        return True
    lower = word.lower()
    if lower in SENTENCE_ABBREVIATIONS:
        return False
    if lower in NUMBERED_ABBREVIATIONS and text[n].isdigit():
        return False
    if len(word) == 1 and word.isalpha() and word.isupper():  # an initial: "J. R. Tolkien"
        return False
    if word.isdigit() and len(word) <= 3 and _starts_line(text, w):  # "2. Open the valve"
        return False
    if "." in word:  # "e.g", "i.e", "U.S", "Ph.D"
        parts = word.split(".")
        if all(p.isalpha() and len(p) <= 3 for p in parts if p):
            return False
    return True


def _starts_line(text: str, i: int) -> bool:
    """Is ``text[i]`` the first character of its line but for indentation?"""
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    return i == 0 or text[i - 1] == "\n"


def _emit(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        out.append((start, end))


def sentence_texts(text: str, *, min_chars: int = 12) -> list[str]:
    """The sentences of ``text`` with whitespace collapsed, short fragments dropped."""
    out = []
    for start, end in sentence_spans(text):
        sentence = re.sub(r"\s+", " ", text[start:end]).strip()
        if len(sentence) >= min_chars:
            out.append(sentence)
    return out


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_SPACE = re.compile(r"\s+")


def simple_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (a full stop, ! or ? followed by space and a capital or digit)."""
    text = _SPACE.sub(" ", text).strip()
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()] if text else []
