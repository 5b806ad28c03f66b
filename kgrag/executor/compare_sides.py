"""The ``compare`` tool: for each side a comparison names, the readable passages nearest the
question.

A side is resolved to the documents whose title or file name holds its name ("the Apache
License", "gzip": ``gzip(1)``; a word the other sides' names share tells nothing apart), else
to the passages that mention the entity of that name or hold every word of it (the full-text
index), else to the documents whose metadata (summary, tags) holds most of its words.
Its passages are ranked by the question's embedding
(:attr:`CompareParams.query`), so the aspect the question compares ("faster", "patents",
"memory") chooses them, not their position in the file; the answer then quotes the sentences
of each side's passages that best answer the question (kgrag.agent.synthesis.compared_answer).
A side that resolves to nothing has no passages and the answer says so: nothing is put in its
place. Every read carries the caller's principals.

The hits of every side interleave (first passages first); :attr:`StepOutcome.groups` says which
side each belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from typing import Any

from kgrag.core import Hit
from kgrag.executor import document_reads as documents
from kgrag.executor.base import HitGroup, StepOutcome, StepReader
from kgrag.executor.duplicates import until_distinct
from kgrag.ingest.entities import normalise_name
from kgrag.planner.models import CompareStep
from kgrag.planner.rule import fulltext_query
from kgrag.text import document_terms
from kgrag.text.folding import fold
from kgrag.text.tokens import lexical_tokens

__all__ = ["compare_sides"]

#: Documents a side may name ("gzip": its manual and its README).
SIDE_DOCUMENTS = 3
#: Passages read per source of a side (its documents, its mentions) before they are ranked.
SIDE_POOL = 200
#: Full-text candidates looked at when resolving a side's name to entity ids.
NAME_CANDIDATES = 10


def compare_sides(
    step: CompareStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    """Each side's ``k`` readable passages nearest the question; the sides interleave."""
    p = step.parameters
    query = p.query or " ".join(p.sides)
    vector = list(rec.env.text_embedder.embed([query])[0])
    columns: list[list[Hit]] = []
    trace: list[dict[str, Any]] = []
    for side in p.sides:
        others = {t for o in p.sides if o != side for t in document_terms(o)}
        # the documents its name names; else the passages that mention it; else the documents
        # whose metadata holds its name
        named, covered = _documents_named(rec, side, others)
        mentions = [] if named else _mentioning(rec, side)
        documents = named or ([] if mentions else covered)
        if documents:
            rows = rec.read(
                "document_passages_near",
                {"document_ids": documents, "vector": vector, "k": SIDE_POOL},
            )
        elif mentions:
            rows = rec.read(
                "chunk_passages_near", {"ids": mentions, "vector": vector, "k": SIDE_POOL}
            )
        else:
            rows = []
        column = until_distinct((Hit.from_row(r, None, step.step_id) for r in rows), p.k)
        columns.append(column)
        trace.append(
            {
                "side": side,
                "resolved": ("documents" if documents else "mentions") if column else None,
                "documents": documents,
                "mentions": len(mentions),
                "passages": [h.id for h in column],
            }
        )
    rec.outcome.details["sides"] = trace
    rec.outcome.groups = tuple(
        HitGroup(side, tuple(h.id for h in column))
        for side, column in zip(p.sides, columns, strict=True)
    )
    out: dict[str, Hit] = {}
    for rank in range(max((len(c) for c in columns), default=0)):
        for column in columns:
            if rank < len(column):
                out.setdefault(column[rank].id, column[rank])
    return list(out.values())


def _documents_named(rec: StepReader, side: str, others: Set[str]) -> tuple[list[str], list[str]]:
    """The readable documents whose title or file name ``side`` names
    (:func:`~kgrag.executor.document_reads.names_document`), and those whose metadata holds
    most of its words, the best first. A word the other sides' names (``others``) hold too
    tells nothing apart: "the BSD license" beside "the Apache License" names the documents
    "BSD" names."""
    terms = [t.lower() for t in document_terms(side) or (side.lower(),)]
    terms = [t for t in terms if t not in others] or terms
    found = documents.documents_about(rec, terms, (), SIDE_DOCUMENTS * 4)
    named = [str(r["id"]) for r in found if documents.names_document(terms, r)]
    covered = [
        str(r["id"])
        for r in found
        if documents.metadata_coverage(r, terms) >= documents.RESOLVE_COVERAGE
    ]
    return named[:SIDE_DOCUMENTS], covered[:SIDE_DOCUMENTS]


def _mentioning(rec: StepReader, side: str) -> list[str]:
    """The readable passages that mention the entity named ``side``, and those holding every
    word of its name (the full-text index, then each word checked as a token)."""
    ids = _entity_ids_named(rec, side)
    found = rec.read("templates/entity_chunks", {"entity_ids": ids, "k": SIDE_POOL}) if ids else []
    words = lexical_tokens(fold(side))
    if words:
        query = fulltext_query(side) or " ".join(words)  # "xz", "cp": too short for the former
        rows = rec.read("templates/chunks_fulltext", {"query": query, "k": SIDE_POOL})
        found += [r for r in rows if set(words) <= set(lexical_tokens(fold(str(r["text"]))))]
    return list(dict.fromkeys(str(r["id"]) for r in found))


def _entity_ids_named(rec: StepReader, side: str) -> list[str]:
    """The ids of the entities named ``side``: its normalised form (an entity's id), and the
    entities whose display name is ``side`` in another case (an alias chosen as the display
    form, e.g. ``United States`` for the id ``us``), found through the entity full-text index."""
    ids = [normalise_name(side)]
    folded_side = fold(side).lower()  # accents folded on both sides (kgrag.text.folding)
    words = re.findall(r"[a-z0-9]+", folded_side)
    if words:
        rows = rec.read("fulltext_entities", {"query": " ".join(words), "k": NAME_CANDIDATES})
        ids += [str(r["id"]) for r in rows if fold(str(r.get("name") or "")).lower() == folded_side]
    return list(dict.fromkeys(i for i in ids if i))
