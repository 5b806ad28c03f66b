"""Resolving the entities a question names, within what the caller may read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgrag.executor.hits import AccessContext
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import normalise_name
from kgrag.planner.analysis import ResolvedEntity


class EntityResolver:
    """Exact normalised names first, then the entity full-text index (accepted only when every
    word of the mention is in the name); finally only entities mentioned or depicted by a
    document the caller may read are kept, so nothing of a private document leaks into a plan."""

    def __init__(self, store: GraphStore, access: AccessContext) -> None:
        self.store = store
        self.access = access

    def __call__(self, surfaces: Sequence[str]) -> list[ResolvedEntity]:
        return self.resolve(surfaces)

    def resolve(self, surfaces: Sequence[str]) -> list[ResolvedEntity]:
        ids = sorted({normalise_name(s) for s in surfaces if normalise_name(s)})
        found = {r["id"]: r for r in self.store.read("entity_by_ids", {"ids": ids})} if ids else {}
        out = [
            ResolvedEntity(id=i, name=r["name"], score=1.0, surface=r["name"])
            for i, r in found.items()
        ]
        for surface in surfaces:
            words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", surface)}
            if not words or normalise_name(surface) in found or len(words) > 4:
                continue
            if any(words <= _words(r["name"]) for r in found.values()):
                continue  # part of a name already found ("Feed Pump" of "Feed Pump FP-2")
            rows = self.store.read("fulltext_entities", {"query": " ".join(sorted(words)), "k": 5})
            matches = [r for r in rows if r["id"] not in found and words <= _words(r["name"])]
            if matches:  # the closest name: the fewest words beyond the mention's
                r = min(matches, key=lambda r: len(_words(r["name"]) - words))
                found[r["id"]] = r
                out.append(ResolvedEntity(id=r["id"], name=r["name"], score=0.8, surface=surface))
        if not out:
            return out
        readable = {
            r["id"]
            for r in self.store.read(
                "entity_readable", {"ids": [e.id for e in out], **self.access.params()}
            )
        }
        return [e for e in out if e.id in readable]


def _words(name: str | None) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z0-9]+", name or "")}
