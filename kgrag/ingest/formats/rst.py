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


def parse_rst(item: SourceItem, data: bytes) -> ParsedContent:
    from docutils import nodes
    from docutils.core import publish_doctree

    source = decode_text(item.path, data).text
    if not source.strip():
        raise EmptyInputError(str(item.path), "contains no text (only whitespace)")
    try:
        tree = publish_doctree(
            source,
            source_path=str(item.path),
            settings_overrides={**SETTINGS, "warning_stream": io.StringIO()},
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
    if not text:
        raise EmptyInputError(str(item.path), "contains no text (only reStructuredText markup)")
    title = None
    first = next(iter(tree.findall(nodes.title)), None)
    if first is not None:
        title = " ".join(first.astext().split())[:200] or None
    return ParsedContent(title=title, pages=(ParsedPage(number=None, text=text),))


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
