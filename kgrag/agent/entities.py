"""Resolving the entities a question names, within what the caller may read."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kgrag.core import AccessContext
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import normalise_name
from kgrag.planner.analysis import ResolvedEntity
from kgrag.text.folding import fold


class GraphEntityLookup:
    """Exact normalised names first, then the entity full-text index (accepted only when every
    word of the mention is in the name, accents folded on both sides: ``Dvorak`` and ``Dvořák``
    name ``Antonín Dvořák``; kgrag.text.folding); finally only entities mentioned or depicted by a
    document the caller may read are kept, so nothing of a private document leaks into a plan.

    A lookup serves one question (one caller): it remembers what it looked up (names, full-text
    matches, readability), since the question, the judge's refined queries and the answer's
    sentences name the same entities again and again."""

    def __init__(self, store: GraphStore, access: AccessContext) -> None:
        self.store = store
        self.access = access
        self._by_id: dict[str, dict[str, Any] | None] = {}
        self._fulltext: dict[str, list[dict[str, Any]]] = {}
        self._readable: dict[str, bool] = {}

    def __call__(self, surfaces: Sequence[str]) -> list[ResolvedEntity]:
        return self.resolve(surfaces)

    def resolve(self, surfaces: Sequence[str]) -> list[ResolvedEntity]:
        ids = sorted({normalise_name(s) for s in surfaces if normalise_name(s)})
        found = {i: r for i, r in self._entities(ids).items() if r is not None}
        out = [
            ResolvedEntity(id=i, name=r["name"], score=1.0, surface=r["name"])
            for i, r in found.items()
        ]
        for surface in surfaces:
            words = _words(surface)
            if not words or normalise_name(surface) in found or len(words) > 4:
                continue
            if any(words <= _words(r["name"]) for r in found.values()):
                continue  # part of a name already found ("Feed Pump" of "Feed Pump FP-2")
            rows = self._search(" ".join(sorted(words)))
            matches = [r for r in rows if r["id"] not in found and words <= _words(r["name"])]
            if matches:  # the closest name: the fewest words beyond the mention's
                r = min(matches, key=lambda r: len(_words(r["name"]) - words))
                found[r["id"]] = r
                out.append(ResolvedEntity(id=r["id"], name=r["name"], score=0.8, surface=surface))
        if not out:
            return out
        readable = self._readable_ids([e.id for e in out])
        return [e for e in out if e.id in readable]

    def _entities(self, ids: Sequence[str]) -> dict[str, dict[str, Any] | None]:
        """Entity rows by id (``None``: no such entity), looked up once each."""
        missing = [i for i in ids if i not in self._by_id]
        if missing:
            rows = {r["id"]: r for r in self.store.read("entity_by_ids", {"ids": missing})}
            self._by_id.update({i: rows.get(i) for i in missing})
        return {i: self._by_id[i] for i in ids}

    def _search(self, query: str) -> list[dict[str, Any]]:
        if query not in self._fulltext:
            self._fulltext[query] = self.store.read("fulltext_entities", {"query": query, "k": 5})
        return self._fulltext[query]

    def _readable_ids(self, ids: Sequence[str]) -> set[str]:
        missing = list(dict.fromkeys(i for i in ids if i not in self._readable))
        if missing:
            rows = self.store.read("entity_readable", {"ids": missing, **self.access.params()})
            readable = {r["id"] for r in rows}
            self._readable.update({i: i in readable for i in missing})
        return {i for i in ids if self._readable[i]}


def _words(name: str | None) -> set[str]:
    """The lower-case words of a name or mention, accents folded."""
    return {w.lower() for w in re.findall(r"[A-Za-z0-9]+", fold(name or ""))}
