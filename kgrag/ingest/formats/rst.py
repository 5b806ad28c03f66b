"""reStructuredText (.rst, .rest) through docutils, with every directive that reads other files or
passes markup through turned off (``include``, ``raw``, ``csv-table :file:``/``:url:``)."""

from __future__ import annotations

import io
import re

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest.decoding import decode_text
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedPage, SourceItem

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
    text = re.sub(r"\n{3,}", "\n\n", tree.astext()).strip()
    if not text:
        raise EmptyInputError(str(item.path), "contains no text (only reStructuredText markup)")
    title = None
    first = next(iter(tree.findall(nodes.title)), None)
    if first is not None:
        title = " ".join(first.astext().split())[:200] or None
    return ParsedContent(title=title, pages=(ParsedPage(number=None, text=text),))


FORMAT = register(
    DocumentFormat(
        name="reStructuredText", suffixes=(".rst", ".rest"), mime="text/x-rst", parse=parse_rst
    )
)
