"""What the ingestion stages hand to the graph writer: one bundle per document, fully computed
(embeddings included), so the writer only turns it into idempotent batched MERGEs."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field

from kgrag.core import Frozen
from kgrag.ingest.entities import ExtractionResult
from kgrag.ingest.file_dates import FileDates

DocModality = Literal["text", "pdf", "image", "audio"]


class ChunkRecord(Frozen):
    id: str
    text: str
    position: int
    page: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    embedding: tuple[float, ...] = Field(repr=False)
    section: tuple[str, ...] = ()
    """The headings of the section the chunk is in, outermost first (its vector was computed
    with them and the document's title: :func:`kgrag.ingest.sections.context_text`)."""
    table_id: str | None = None
    """For a table row: the :class:`TableRecord` it is a row of, and its coordinates."""
    table: int | None = None
    """1-based number of the table in its document."""
    sheet: str | None = None
    table_row: int | None = None
    """1-based row of the table, the header being row 1 (a sheet's own row number when the
    table starts at the sheet's first row, a CSV file's line number for one-line records)."""


class TableRecord(Frozen):
    """A table of a document; its rows are chunks (``ChunkRecord.table_id``)."""

    id: str
    number: int
    page: int | None = None
    sheet: str | None = None
    caption: str | None = None
    header: tuple[str, ...] = ()
    row_count: int
    column_count: int


class ImageRecord(Frozen):
    id: str
    uri: str
    width: int
    height: int
    page: int | None = None
    caption: str | None = None
    embedding: tuple[float, ...] = Field(repr=False)
    near_chunk_ids: tuple[str, ...] = ()


class DocumentBundle(Frozen):
    id: str
    uri: str
    sha256: str
    modality: DocModality
    mime: str
    title: str
    bytes: int
    acl: tuple[str, ...]
    tags: tuple[str, ...] = ()
    language: str | None = None
    summary: str | None = None
    duration_s: float | None = None
    """A recording's length in seconds."""
    dates: FileDates = FileDates()
    authors: tuple[str, ...] = ()
    """Who the document says wrote it (its own metadata), in its order."""
    segments: bool = False  # chunks are timed transcript segments
    chunks: tuple[ChunkRecord, ...] = ()
    images: tuple[ImageRecord, ...] = ()
    tables: tuple[TableRecord, ...] = ()
    extraction: ExtractionResult


def document_id(uri: str, sha256: str) -> str:
    """Deterministic id: the same file content at the same place is the same document."""
    return "doc_" + hashlib.sha256(f"{uri}\n{sha256}".encode()).hexdigest()[:20]


class AclChange(Frozen):
    """A document's ACL changed by an ingestion: who asked, when, from what to what. Recorded in
    the graph as an ``AclChange`` node linked to the document (``CHANGED_ACL_OF``) and listed in
    the job's report."""

    document_id: str
    uri: str
    old_acl: tuple[str, ...]
    new_acl: tuple[str, ...]
    actor: str | None
    """Who asked (``cli:<os user>``, the HTTP principal's id); None from the Python API when
    the caller did not say."""
    at: str
    """When (ISO 8601, UTC)."""

    @property
    def id(self) -> str:
        """Deterministic: replaying the write of the same change records it once."""
        key = "\n".join((self.document_id, self.at, ",".join(self.new_acl)))
        return "aclchg_" + hashlib.sha256(key.encode()).hexdigest()[:20]


class OtherName(Frozen):
    """A file skipped as a copy of a stored document (same content and ACL): its path is another
    name of that document (``Document.also_uris``), so what its name says finds the one stored
    copy ("the Debian logo" finds ``old copies/swirl.png`` when ``debian-logo.png`` is its copy)."""

    kept: str
    """The URI of the stored document the file is a copy of."""
    sha256: str
    path: str
    """The skipped file's path."""
