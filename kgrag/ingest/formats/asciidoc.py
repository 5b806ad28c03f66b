"""AsciiDoc (.adoc, .asciidoc) read as plain text: headings, lists, tables and paragraphs keep their
words; attribute entries, comments, block delimiters and macro targets go. ``include::`` lines
are dropped, never followed. (No well-kept pure-Python AsciiDoc parser exists.)"""

from __future__ import annotations

import re

from kgrag.errors import EmptyInputError
from kgrag.ingest.decoding import decode_text
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedPage, SourceItem

_HEADING = re.compile(r"^(={1,6}|#{1,6})\s+(.+?)\s*(?:=+)?$")
_ATTRIBUTE = re.compile(r"^:!?[\w-]+!?:.*$")
_DELIMITER = re.compile(
    r"^(-{4,}|={4,}|\.{4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|\|={3,}|,={3,}|:={3,})\s*$"
)
_BLOCK_ATTRS = re.compile(r"^\[[^\]]*\]\s*$")
_DIRECTIVE = re.compile(r"^(include|ifdef|ifndef|ifeval|endif|toc)::.*$")
_BLOCK_TITLE = re.compile(r"^\.(?=\S)(?!\.)(.+)$")
_MACRO = re.compile(
    r"\b(?:image|link|xref|footnote|kbd|btn|menu|pass|icon)::?([^\[\s]*)\[([^\]]*)\]"
)
_URL_TEXT = re.compile(r"\b(https?://[^\s\[]+)\[([^\]]*)\]")
_XREF = re.compile(r"<<([^,>]+)(?:,\s*([^>]+))?>>")
_ANCHOR = re.compile(r"\[\[[^\]]*\]\]")
_EMPHASIS = re.compile(r"(?<![\w*_`])([*_`]{1,2})(?=\S)(.+?)(?<=\S)\1(?![\w*_`])")


def _inline(line: str) -> str:
    line = _MACRO.sub(lambda m: m.group(2) or m.group(1), line)
    line = _URL_TEXT.sub(lambda m: m.group(2) or m.group(1), line)
    line = _XREF.sub(lambda m: m.group(2) or m.group(1), line)
    line = _ANCHOR.sub("", line)
    return _EMPHASIS.sub(r"\2", line)


def asciidoc_text(source: str) -> tuple[str, str | None]:
    """The words of an AsciiDoc document, and its title (the level-0 heading) if it has one."""
    out: list[str] = []
    title: str | None = None
    in_comment = False
    for raw in source.replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        if line.startswith("////"):
            in_comment = not in_comment
            continue
        if in_comment or line.startswith("//"):
            continue
        if _ATTRIBUTE.match(line) or _DIRECTIVE.match(line) or _BLOCK_ATTRS.match(line):
            continue
        if _DELIMITER.match(line):
            out.append("")
            continue
        heading = _HEADING.match(line)
        if heading:
            text = _inline(heading.group(2))
            if title is None and len(heading.group(1)) == 1:
                title = text.strip()
            out.append(text)
            continue
        block_title = _BLOCK_TITLE.match(line)
        if block_title:
            out.append(_inline(block_title.group(1)))
            continue
        if line.startswith("|"):  # a table row: cells separated by ' | '
            cells = [c.strip() for c in line[1:].split("|")]
            out.append(" | ".join(_inline(c) for c in cells))
            continue
        out.append(_inline(line))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return text, title


def parse_asciidoc(item: SourceItem, data: bytes) -> ParsedContent:
    text, title = asciidoc_text(decode_text(item.path, data).text)
    if not text:
        raise EmptyInputError(
            str(item.path), "contains no text (only whitespace and AsciiDoc markup)"
        )
    return ParsedContent(title=title, pages=(ParsedPage(number=None, text=text),))


FORMAT = register(
    DocumentFormat(
        name="AsciiDoc", suffixes=(".adoc", ".asciidoc"), mime="text/asciidoc", parse=parse_asciidoc
    )
)
