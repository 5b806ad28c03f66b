"""Rich Text Format (.rtf): the text of a document saved by a word processor (WordPad, TextEdit,
Word, LibreOffice) through ``striprtf``, in the code page the document declares (``\\ansicpg``;
Windows-1252 when it declares none). Table rows are lines of cells separated by ``|``.

Read as plain text, an RTF file was its markup: font tables, colour tables and control words.
"""

from __future__ import annotations

import codecs
import re

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest.formats._common import require, title_text
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedPage, SourceItem

_CODE_PAGE = re.compile(rb"\\ansicpg(\d{3,5})")


def parse_rtf(item: SourceItem, data: bytes) -> ParsedContent:
    path = item.path
    if not data.lstrip().startswith(b"{\\rtf"):
        raise IngestError(str(path), "not an RTF document: it does not start with {\\rtf")
    striprtf = require(path, "striprtf.striprtf", "striprtf")
    found = _CODE_PAGE.search(data[:4096])
    encoding = f"cp{found.group(1).decode()}" if found else "cp1252"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "cp1252"
    try:  # RTF is 7-bit text: bytes beyond it are kept as Latin-1, escapes decoded by striprtf
        text = striprtf.rtf_to_text(data.decode("latin-1"), encoding=encoding, errors="replace")
    except Exception as e:  # striprtf raises assorted errors on damaged input
        raise IngestError(str(path), f"unreadable RTF: {type(e).__name__}: {e}") from e
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.replace("\r", "\n").split("\n")]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if not body:
        raise EmptyInputError(str(path), "contains no text (only RTF markup)")
    title = title_text(next(line for line in lines if line))
    return ParsedContent(title=title, pages=(ParsedPage(number=None, text=body),))


FORMAT = register(
    DocumentFormat(name="RTF", suffixes=(".rtf",), mime="application/rtf", parse=parse_rtf)
)
