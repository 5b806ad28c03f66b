"""Documents written straight through the writer's own statements (``documents_begin``), for store
tests that need exact contents or vectors rather than ingested files."""

from __future__ import annotations

from kgrag.graph.store import GraphStore


def begin_document(store: GraphStore, doc_id: str, acl: list[str] | None = None) -> None:
    """A text document ``doc_id`` being written (``status: 'ingesting'``), public without
    ``acl``; ``documents_complete`` makes it readable."""
    store.write(
        "documents_begin",
        {
            "rows": [
                {
                    "id": doc_id,
                    "uri": f"/tmp/{doc_id}.txt",
                    "sha256": doc_id,
                    "modality": "text",
                    "mime": "text/plain",
                    "title": doc_id,
                    "bytes": 1,
                    "acl": acl or ["*"],
                    "tags": [],
                    "ingested_at": "2026-01-01T00:00:00Z",
                    "language": None,
                    "summary": None,
                }
            ]
        },
    )
