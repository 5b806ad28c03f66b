"""Handlers of the document tools: ``list_documents``, ``document_summary``, ``metadata_search``,
``document_types`` (how many documents of each type), ``document_dates`` (when a document was
dated and ingested) and ``document_authors`` (who its metadata says wrote it). They answer from
document metadata (title, tags, type, dates, authors, the summary computed at ingestion, the
names of the entities a document mentions): no vector index and no full-text search over chunks
(``compare``, which reads passages, is :mod:`kgrag.executor.compare_sides`). Every read carries
the caller's principals (the recorder adds them), so a document the caller may not read is never
listed or summarised.

Handlers return typed hits; what they matched is put in ``outcome.details`` for the trace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kgrag.core import Hit
from kgrag.executor.base import Registration, StepOutcome, StepReader
from kgrag.executor.compare_sides import compare_sides
from kgrag.executor.document_reads import (
    RESOLVE_COVERAGE,
    documents_about,
    metadata_coverage,
    names_document,
)
from kgrag.ingest.file_authors import author_words
from kgrag.planner.models import (
    CompareStep,
    DocumentAuthorsStep,
    DocumentDatesStep,
    DocumentSummaryStep,
    DocumentTypesStep,
    ListDocumentsStep,
    MetadataSearchStep,
)
from kgrag.planner.params import FORMAT_MIMES
from kgrag.text import document_terms

__all__ = [
    "DOCUMENT_HANDLERS",
    "answer_text",
    "authors_text",
    "dates_text",
    "documents_about",
    "metadata_coverage",
    "metadata_score",
    "type_name",
]

#: The Cypher reads fetch this many times ``k`` candidates before they are scored here.
OVERFETCH = 4


def metadata_score(row: Mapping[str, Any], n_terms: int) -> float:
    """How well a document's metadata matches the terms, in [0, 1]: title counts most, then tags,
    entity names and the summary, then the path."""
    raw = (
        3.0 * int(row.get("title_hits") or 0)
        + 2.0 * int(row.get("tag_hits") or 0)
        + 1.5 * min(len(row.get("entities") or ()), max(1, n_terms))
        + 1.0 * int(row.get("summary_hits") or 0)
        + 0.5 * int(row.get("uri_hits") or 0)
    )
    return round(raw / (8.0 * max(1, n_terms)), 6)


def _about(
    rec: StepReader,
    terms: Sequence[str],
    entity_ids: Sequence[str],
    k: int,
    *,
    min_coverage: float = 0.0,
    every_term: bool = False,
) -> list[tuple[float, dict[str, Any]]]:
    """Readable documents whose metadata matches, best first (ties: by uri). With
    ``every_term``, when some document holds every term only those are kept ("Git release
    notes": the notes, not each changelog whose summary says "release")."""
    terms = [t.lower() for t in terms]
    found = documents_about(rec, terms, entity_ids, k * OVERFETCH)
    covered = [(metadata_coverage(r, terms), r) for r in found]
    rows = [r for c, r in covered if c >= min_coverage]
    if every_term and any(c == 1.0 for c, _ in covered if c >= min_coverage):
        rows = [r for c, r in covered if c == 1.0]
    scored = [(metadata_score(r, len(terms)), r) for r in rows]
    scored.sort(key=lambda x: (-x[0], str(x[1].get("uri") or "")))
    return scored[:k]


def _document_hit(row: Mapping[str, Any], score: float, step_id: int) -> Hit:
    return Hit.from_row({**row, "score": score}, "document", step_id)


def _matched(row: Mapping[str, Any], score: float) -> dict[str, Any]:
    return {
        "id": row["id"],
        "title": row.get("title"),
        "score": score,
        "title_hits": row.get("title_hits"),
        "tag_hits": row.get("tag_hits"),
        "summary_hits": row.get("summary_hits"),
        "entities": list(row.get("entities") or ()),
    }


def _list_documents(
    step: ListDocumentsStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    found = _about(rec, p.about, p.entity_ids, p.k, every_term=True)
    rec.outcome.details["matched"] = [_matched(r, s) for s, r in found]
    return [_document_hit(r, s, step.step_id) for s, r in found]


def _named_documents(rec: StepReader, target: str, k: int) -> list[tuple[float, dict[str, Any]]]:
    """The readable documents ``target`` names ("the Riverside flood report"), best first, as
    a summary or a document's dates resolve them; recorded in the step's details."""
    terms = document_terms(target) or (target.lower(),)
    found = _about(rec, terms, (), k, min_coverage=RESOLVE_COVERAGE)
    rec.outcome.details["resolved"] = [_matched(r, s) for s, r in found]
    return found


def _document_summary(
    step: DocumentSummaryStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    found = _named_documents(rec, p.target, p.k)
    hits = []
    for score, row in found:
        summary = row.get("text") or f"{row.get('title')}: no summary was stored at ingestion."
        hits.append(_document_hit({**row, "text": summary}, score, step.step_id))
    return hits


def _metadata_search(
    step: MetadataSearchStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    rows = rec.read(
        "documents_by_metadata",
        {
            "modalities": list(p.modalities) if p.modalities else None,
            "mimes": [m for f in p.formats for m in FORMAT_MIMES[f]] if p.formats else None,
            "tags": [t.lower() for t in p.tags] if p.tags else None,
            "authors": [author_words(a) for a in p.authors] if p.authors else None,
            "date_from": p.date_from,
            "date_to": p.date_to,
            "k": p.k if not p.about else p.k * OVERFETCH,
        },
    )
    if p.about:
        # best matches of the topic first ("which Git release notes": the documents titled so
        # before those whose summary says "release"), newest first among equals
        relevant = {
            r["id"]: s for s, r in _about(rec, p.about, (), p.k * OVERFETCH, every_term=True)
        }
        rows = sorted((r for r in rows if r["id"] in relevant), key=lambda r: -relevant[r["id"]])
    rec.outcome.details["filters"] = p.model_dump(mode="json", exclude={"k"})
    return [_document_hit(r, 1.0, step.step_id) for r in rows[: p.k]]


#: Readable names of the stored MIME types of text formats (:data:`FORMAT_MIMES`; a CSV file is a
#: spreadsheet too, it is named CSV).
_FORMAT_NAMES = {
    "text/plain": "plain text",
    **{m: name for name, mimes in FORMAT_MIMES.items() for m in mimes if name != "spreadsheet"},
    **{m: "spreadsheet" for m in FORMAT_MIMES["spreadsheet"] if m not in FORMAT_MIMES["csv"]},
}


def type_name(modality: str, mime: str) -> str:
    """A document type as the answer names it: ``text, man (text/troff)``, ``pdf
    (application/pdf)``, ``image (image/png)``."""
    name = _FORMAT_NAMES.get(mime) if modality == "text" else None
    shown = f"{modality}, {name}" if name else modality
    return f"{shown} ({mime})" if mime else shown


def _document_types(
    step: DocumentTypesStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    """One hit per type (modality and MIME type), the most common first: the type's newest
    readable document, its text the type's count."""
    rows = rec.read("documents_by_type", {"k": step.parameters.k})
    rec.outcome.details["types"] = [
        {"modality": r["modality"], "mime": r["mime"], "documents": int(r["documents"])}
        for r in rows
    ]
    hits = []
    for row in rows:
        n = int(row["documents"])
        text = (
            f"{type_name(str(row['modality']), str(row['mime']))}: {n} readable "
            f"document{'s' if n != 1 else ''}, the newest: {row.get('title') or row.get('uri')}"
        )
        hits.append(_document_hit({**row, "text": text}, float(n), step.step_id))
    return hits


def _document_dates(
    step: DocumentDatesStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    """The readable document the target names (as for a summary), its text its stored dates."""
    p = step.parameters
    found = _named_documents(rec, p.target, p.k)
    return [
        _document_hit({**row, "text": dates_text(row)}, score, step.step_id) for score, row in found
    ]


def dates_text(row: Mapping[str, Any]) -> str:
    """What the store knows of when a document was made and added: its date (a ``date:`` tag
    of the ingestion manifest), the creation and modification dates its own metadata gives (a
    PDF's, an Office document's core properties), its file's modification time, and when it was
    ingested (UTC). A document stored before kgrag kept the file's dates says so."""
    dated = [str(g)[5:] for g in row.get("tags") or () if str(g).startswith("date:")]
    parts = [f"dated {dated[0]} (the date the ingestion manifest gave it)"] if dated else []
    created, changed = row.get("content_created_at"), row.get("content_modified_at")
    if created:
        parts.append(f"created on {_moment(str(created))} (the document's own metadata)")
    if changed:
        parts.append(f"last modified on {_moment(str(changed))} (the document's own metadata)")
    file_modified = row.get("file_modified_at")
    if file_modified:
        parts.append(f"its file was last modified on {_moment(str(file_modified))}")
    ingested = str(row.get("ingested_at") or "")
    if ingested:
        parts.append(f"added to the store (ingested) on {_moment(ingested)}")
    if not (created or changed or file_modified) and ingested:
        parts.append(
            "no file modification time or creation date is stored for it (a document ingested "
            "before kgrag kept them has none, nor has a member of an archive or a message)"
        )
    return "; ".join(parts) or "no date is stored for it"


def _document_authors(
    step: DocumentAuthorsStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    """The readable document the target names by its title or file name, its text its stored
    authors. "Who wrote the first program?" asks about the world, not a stored file's author: a
    document whose metadata merely mentions a first program is not named by it (no hit: the
    agent then searches the passages)."""
    p = step.parameters
    terms = document_terms(p.target) or (p.target.lower(),)
    found = [(s, r) for s, r in _named_documents(rec, p.target, p.k) if names_document(terms, r)]
    return [
        _document_hit({**row, "text": authors_text(row)}, score, step.step_id)
        for score, row in found
    ]


def authors_text(row: Mapping[str, Any]) -> str:
    """Who the store says wrote a document (its own metadata: ``Document.authors``), or that
    no author is stored for it: its file names none, or it was stored before kgrag kept
    authors. Never a guess from its content."""
    authors = [str(a) for a in row.get("authors") or ()]
    if authors:
        return f"written by {_and(authors)} (the document's own metadata)"
    if row.get("authors") is None:
        return (
            "no author is stored for it (it was ingested before kgrag kept authors; ingest it "
            "again to read them)"
        )
    return "no author is stored for it: its file names none in its metadata"


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _moment(iso: str) -> str:
    """``2024-03-01 at 09:30 UTC`` from ISO 8601 (UTC), the day alone when there is no time."""
    day, _, clock = iso.partition("T")
    if not clock:
        return day
    zone = " UTC" if clock.endswith(("+00:00", "Z")) else ""
    return f"{day} at {clock[:5]}{zone}"


DOCUMENT_HANDLERS = (
    Registration(ListDocumentsStep, _list_documents),
    Registration(DocumentSummaryStep, _document_summary),
    Registration(MetadataSearchStep, _metadata_search),
    Registration(CompareStep, compare_sides),
    Registration(DocumentTypesStep, _document_types),
    Registration(DocumentDatesStep, _document_dates),
    Registration(DocumentAuthorsStep, _document_authors),
)
"""The handlers of these steps, for the executor's dispatch table."""


def answer_text(
    step_type: str, hits: Sequence[Hit], limit: int = 10, *, capped: bool = False
) -> str:
    """An extractive answer from a document tool's hits; marker ``[n]`` cites ``hits[n - 1]``.
    ``capped``: the step found as many as it asked for, so there may be more ("at least 50").

    For agents that answer LISTING / DOCUMENT_SUMMARY / METADATA_SEARCH questions straight from
    the tool's result (no chunk evidence to synthesise from); a comparison's answer quotes each
    side's passages (kgrag.agent.synthesis.compared_answer)."""
    shown = list(hits[:limit])
    if not shown:
        return "No readable document matches."
    if step_type == "document_summary":
        hit = shown[0]
        return f"{hit.title} [1]: {hit.text}"
    if step_type in ("document_dates", "document_authors"):
        hit = shown[0]
        return f"{hit.title} [1]: {hit.text}."
    if step_type == "document_types":
        lines = [f"Readable documents by type ({len(hits)} type{'s' if len(hits) != 1 else ''}):"]
        lines += [f"- {h.text} [{n}]" for n, h in enumerate(shown, start=1)]
        return "\n".join(lines)
    count = f"at least {len(hits)}" if capped else str(len(hits))
    lines = [
        f"{count} document(s):" if len(hits) <= limit else f"{count} documents, first {limit}:"
    ]
    for n, hit in enumerate(shown, start=1):
        first = split_first_sentence(hit.text or "")
        by = f" (by {_and(hit.authors)})" if hit.authors else ""
        lines.append(f"- {hit.title} [{n}]{by}" + (f": {first}" if first else ""))
    return "\n".join(lines)


def split_first_sentence(text: str, max_chars: int = 160) -> str:
    """The first sentence of ``text``, at most ``max_chars`` characters."""
    end = re.search(r"(?<=[.!?])\s", text)
    first = text[: end.start()] if end else text
    return first if len(first) <= max_chars else first[: max_chars - 2].rstrip() + " …"
