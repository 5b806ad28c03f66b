"""Contents and index lines: a table of contents' or a back-of-book index's entries, which point
at pages and say nothing themselves.

A manual's contents pages name every topic of the manual in a few lines, so they are central to
any measure over the whole text ("55 struct ccm_aes192_ctx ." summarised Nettle's manual, "2
Related work 3 3 CRC tricks and tips 4 3.1 Incremental CRC computation ." a paper on CRCs).
A contents line is one with a dot leader to a page number ("7.2.5 Camellia . . . . . 27",
"Porting ........ 1"); in a text with at least :data:`MIN_LEADER_LINES` of those, a line that
starts with a section number and ends with a page number ("2 Related work 3": top-level entries
are often set without a leader) is one too."""

from __future__ import annotations

import re

#: A dot leader (four or more dots, spaced or not) to a page number, arabic or roman.
_LEADER_TO_PAGE = re.compile(r"(?:\.\s?){4,}\s*(?:\d{1,4}|[ivxlc]{1,6})\s*$", re.IGNORECASE)
#: A section number, a title without a sentence's end, a page number.
_NUMBERED_ENTRY = re.compile(r"^\s*(?:\d{1,3}(?:\.\d{1,3})*|[A-Z])\.?\s+[^.!?]{2,80}?\s\d{1,4}\s*$")
#: Leader lines that make a text a contents or index page (one could be a ruled form's line).
MIN_LEADER_LINES = 3


def is_leader_line(line: str) -> bool:
    """Whether ``line`` is a contents or index entry with a dot leader to its page number."""
    return _LEADER_TO_PAGE.search(line) is not None


def without_contents_lines(text: str) -> str:
    """``text`` without its contents and index lines (module doc); other lines as they are."""
    lines = text.split("\n")
    leaders = [is_leader_line(line) for line in lines]
    if not any(leaders):
        return text
    contents_page = sum(leaders) >= MIN_LEADER_LINES
    kept = [
        line
        for line, leader in zip(lines, leaders, strict=True)
        if not leader and not (contents_page and _NUMBERED_ENTRY.match(line))
    ]
    return "\n".join(kept)
