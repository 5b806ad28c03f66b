"""Typed results of steps: every step returns ranked hits, never dicts of strings."""

from __future__ import annotations

import re
from typing import Any, Literal

from kgrag.core.frozen import Frozen

__all__ = ["Hit", "HitKind", "file_words", "folder_words", "name_words"]

HitKind = Literal["chunk", "segment", "image", "entity", "document"]


_SEPARATORS = re.compile(r"[\s_.+]+")


def name_words(name: str) -> str:
    """A name written as one identifier, as words: ``_``, ``.`` and ``+`` as spaces
    (``nnapi_supported_ops`` -> ``nnapi supported ops``; a hyphenated name kept)."""
    return _SEPARATORS.sub(" ", name).strip()


#: Suffixes of a compressed file, under which its own type's is (``FAQ.gz``, ``a.txt.gz``).
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst")


def file_words(uri: str | None) -> str:
    """The words of the name of the file at ``uri``, without its type's suffix (and a
    compression suffix): ``/docs/nnapi_supported_ops.md`` -> ``nnapi supported ops``."""
    name = (uri or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in _COMPRESSED:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    stem, dot, _ = name.rpartition(".")
    return name_words(stem if dot and stem else name)


def folder_words(uri: str | None) -> str:
    """The words of the name of the folder holding the file at ``uri`` (``_``, ``.`` and ``+``
    as spaces; a hyphenated name such as ``espeak-ng`` kept); empty when it has none."""
    parts = (uri or "").replace("\\", "/").rstrip("/").split("/")
    if len(parts) < 3:  # "a.txt", "/a.txt": no folder named
        return ""
    return _SEPARATORS.sub(" ", parts[-2]).strip()


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
            provenance=(step_id,) if step_id else (),
        )

    @property
    def file_name(self) -> str:
        """The last part of its document's URI, lower case (``/data/Report.PDF`` ->
        ``report.pdf``; a Windows path's too)."""
        return (self.uri or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()

    @property
    def folder(self) -> str:
        """The name of the folder holding its document's file, as words (``/docs/valgrind_news/
        a.txt`` -> ``valgrind news``): what a folder of files is about, where their own text may
        not say it. Empty when the URI has no folder."""
        return folder_words(self.uri)

    def and_copies(self) -> tuple[Hit, ...]:
        """This hit, then the copies of its passage collapsed into it (:attr:`copies`)."""
        return (self, *self.copies)

    def rescored(self, score: float, step_id: int) -> Hit:
        return self.model_copy(update={"score": score, "provenance": (*self.provenance, step_id)})
