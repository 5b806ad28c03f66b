"""Sentence-aware chunking of page text, sized in the embedder's tokens.

Sentences are found by :func:`kgrag.text.sentences.sentence_spans` (abbreviations such as "e.g."
or "Dr.", initials and decimals do not end a sentence; a blank line always does). They are packed
into chunks of at most ``max_tokens``; consecutive chunks of a page share whole trailing sentences
up to ``overlap_tokens``. A chunk never spans two pages, nor two of a FAQ's questions
(:mod:`kgrag.ingest.faq`: each question starts a chunk), and a sentence longer than ``max_tokens``
is cut between words (a single over-long "word" between characters). ``count_tokens`` is called
once per sentence (and once per word of an over-long sentence), never per candidate chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from kgrag.ingest.faq import faq_headings
from kgrag.ingest.models import ParsedPage, TextChunk
from kgrag.ingest.sections import Heading, SectionPath, numbered_headings
from kgrag.text.sentences import sentence_spans

__all__ = ["chunk_text"]

_WORD = re.compile(r"\S+")


class _Unit(NamedTuple):
    start: int
    end: int
    tokens: int


def chunk_text(
    pages: Sequence[ParsedPage],
    count_tokens: Callable[[str], int],
    max_tokens: int,
    overlap_tokens: int,
) -> list[TextChunk]:
    """Cut ``pages`` into chunks of whole sentences, each at most ``max_tokens`` tokens.

    ``count_tokens`` should count a text's tokens without special tokens (a chunk's size is the
    sum of its sentences' counts). Consecutive chunks of one page repeat whole trailing sentences
    of the previous chunk, up to ``overlap_tokens``. Positions run 0..n-1 across all pages;
    ``pages[k].text[chunk.start_char:chunk.end_char] == chunk.text``; ``chunk.section`` is the
    section it starts in (:mod:`kgrag.ingest.sections`). Deterministic.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError(
            f"overlap_tokens must be in [0, max_tokens), got {overlap_tokens} with "
            f"max_tokens {max_tokens}"
        )
    chunks: list[TextChunk] = []
    sections = SectionPath()
    marked = any(h.level > 0 for page in pages for h in page.headings)
    for page in pages:
        text = page.text
        headings, questions = _page_headings(page, marked)
        units: list[_Unit] = []
        for start, end in sentence_spans(text):
            tokens = count_tokens(text[start:end])
            if tokens <= max_tokens:
                units.append(_Unit(start, end, tokens))
            else:
                units.extend(_split_long(text, start, end, count_tokens, max_tokens))
        h = 0
        for start, end in _pack_each(units, questions, max_tokens, overlap_tokens):
            while h < len(headings) and headings[h].start <= start:
                sections.enter(headings[h])
                h += 1
            chunks.append(
                TextChunk(
                    position=len(chunks),
                    text=text[start:end],
                    page=page.number,
                    start_char=start,
                    end_char=end,
                    section=sections.path(),
                )
            )
        for heading in headings[h:]:  # a page's last headings open the next page's sections
            sections.enter(heading)
    return chunks


def _page_headings(page: ParsedPage, marked: bool) -> tuple[list[Heading], list[int]]:
    """The page's headings in order: those its format marks (``marked``: the document's format
    marks some), else a FAQ's questions (:func:`~kgrag.ingest.faq.faq_headings`), else its
    numbered heading lines; a PDF page's running header (level 0) first. With them, where the
    FAQ's questions start: each starts a chunk."""
    questions = () if marked else faq_headings(page.text)
    found: Sequence[Heading]
    if marked:
        found = [h for h in page.headings if h.level > 0]
    else:
        found = questions or numbered_headings(page.text)
    headings = sorted(
        [h for h in page.headings if h.level == 0] + list(found), key=lambda h: h.start
    )
    return headings, [q.start for q in questions]


def _pack_each(
    units: Sequence[_Unit], breaks: Sequence[int], max_tokens: int, overlap_tokens: int
) -> list[tuple[int, int]]:
    """:func:`_pack` of the units between consecutive ``breaks`` (character offsets), each
    run on its own: no chunk, and no overlap, crosses a break."""
    if not breaks:
        return _pack(units, max_tokens, overlap_tokens)
    groups: list[list[_Unit]] = [[]]
    edges = iter(sorted(breaks))
    edge = next(edges, None)
    for unit in units:
        if edge is not None and unit.start >= edge:
            groups.append([])
            while edge is not None and unit.start >= edge:
                edge = next(edges, None)
        groups[-1].append(unit)
    return [span for group in groups if group for span in _pack(group, max_tokens, overlap_tokens)]


def _pack(units: Sequence[_Unit], max_tokens: int, overlap_tokens: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    n = len(units)
    i = 0
    while i < n:
        j = i + 1  # every unit fits on its own
        total = units[i].tokens
        while j < n and total + units[j].tokens <= max_tokens:
            total += units[j].tokens
            j += 1
        spans.append((units[i].start, units[j - 1].end))
        if j >= n:
            break
        # the next chunk restarts at trailing sentences of this one, but always advances
        k, overlap = j, 0
        while k - 1 > i and overlap + units[k - 1].tokens <= overlap_tokens:
            k -= 1
            overlap += units[k].tokens
        while k < j and overlap + units[j].tokens > max_tokens:
            overlap -= units[k].tokens
            k += 1
        i = k
    return spans


def _split_long(
    text: str,
    start: int,
    end: int,
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> list[_Unit]:
    """Cut one over-long sentence into pieces of whole words, each within ``max_tokens``."""
    words: list[_Unit] = []
    for m in _WORD.finditer(text, start, end):
        tokens = count_tokens(m.group())
        if tokens <= max_tokens:
            words.append(_Unit(m.start(), m.end(), tokens))
        else:
            words.extend(_split_word(text, m.start(), m.end(), tokens, count_tokens, max_tokens))
    pieces: list[_Unit] = []
    piece_start, piece_end, piece_tokens = words[0]
    for word in words[1:]:
        if piece_tokens + word.tokens <= max_tokens:
            piece_end = word.end
            piece_tokens += word.tokens
        else:
            pieces.append(_Unit(piece_start, piece_end, piece_tokens))
            piece_start, piece_end, piece_tokens = word
    pieces.append(_Unit(piece_start, piece_end, piece_tokens))
    return pieces


def _split_word(
    text: str,
    start: int,
    end: int,
    tokens: int,
    count_tokens: Callable[[str], int],
    max_tokens: int,
) -> list[_Unit]:
    """Cut a "word" longer than ``max_tokens`` (a URL, a base64 blob) between characters."""
    out: list[_Unit] = []
    s = start
    while s < end:
        size = max(1, (end - s) * max_tokens // max(tokens, 1))
        size = min(size, end - s)
        piece_tokens = count_tokens(text[s : s + size])
        while size > 1 and piece_tokens > max_tokens:
            size = max(1, size * 9 // 10)
            piece_tokens = count_tokens(text[s : s + size])
        out.append(_Unit(s, s + size, piece_tokens))
        s += size
        if s < end:
            tokens = count_tokens(text[s:end])
            if tokens <= max_tokens:
                out.append(_Unit(s, end, tokens))
                break
    return out
