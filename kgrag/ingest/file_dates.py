"""When a file says it was made and changed, read at ingestion: the file system's modification
time, a PDF's creation and modification dates (its document information dictionary, read with
pypdf, the library that parses it) and an Office Open XML document's core properties
(``docProps/core.xml``: ``dcterms:created`` and ``dcterms:modified``). Stored on the Document
(``file_modified_at``, ``content_created_at``, ``content_modified_at``) and reported by the
``document_dates`` tool. A date that cannot be read is left out; nothing here fails a file."""

from __future__ import annotations

import io
import logging
import warnings
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from kgrag.core import Frozen

__all__ = ["FileDates", "file_dates"]

logger = logging.getLogger(__name__)

_OOXML_SUFFIXES = frozenset({".docx", ".xlsx", ".pptx", ".docm", ".xlsm", ".pptm"})
_DCTERMS = "http://purl.org/dc/terms/"
_MAX_CORE_BYTES = 1_000_000


class FileDates(Frozen):
    """ISO 8601 times (UTC when the source gives a zone); ``None`` when not known."""

    file_modified_at: str | None = None
    """The file's modification time on the file system when it was ingested (UTC)."""
    content_created_at: str | None = None
    """The creation date the document's own metadata gives (PDF, Office core properties)."""
    content_modified_at: str | None = None
    """The modification date the document's own metadata gives."""


def file_dates(path: Path, data: bytes, *, suffix: str, on_disk: bool) -> FileDates:
    """The dates of the file at ``path`` whose content is ``data`` and whose name ends with
    ``suffix``; ``on_disk`` False for a member of an archive or a message (no file system time
    of its own)."""
    modified = _file_mtime(path) if on_disk else None
    created, changed = None, None
    if data[:1024].find(b"%PDF-") >= 0:
        created, changed = _pdf_dates(data)
    elif suffix in _OOXML_SUFFIXES:
        created, changed = _core_dates(data)
    return FileDates(
        file_modified_at=modified, content_created_at=created, content_modified_at=changed
    )


def _iso(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.replace(microsecond=0).isoformat()


def _file_mtime(path: Path) -> str | None:
    try:
        return _iso(datetime.fromtimestamp(path.stat().st_mtime, UTC))
    except (OSError, ValueError, OverflowError):
        return None


def _pdf_dates(data: bytes) -> tuple[str | None, str | None]:
    import pypdf

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            meta = pypdf.PdfReader(io.BytesIO(data), strict=False).metadata
            if meta is None:
                return None, None
            return _pdf_date(meta, "creation_date"), _pdf_date(meta, "modification_date")
    except Exception as e:  # pypdf raises assorted errors on damaged files: no dates, no failure
        logger.debug("no PDF dates: %s: %s", type(e).__name__, e)
        return None, None


def _pdf_date(meta: object, name: str) -> str | None:
    try:
        value = getattr(meta, name)
    except Exception:  # a malformed date string
        return None
    return _iso(value) if isinstance(value, datetime) else None


def _core_dates(data: bytes) -> tuple[str | None, str | None]:
    from lxml import etree

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            info = package.getinfo("docProps/core.xml")
            if info.file_size > _MAX_CORE_BYTES:
                return None, None
            root = etree.fromstring(package.read(info), etree.XMLParser(resolve_entities=False))
    except (zipfile.BadZipFile, KeyError, OSError, etree.XMLSyntaxError):
        return None, None
    return _core_date(root, "created"), _core_date(root, "modified")


def _core_date(root: object, name: str) -> str | None:
    found = root.find(f"{{{_DCTERMS}}}{name}")  # type: ignore[attr-defined]
    text = (found.text or "").strip() if found is not None else ""
    try:
        return _iso(datetime.fromisoformat(text.replace("Z", "+00:00"))) if text else None
    except ValueError:
        return None
