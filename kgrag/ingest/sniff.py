"""Is a file of no known type plain text? Decided from its first bytes.

A file whose extension kgrag has no reader for (source code, JSON, YAML, logs, configuration,
``README.Debian``, ``v2.13-ReleaseNotes``) is read as plain text when its first bytes are text
(UTF-8 or a legacy encoding); a binary one is an unsupported type. :data:`NOT_SNIFFED` names the
text types that are not read as text even then."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePath

from kgrag.ingest.decoding import legible

#: How much of a file is looked at.
SNIFF_BYTES = 8192
#: Name endings that are not file types: ``README.Debian``, ``changelog.Debian.amd64``,
#: ``README.source`` are text files without an extension, as far as kgrag is concerned.
NOT_EXTENSIONS = frozenset(
    {"", ".debian", ".source", ".customs", ".upstream", ".amd64", ".arm64", ".i386"}
)
#: What a file type's extension looks like: a short lower-case word (``.md``, ``.mp3``); a name
#: ending otherwise (``.Debian``, ``v2.13-ReleaseNotes``) has no extension.
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{0,7}")


#: Text types that are not read as plain text: JSONL files are manifests, read only when named
#: (kgrag.ingest.sources); an SVG drawing's text is path data and markup, a style sheet's is a web
#: page's presentation, not prose.
NOT_SNIFFED = frozenset({".jsonl", ".svg", ".css", ".ps", ".eps"})
#: How machine-made text formats begin: PostScript (a program drawing pages: its words are
#: split into drawing commands) and RTF (markup).
MACHINE_MADE_STARTS = (b"%!PS", b"{\\rtf")
#: A line longer than this in a file's first bytes marks machine-made text: minified scripts, a
#: documentation site's search index, data on one line. Prose paragraphs stay far below it.
#: Minified JSON is the exception (:func:`is_minified_json`): it is read as JSON.
MAX_LINE_CHARS = 4096
#: The largest file with a long line that is parsed whole to tell whether it is minified JSON;
#: a larger one stays machine-made text (26 of this machine's 2,083 JSON files over 4 KB have a
#: line over :data:`MAX_LINE_CHARS`, the largest 2.9 MB).
MAX_JSON_BYTES = 16 * 1024 * 1024
#: How a JSON document that is an object or an array begins (after a UTF-8 byte-order mark).
_JSON_START = re.compile(rb"^(?:\xef\xbb\xbf)?\s*[\[{]")


def may_be_text(name: PurePath) -> bool:
    """Whether a file named ``name`` of no known type is sniffed for text (see the module doc)."""
    return has_no_extension(name) or name.suffix.lower() not in NOT_SNIFFED


def has_no_extension(name: PurePath) -> bool:
    """True for ``README``, ``copyright``, ``README.Debian``, ``v2.13-ReleaseNotes``: names
    whose suffix says nothing about the file's type."""
    suffix = name.suffix
    return suffix.lower() in NOT_EXTENSIONS or not _EXTENSION.fullmatch(suffix)


def looks_like_text(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) is text as the parsers read it: UTF-8 (or a
    byte-order mark's encoding, or a legacy one: :mod:`kgrag.ingest.decoding`) without NUL and
    mostly printable, and not machine-made (no line over :data:`MAX_LINE_CHARS`, no PostScript or
    RTF header: :data:`MACHINE_MADE_STARTS`). Nothing, or
    only whitespace, is text too (the parser then skips the file as empty)."""
    return (
        legible(head)
        and not _has_long_line(head)
        and not head.lstrip().startswith(MACHINE_MADE_STARTS)
    )


def reads_as_text(head: bytes, whole: Callable[[], bytes | None]) -> bool:
    """Whether a file of no known type is read as text: :func:`looks_like_text` of its first
    bytes ``head``, or minified JSON (:func:`is_minified_json`; ``whole`` gives the file's bytes,
    or None when it is too large to parse whole)."""
    if looks_like_text(head):
        return True
    if not (_JSON_START.match(head) and legible(head) and _has_long_line(head)):
        return False
    data = whole()
    return data is not None and is_minified_json(data)


def is_minified_json(data: bytes) -> bool:
    """Whether ``data`` is a JSON object or array in UTF-8 (data written on one line, a table's
    records: read as JSON, :mod:`kgrag.ingest.json_tables`, not skipped as machine-made)."""
    if not _JSON_START.match(data[:SNIFF_BYTES]):
        return False
    try:
        json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep to read
        return False
    return True


def _has_long_line(head: bytes) -> bool:
    start = 0
    while start < len(head):
        end = head.find(b"\n", start)
        if end < 0:
            end = len(head)
        if end - start > MAX_LINE_CHARS:
            return True
        start = end + 1
    return False


def file_looks_like_text(path: Path) -> bool:
    """:func:`reads_as_text` of the file's first :data:`SNIFF_BYTES` (and of the whole file,
    for minified JSON up to :data:`MAX_JSON_BYTES`); False if unreadable."""

    def whole() -> bytes | None:
        return path.read_bytes() if path.stat().st_size <= MAX_JSON_BYTES else None

    try:
        with path.open("rb") as f:
            return reads_as_text(f.read(SNIFF_BYTES), whole)
    except OSError:
        return False


#: How an HTML document begins, after a byte-order mark, white space, an XML declaration and
#: comments: a doctype naming HTML or the ``<html>`` element.
_HTML_START = re.compile(
    rb"^(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*(?:<!doctype\s+html\b|<html\b)",
    re.IGNORECASE | re.DOTALL,
)


def is_html_document(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) starts an HTML document, whatever the file's name:
    a web page saved as ``.txt``, or with no extension, is read as HTML, not as its markup."""
    return _HTML_START.match(head[:SNIFF_BYTES]) is not None


#: The member of an OpenDocument file that names its type.
_ODF_MIMETYPE = "mimetype"
#: An OpenDocument file's ``mimetype`` member -> its extension.
_ODF_TYPES = {
    b"application/vnd.oasis.opendocument.text": ".odt",
    b"application/vnd.oasis.opendocument.spreadsheet": ".ods",
    b"application/vnd.oasis.opendocument.presentation": ".odp",
}
#: An Office Open XML file's main part -> its extension.
_OOXML_PARTS = {
    "word/document.xml": ".docx",
    "xl/workbook.xml": ".xlsx",
    "ppt/presentation.xml": ".pptx",
}


def document_suffix(data: bytes) -> str | None:
    """The extension of the document format ``data`` is written in, from its bytes: ``.pdf``
    (a ``%PDF-`` header), an OpenDocument file (its ``mimetype`` member), an Office Open XML
    file (its main part); None for anything else. A spreadsheet saved under a ``.csv`` name, a
    PDF as ``.txt``: read as what they are, not refused as text that is not UTF-8."""
    if data.startswith(b"%PDF-"):
        return ".pdf"
    if not data.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if _ODF_MIMETYPE in names:
                return _ODF_TYPES.get(archive.read(_ODF_MIMETYPE).strip())
    except (zipfile.BadZipFile, OSError, KeyError, RuntimeError, NotImplementedError):
        return None
    return next((ext for part, ext in _OOXML_PARTS.items() if part in names), None)
