"""Typed results of steps: every step returns ranked hits, never dicts of strings."""

from __future__ import annotations

from typing import Any, Literal

from kgrag.core.frozen import Frozen

__all__ = ["Hit", "HitKind"]

HitKind = Literal["chunk", "segment", "image", "entity", "document"]


class Hit(Frozen):
    """One piece of evidence a step returned."""

    id: str
    kind: HitKind
    score: float
    text: str | None = None
    document_id: str | None = None
    title: str | None = None
    uri: str | None = None
    image_uri: str | None = None
    page: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    table: int | None = None
    """A table row's table (1-based in its document), sheet and row (the header is row 1)."""
    sheet: str | None = None
    row: int | None = None
    section: tuple[str, ...] = ()
    """The headings of the section a chunk is in, outermost first (kgrag.ingest.sections);
    empty for a chunk outside any, or stored before chunks knew their section."""
    authors: tuple[str, ...] = ()
    """For a document: who its own metadata says wrote it (kgrag.ingest.file_authors)."""
    provenance: tuple[int, ...] = ()  # the steps that produced or carried this hit
    copies: tuple[Hit, ...] = ()
    """The copies of this passage in other files that a fusion collapsed into it (the same
    text as HTML and PDF, kgrag.executor.duplicates), best-ranked first: they take no slot of
    the ranking, and an answer may quote or cite them."""

    @classmethod
    def from_row(cls, row: dict[str, Any], kind: str | None = None, step_id: int = 0) -> Hit:
        k = kind or row.get("kind") or "chunk"
        if k == "chunk" and row.get("start_s") is not None:
            k = "segment"
        return cls(
            id=str(row["id"]),
            kind=k,
            score=float(row.get("score") or 0.0),
            text=row.get("text"),
            document_id=row.get("document_id"),
            title=row.get("title"),
            uri=row.get("uri"),
            image_uri=row.get("image_uri"),
            page=row.get("page"),
            start_s=row.get("start_s"),
            end_s=row.get("end_s"),
            table=row.get("table_number"),
            sheet=row.get("sheet"),
            row=row.get("table_row"),
            section=tuple(row.get("section") or ()),
            authors=tuple(row.get("authors") or ()),
            provenance=(step_id,) if step_id else (),
        )

    @property
    def file_name(self) -> str:
        """The last part of its document's URI, lower case (``/data/Report.PDF`` ->
        ``report.pdf``; a Windows path's too)."""
        return (self.uri or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()

    def and_copies(self) -> tuple[Hit, ...]:
        """This hit, then the copies of its passage collapsed into it (:attr:`copies`)."""
        return (self, *self.copies)

    def rescored(self, score: float, step_id: int) -> Hit:
        return self.model_copy(update={"score": score, "provenance": (*self.provenance, step_id)})
