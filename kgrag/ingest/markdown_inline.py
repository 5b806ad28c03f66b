"""Markdown's inline markup taken off a line, its words kept: code spans (their content kept
literally, without the backticks), backslash escapes (the character without its backslash),
images (their alt text), links (their text; a link's address may hold balanced parentheses),
reference links, autolinks (the address), strong and emphasised
text and strikethrough. One function for every reader of Markdown: a paragraph or heading
(:func:`kgrag.ingest.parsers.markdown_text`) and a pipe table's cell
(:mod:`kgrag.ingest.markdown_tables`)."""

from __future__ import annotations

import re

__all__ = ["inline_text"]

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDER = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
#: A code span (its content literal) or a backslash escape (CommonMark: a backslash before ASCII
#: punctuation makes it that character, no markup: ``node\_exporter``, ``\*NIX``, ``\|``), in
#: one pattern so that a backslash inside a code span stays a backslash.
_CODE_OR_ESCAPE = re.compile(r"(`+)(.+?)\1|\\([!-/:-@\[-`{-~])")


#: The first of the characters (Unicode's supplementary private use area) that stand for a code
#: span or an escaped character while the other markup is taken off: not a word character, so no
#: pattern reads into one.
_HELD = 0xF0000
_HOLDABLE = 0x10FFFF - _HELD


def inline_text(line: str) -> str:
    """``line`` without its inline markup (see the module)."""
    # code spans and escapes first: a code span's content is literal, kept as written without
    # the backticks, and an escaped character is that character without its backslash; both
    # are set aside while the rest goes, so that "`__init__`" and "\*NIX" are not emphasis
    held: list[str] = []
    if not any(ord(c) >= _HELD for c in line):

        def literal(m: re.Match[str]) -> str:
            return m.group(3) if m.group(3) is not None else str(m.group(2).strip())

        def hold(m: re.Match[str]) -> str:
            if len(held) >= _HOLDABLE:  # more spans on one line than characters to hold them
                return literal(m)
            held.append(literal(m))
            return chr(_HELD + len(held) - 1)

        line = _CODE_OR_ESCAPE.sub(hold, line)
    line = _markup_off(line)
    return "".join(held[ord(c) - _HELD] if ord(c) >= _HELD else c for c in line) if held else line


def _markup_off(line: str) -> str:
    line = _IMAGE.sub(r"\1", line)
    line = _LINK.sub(r"\1", line)
    line = _REF_LINK.sub(r"\1", line)
    line = _AUTOLINK.sub(r"\1", line)
    line = _STRONG.sub(r"\2", line)
    line = _EM_STAR.sub(r"\1", line)
    line = _EM_UNDER.sub(r"\1", line)
    return _STRIKE.sub(r"\1", line)
