"""Document formats beyond plain text, Markdown, PDF, spreadsheets, images and audio.

Each module here parses one family of files from bytes into pages and tables and registers a
:class:`~kgrag.ingest.formats.registry.DocumentFormat` for its suffixes. :mod:`kgrag.ingest.sources`
accepts every registered suffix, and :func:`kgrag.ingest.parsers.parse` hands such a file's bytes
to its format. Importing this package registers all of them.
"""

from __future__ import annotations

# format modules register themselves when imported; keep one import per line, sorted
from kgrag.ingest.formats import asciidoc as asciidoc
from kgrag.ingest.formats import docx as docx
from kgrag.ingest.formats import epub as epub
from kgrag.ingest.formats import html as html
from kgrag.ingest.formats import libreoffice as libreoffice
from kgrag.ingest.formats import notebook as notebook
from kgrag.ingest.formats import odt as odt
from kgrag.ingest.formats import pptx as pptx
from kgrag.ingest.formats import rst as rst
from kgrag.ingest.formats import rtf as rtf
from kgrag.ingest.formats import svg as svg
from kgrag.ingest.formats.registry import (
    DocumentFormat,
    ParsedContent,
    for_suffix,
    register,
    registered,
)

__all__ = ["DocumentFormat", "ParsedContent", "for_suffix", "register", "registered"]
