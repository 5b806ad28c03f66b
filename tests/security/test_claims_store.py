"""SECURITY.md's claims about the store, on real stores: values reach the engine only as
parameters (Cypher text in a value is stored as text, on both engines), and the embedded
server's unix socket is reachable by its own user only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kgrag.graph import open_store
from tests.support.engines import Engine

#: Values that would change the statement if they were pasted into its text.
HOSTILE = (
    "x'}) DETACH DELETE n //",
    'x"}) MATCH (m) DETACH DELETE m RETURN 1 //',
    "`Entity`) SET e.acl = ['*'] //",
    "$principals",
    "x} RETURN 1 UNION MATCH (d:Document) RETURN d.id AS id //",
)


def test_cypher_in_a_value_is_stored_as_text_and_runs_nothing(engine: Engine) -> None:
    store = engine.open()
    try:
        store.write_rows(
            "entity_upsert",
            [{"id": "plain", "name": "plain", "type": "concept", "name_rank": 1}]
            + [{"id": v, "name": v, "type": v, "name_rank": 1} for v in HOSTILE],
        )
        back = store.read("entity_by_ids", {"ids": ["plain", *HOSTILE]})
        assert sorted((r["id"], r["name"], r["type"]) for r in back) == sorted(
            [("plain", "plain", "concept")] + [(v, v, v) for v in HOSTILE]
        )
        labels = {r["label"]: r["n"] for r in store.read("stats_labels")}
        assert labels.get("Entity") == len(HOSTILE) + 1, labels  # nothing deleted, nothing more
    finally:
        store.close()


def test_the_embedded_servers_socket_and_its_folder_are_private(tmp_path: Path) -> None:
    store = open_store(f"falkordb-lite:///{tmp_path}/kg.db")
    try:
        socket_file = Path(store._server.client.socket_file)  # type: ignore[attr-defined]
        assert stat.S_ISSOCK(os.stat(socket_file).st_mode)
        assert stat.S_IMODE(os.stat(socket_file).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(socket_file.parent).st_mode) == 0o700
    finally:
        store.close()


def test_a_document_is_readable_only_while_complete_and_only_by_its_principals(
    engine: Engine,
) -> None:
    store = engine.open()

    def listed(*principals: str, admin: bool = False) -> list[str]:
        rows = store.read("document_list", {"principals": list(principals), "admin": admin})
        return [r["id"] for r in rows]

    try:
        store.write("documents_begin", {"rows": [{
                "id": "d1", "uri": "file:///d1.txt", "sha256": "0" * 64, "modality": "text",
                "mime": "text/plain", "title": "d1", "bytes": 1, "acl": ["user:alice"],
                "tags": [], "ingested_at": "2026-01-01T00:00:00Z", "language": "en",
                "summary": None,
            }]},
        )  # fmt: skip
        assert listed("*", "user:alice") == [] and listed(admin=True) == []  # being written
        store.write(
            "documents_complete", {"rows": [{"id": "d1", "chunk_count": 0, "image_count": 0}]}
        )
        assert listed("*", "user:alice") == ["d1"] and listed(admin=True) == ["d1"]
        assert listed("*", "group:alice", "user:bob") == []  # another reader
        store.write("document_mark_deleting", {"id": "d1"})
        assert listed("*", "user:alice") == [] and listed(admin=True) == []  # being deleted
    finally:
        store.close()
