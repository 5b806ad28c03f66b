"""reStructuredText (.rst, .rest) through docutils, with every directive that reads other files or
passes markup through turned off (``include``, ``raw``, ``csv-table :file:``/``:url:``).

A field (``:Number of Instances: 442``) reads as one line, "Number of Instances: 442", as the
source shows it: docutils' text puts its name and its body in paragraphs of their own, so the
name and the value it names ended up in different sentences."""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest.decoding import decode_text
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedPage, SourceItem

if TYPE_CHECKING:
    from docutils.nodes import Node

#: docutils settings: nothing read from disk or the network, no config files, never halt.
SETTINGS = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "report_level": 5,
    "halt_level": 5,
    "input_encoding": "unicode",
    "embed_stylesheet": False,
}


#: Characters of reStructuredText docutils parses in one go. docutils copies the rest of the
#: document for each list, field list and block of explicit markup it parses (its state machine
#: slices ``input_lines[offset:]``), so one parse is quadratic in the document's length (the
#: dataset notes of tests/data repeated to 8,854 lines: 1.05 million lines copied; to 17,746:
#: 4.19 million). A longer source is parsed in pieces of about this size, cut before section
#: titles (:func:`rst_pieces`); what is shorter is parsed whole, as before.
PIECE_CHARS = 64 * 1024
#: A line of one punctuation character written three times or more: a title's underline or
#: overline (docutils accepts any of these characters).
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*\n?")


#: docutils settings for a piece after the first: no document title, subtitle or information.
_PIECE_SETTINGS = {"doctitle_xform": False, "sectsubtitle_xform": False, "docinfo_xform": False}


def rst_pieces(source: str, size: int = PIECE_CHARS) -> list[str]:
    """``source`` cut into pieces of at least ``size`` characters (the last may be shorter),
    each cut made before a title in the style of the document's first (:func:`_title_style`:
    a title of the top level, so no list, table, literal block or directive is cut, and each
    piece's titles take the levels they have in the whole); joined, the pieces are ``source``.
    One piece when it is shorter than ``size`` or has no such title to cut before."""
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    top: tuple[str, bool] | None = None
    start = chars = 0
    for i, line in enumerate(lines):
        style = _title_style(lines, i)
        top = top or style
        if chars >= size and style is not None and style == top:
            out.append("".join(lines[start:i]))
            start, chars = i, 0
        chars += len(line)
    out.append("".join(lines[start:]))
    return out


def _title_style(lines: list[str], i: int) -> tuple[str, bool] | None:
    """The style (adornment character, overlined or not) of the section title starting at
    ``lines[i]``, if one does: after a blank line (or first), a line at the left margin over an
    adornment at least as long, or an overline, a title and the same line under it."""
    line = lines[i]
    if (i > 0 and lines[i - 1].strip()) or not line.strip() or line[0].isspace():
        return None
    below = lines[i + 1] if i + 1 < len(lines) else ""
    if _ADORNMENT.fullmatch(line):
        under = lines[i + 2] if i + 2 < len(lines) else ""
        overlined = bool(below.strip()) and under.strip() == line.strip()
        return (line[0], True) if overlined else None
    if _ADORNMENT.fullmatch(below) and len(below.rstrip()) >= len(line.rstrip()):
        return below[0], False
    return None


def parse_rst(item: SourceItem, data: bytes) -> ParsedContent:
    source = decode_text(item.path, data).text
    if not source.strip():
        raise EmptyInputError(str(item.path), "contains no text (only whitespace)")
    texts: list[str] = []
    title = None
    for n, piece in enumerate(rst_pieces(source)):
        text, piece_title = _read(item, piece, whole=n == 0)
        texts += [text] if text else []
        title = title or piece_title
    text = "\n\n".join(texts)
    if not text:
        raise EmptyInputError(str(item.path), "contains no text (only reStructuredText markup)")
    return ParsedContent(title=title, pages=(ParsedPage(number=None, text=text),))


def _read(item: SourceItem, source: str, *, whole: bool = True) -> tuple[str, str | None]:
    """The text of ``source`` (reStructuredText) through docutils, and its first title. A piece
    after the first (not ``whole``) starts no document: its first title is no document title
    (docutils would take it out of the text: ``doctitle_xform``), nor are its first fields the
    document's information."""
    from docutils import nodes
    from docutils.core import publish_doctree

    try:
        tree = publish_doctree(
            source,
            source_path=str(item.path),
            settings_overrides={
                **SETTINGS,
                **({} if whole else _PIECE_SETTINGS),
                "warning_stream": io.StringIO(),
            },
        )
    except Exception as e:  # docutils raises assorted errors on hostile input
        raise IngestError(
            str(item.path), f"unreadable reStructuredText: {type(e).__name__}: {e}"
        ) from e
    for message in list(tree.findall(nodes.system_message)):
        message.parent.remove(message)  # warnings about the source are not its content
    for node in list(tree.findall(nodes.comment)):
        node.parent.remove(node)
    _fields_as_lines(tree)
    text = re.sub(r"\n{3,}", "\n\n", tree.astext()).strip()
    title = None
    first = next(iter(tree.findall(nodes.title)), None)
    if first is not None:
        title = " ".join(first.astext().split())[:200] or None
    return text, title


def _fields_as_lines(tree: Node) -> None:
    """Each field of a field list as "Name: body" (its body's first paragraph on its name's line);
    so too the bibliographic fields docutils moves to the document's information (``:Version:
    2.1``, ``:Authors:``), whose names its text leaves out."""
    from docutils import nodes

    for info in list(tree.findall(nodes.docinfo)):
        lines: list[nodes.Node] = []
        for item in info.children:
            if isinstance(item, nodes.field):
                lines.append(item)
                continue
            parts = [a.astext() for a in item.findall(nodes.author)] or [item.astext()]
            value = ", ".join(" ".join(p.split()) for p in parts)
            lines.append(nodes.paragraph(text=f"{item.tagname.capitalize()}: {value}"))
        info.replace_self(lines)

    for field in list(tree.findall(nodes.field)):
        name = next(iter(field.findall(nodes.field_name)), None)
        body = next(iter(field.findall(nodes.field_body)), None)
        if name is None or body is None:
            continue
        label = " ".join(name.astext().split())
        children = list(body.children)
        if children and isinstance(children[0], nodes.paragraph):
            first = nodes.paragraph(text=f"{label}: {children[0].astext()}")
            children = children[1:]
        else:
            first = nodes.paragraph(text=f"{label}:")
        field.replace_self([first, *children])


FORMAT = register(
    DocumentFormat(
        name="reStructuredText", suffixes=(".rst", ".rest"), mime="text/x-rst", parse=parse_rst
    )
)
