"""Underlined headings of plain text files: a line over a line of ``=``, ``-`` or ``~`` (also
``^``, ``*``) of about its length, as READMEs, NEWS and INSTALL files write them::

    Installation
    ============

Markdown and reStructuredText read these as headings (:func:`kgrag.ingest.parsers.markdown_text`,
docutils); a ``.txt`` or extension-less README was read as flat text, so its chunks had no
section (:mod:`kgrag.ingest.sections`) and a question naming a section did not find its text.
The rule line goes (it is not a word), the heading line stays. As in reStructuredText, a style
(the rule's character, with or without an overline) is a level in the order the file first uses
it.
"""

from __future__ import annotations

import re

from kgrag.ingest.sections import Heading, line_headings

__all__ = ["MAX_HEADING_CHARS", "underlined_headings"]

#: A heading line is at most this long (a longer line over a rule is a paragraph's).
MAX_HEADING_CHARS = 100

_RULE = re.compile(r"^ {0,3}([=\-~^*])\1+[ \t]*$")
_WORD = re.compile(r"[^\W_]")


def _about_as_long(rule: str, title: str) -> bool:
    return abs(len(rule) - len(title)) <= max(2, len(title) // 4)


def underlined_headings(text: str) -> tuple[str, tuple[Heading, ...]]:
    """``text`` with the rules of its underlined headings blanked (their lines kept) and its
    leading line breaks stripped, and those headings (:func:`~kgrag.ingest.sections.
    line_headings`: placed on that text)."""
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    marks: list[tuple[int, int, str]] = []
    for i in range(len(lines) - 1):
        title, rule = lines[i].strip(), _RULE.match(lines[i + 1])
        if (
            rule is None
            or not title
            or len(title) > MAX_HEADING_CHARS
            or lines[i].startswith("    ")
            or not _WORD.search(title)
            or _RULE.match(lines[i])
            or not _about_as_long(lines[i + 1].strip(), title)
        ):
            continue
        over = i > 0 and lines[i - 1].strip() == lines[i + 1].strip()
        if i > 0 and not over and lines[i - 1].strip():
            continue  # the last line of a paragraph over a rule
        style = (rule.group(1), over)
        if style not in styles:
            styles.append(style)
        marks.append((i, styles.index(style) + 1, title))
        lines[i + 1] = ""
        if over:
            lines[i - 1] = ""
    if not marks:
        return text, ()
    return "\n".join(lines).strip("\n"), line_headings(lines, marks)
