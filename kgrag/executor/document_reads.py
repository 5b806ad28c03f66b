"""The reads the document tools share: the readable documents whose metadata holds some
words or names some entities (:func:`documents_about`), how much of the words a document's
metadata holds (:func:`metadata_coverage`), and whether words name a document by its title or
file name (:func:`names_document`). Every read carries the caller's principals."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kgrag.executor.base import StatementReader
from kgrag.text import document_terms
from kgrag.text.folding import fold
from kgrag.text.spelling import american, term_spellings

__all__ = [
    "RESOLVE_COVERAGE",
    "TERM_ENTITY_CANDIDATES",
    "documents_about",
    "metadata_coverage",
    "names_document",
    "term_entity_ids",
]


def metadata_coverage(row: Mapping[str, Any], terms: Sequence[str]) -> float:
    """The share of ``terms`` found anywhere in a document's metadata, each in any of its
    spellings (:func:`~kgrag.text.spelling.term_spellings`: "colour" is found in "Color")."""
    fields = [row.get("title"), row.get("text"), row.get("uri"), *(row.get("tags") or ())]
    fields += list(row.get("also_uris") or ())  # the paths of copies skipped as duplicates
    fields += list(row.get("entities") or ())
    haystack = " ".join(str(f).lower() for f in fields if f)
    found = sum(1 for t in terms if any(s in haystack for s in term_spellings(t.lower())))
    return found / max(1, len(terms))


#: A summary or comparison names one document: most of its words must match that document.
RESOLVE_COVERAGE = 0.6


#: Entities the full-text index proposes per term of a document question; those whose name
#: contains the term count as named by it.
TERM_ENTITY_CANDIDATES = 20


def term_entity_ids(reader: StatementReader, terms: Sequence[str]) -> list[str]:
    """The entities whose names contain one of ``terms`` (in any of its spellings), among the
    entity full-text index's candidates for each spelling of each term (a prefix query per word,
    so ``pump`` finds ``Feed Pumps``)."""
    ids: list[str] = []
    for term in terms:
        # accents folded on both sides (kgrag.text.folding): "zurich" names "Zürich"
        for spelling in term_spellings(fold(term).lower()):
            words = re.findall(r"[a-z0-9]+", spelling)
            if not words:
                continue
            query = " ".join(w + "*" if len(w) >= 3 else w for w in words)
            rows = reader.read("fulltext_entities", {"query": query, "k": TERM_ENTITY_CANDIDATES})
            ids += [
                str(r["id"]) for r in rows if spelling in fold(str(r.get("name") or "")).lower()
            ]
    return list(dict.fromkeys(ids))


def documents_about(
    reader: StatementReader, terms: Sequence[str], entity_ids: Sequence[str], k: int
) -> list[dict[str, Any]]:
    """Readable documents whose metadata contains ``terms`` or that mention (or picture) the
    entities ``entity_ids`` and those the terms name, each with ``entities``: the names of those
    it mentions, then those it only pictures. At most ``k``, by title hits, tag hits, then path.
    A term is matched in any of its spellings and counted once (:func:`term_spellings`).
    The reader carries the caller's principals: nothing unreadable is read."""
    terms = [t.lower() for t in terms]
    ids = list(dict.fromkeys([*entity_ids, *term_entity_ids(reader, terms)]))
    named: dict[str, list[str]] = {}
    if ids:
        for row in reader.read("documents_about_entities", {"entity_ids": ids}):
            named.setdefault(str(row["document_id"]), []).append(str(row["name"]))
    spelled = [list(term_spellings(t)) for t in terms]
    rows = reader.read("documents_about", {"terms": spelled, "documents": list(named), "k": k})
    return [{**r, "entities": list(dict.fromkeys(named.get(str(r["id"]), ())))} for r in rows]


def names_document(terms: Sequence[str], row: Mapping[str, Any]) -> bool:
    """Whether a document's title, or its file's name, is named by the terms: it holds at least
    half of them, one at least, and they are at least half of its words ("the BSD license"
    names ``BSD.txt``, "gzip" ``gzip(1)`` and ``gzip-README``; "Ada Okafor" does not name a text
    whose first line, "Ada Okafor maintains the Feed Pump FP-2 and reports to Brian Keller",
    titles it)."""
    uri = str(row.get("uri") or "").replace("\\", "/").rsplit("/", 1)[-1]
    named = _word_parts(terms)
    for name in (str(row.get("title") or ""), uri):
        words = _word_parts(document_terms(fold(name)))
        held = len(named & words)
        if held and 2 * held >= len(named) and 2 * held >= len(words):
            return True
    return False


def _word_parts(terms: Sequence[str]) -> set[str]:
    """The terms' words, a hyphenated term counted as its parts: "zephyr turbine" names
    ``zephyr-turbine.md`` and "the flood-report" ``Flood Report.pdf``."""
    return {american(part) for t in terms for part in t.split("-") if part}
