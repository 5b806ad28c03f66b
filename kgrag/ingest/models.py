"""Frozen models passed between the ingestion stages (sources -> parser -> chunker)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from kgrag.acl import AclEntry
from kgrag.core import Frozen
from kgrag.ingest.file_dates import FileDates
from kgrag.ingest.sections import Heading

Modality = Literal["text", "pdf", "image", "audio"]


class SourceItem(Frozen):
    """One input file to ingest, with what the user said about it (manifest title, ACL, tags)."""

    path: Path
    """Absolute, resolved path of the file."""
    title: str | None = None
    """Title given in a manifest; it wins over any title found in the file."""
    acl: tuple[AclEntry, ...] = ()
    """Principals allowed to read the document (kgrag.acl); empty means public."""
    tags: tuple[str, ...] = ()
    modality: Modality
    mime: str


#: Why a file met in a folder or glob was not ingested (an input the user named and that cannot
#: be ingested is a failure instead): its type is not one kgrag reads, it is a JSONL file (read as
#: a manifest only when named), it cannot be read as a regular file, it matches an ``--exclude``
#: glob or no ``--include`` glob, it is unchanged since it was ingested (same content, same ACL),
#: it is empty (0 bytes or only whitespace), or it has the content of a file already ingested
#: under another path with the same ACL (``duplicate``: the detail names that path).
SkipKind = Literal[
    "unsupported_type",
    "manifest_not_named",
    "unreadable",
    "excluded",
    "not_included",
    "unchanged",
    "empty",
    "duplicate",
]

#: How a document found inside another is linked to it: an archive's (or mailbox's) member is
#: ``CONTAINED_IN`` it, an e-mail attachment is ``ATTACHED_TO`` its message.
ParentRelation = Literal["CONTAINED_IN", "ATTACHED_TO"]


class UnsupportedInput(Frozen):
    """An input that was not turned into a :class:`SourceItem`, and why."""

    path: str
    """The path as the user wrote it (or as resolved, for files found in folders)."""
    reason: str
    explicit: bool = True
    """True when the user named this input (argument or manifest line); False for a file met
    while walking a folder or matching a glob (callers count those as skipped)."""
    kind: SkipKind = "unsupported_type"
    """Why a file that was not named is skipped (used when ``explicit`` is False)."""


class ExpandedInputs(Frozen):
    """What :func:`kgrag.ingest.sources.expand_inputs` found: items to parse, inputs refused."""

    items: tuple[SourceItem, ...] = ()
    rejected: tuple[UnsupportedInput, ...] = ()


class ParsedPage(Frozen):
    """Text of one page (PDF: 1-based page number) or of a whole text file (number None)."""

    number: int | None = None
    text: str
    headings: tuple[Heading, ...] = ()
    """The headings the format marks on this page, in order (:mod:`kgrag.ingest.sections`);
    empty when it marks none (numbered heading lines are then found in the text)."""


class ParsedImage(Frozen):
    """An image: a file of its own (``path``) or embedded in a PDF (``data``, ``page``)."""

    path: Path | None = None
    data: bytes | None = Field(default=None, repr=False)
    page: int | None = None
    width: int
    height: int
    caption: str | None = None


class ParsedTable(Frozen):
    """A table as data: its cells, where it sits, and how to cite it."""

    index: int  # 0-based order of the table in its document
    page: int | None = None  # 1-based page or slide it is on; None when unpaged
    sheet: str | None = None  # spreadsheet sheet name
    caption: str | None = None
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


class ParentLink(Frozen):
    """The document a member of a container belongs to (by its source URI), and how."""

    uri: str
    relation: ParentRelation


class ParsedDocument(Frozen):
    """One parsed input. Audio has no pages and no images: transcription happens elsewhere.

    A member of an archive or an e-mail attachment has ``source.path`` ``container!member``
    (never a file on disk) and its ``parent``; a container's own document has ``container``
    True (its members, stored earlier and absent now, are removed when it changes)."""

    source: SourceItem
    sha256: str
    bytes: int
    title: str
    pages: tuple[ParsedPage, ...] = ()
    images: tuple[ParsedImage, ...] = ()
    tables: tuple[ParsedTable, ...] = ()
    parent: ParentLink | None = None
    container: bool = False
    dates: FileDates = FileDates()
    """When the file says it was made and changed (:mod:`kgrag.ingest.file_dates`)."""
    authors: tuple[str, ...] = ()
    """Who the file says wrote it (:mod:`kgrag.ingest.file_authors`; a message: its sender)."""


class ParsedInputs(Frozen):
    """What one input yielded: its documents (a container's own first, then its members), and
    the inputs or members refused (``explicit`` True: a failure; else a skip of ``kind``)."""

    documents: tuple[ParsedDocument, ...] = ()
    refused: tuple[UnsupportedInput, ...] = ()


class TextChunk(Frozen):
    """A piece of one page's text: ``page_text[start_char:end_char] == text``."""

    position: int
    text: str
    page: int | None = None
    start_char: int
    end_char: int
    section: tuple[str, ...] = ()
    """The headings of the section the chunk starts in, outermost first
    (:mod:`kgrag.ingest.sections`)."""
