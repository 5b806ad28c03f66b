"""After a job's writes: link members to their containers, and remove the members a changed
container no longer holds."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence

from kgrag.graph.store import GraphStore
from kgrag.ingest.models import ParsedDocument

log = logging.getLogger(__name__)

_STATEMENTS = {
    "CONTAINED_IN": "document_link_contained_in",
    "ATTACHED_TO": "document_link_attached_to",
}


class ContainerLinks:
    def __init__(self, store: GraphStore, delete: Callable[[str], None]) -> None:
        self.store = store
        self.delete = delete

    def link(self, documents: Sequence[ParsedDocument]) -> None:
        """``CONTAINED_IN`` / ``ATTACHED_TO`` from every member to its container, where both
        are stored (MERGE: linking again changes nothing; an unchanged member of a changed
        archive is linked to the archive's new version)."""
        for relation, statement in _STATEMENTS.items():
            rows = [
                {"member": str(d.source.path), "container": d.parent.uri}
                for d in documents
                if d.parent is not None and d.parent.relation == relation
            ]
            if rows:
                self.store.write_rows(statement, rows)

    def remove_gone(self, containers: Sequence[str], present: Collection[str]) -> list[str]:
        """Delete the stored members of ``containers`` (URIs) whose URI is not in ``present``
        (what this job found in them); returns the ids deleted."""
        gone: list[str] = []
        for uri in containers:
            for row in self.store.read("documents_in_container", {"prefix": uri + "!"}):
                if row["uri"] not in present:
                    gone.append(row["id"])
        for document_id in gone:
            log.info("removing %s: its container no longer holds it", document_id)
            self.delete(document_id)
        return gone
