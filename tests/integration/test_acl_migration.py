"""Migration 0005_namespaced_acl on both engines: a store whose documents carry bare ACL entries
(set by a Cypher write, as kgrag stored them before namespacing) is migrated when it is opened,
and every reader reads exactly the documents they read before: a bare ``x`` was matched by the
user x and by the group x, and is ``user:x`` and ``group:x`` now. ``*`` and namespaced entries
stay; running the migration again changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.graph.migrations import migrate, status
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine
from tests.support.raw import raw_write

MIGRATION = "0005_namespaced_acl"
#: file -> the ACL stored before namespacing (bare names, public, and a mix)
OLD_ACLS: dict[str, list[str]] = {
    "ada.md": ["ada"],
    "ops.md": ["ops", "ada"],
    "mixed.md": ["ops", "user:bob", "group:board"],
    "public.md": ["*"],
    "new.md": ["user:carol"],
}
#: (user, groups) of readers; under the old rule a reader's principals were ``*``, the groups
#: and the user name, all bare.
READERS: list[tuple[str | None, tuple[str, ...]]] = [
    (None, ()),
    ("ada", ()),
    ("eve", ("ada",)),
    ("ops", ()),
    ("eve", ("ops",)),
    ("bob", ()),
    ("eve", ("bob",)),
    ("eve", ("board",)),
    ("carol", ()),
    ("eve", ("carol",)),
]
EXPECTED = {
    "ada.md": ["user:ada", "group:ada"],
    "ops.md": ["user:ops", "group:ops", "user:ada", "group:ada"],
    "mixed.md": ["user:ops", "group:ops", "user:bob", "group:board"],
    "public.md": ["*"],
    "new.md": ["user:carol"],
}


def _old_rule(acl: list[str], user: str | None, groups: tuple[str, ...]) -> bool:
    """Who read a document before: a bare entry matched the user or a group of that name; an
    entry already namespaced (written by a newer kgrag) keeps its meaning."""
    bare = {"*", *groups, *([user] if user else [])}
    namespaced = {*(f"group:{g}" for g in groups), *([f"user:{user}"] if user else [])}
    return any(p in bare or p in namespaced for p in acl)


def _readable(store: GraphStore, user: str | None, groups: tuple[str, ...]) -> set[str]:
    params = AccessContext(user=user, groups=groups).params()
    return {r["id"] for r in store.read("document_list", params)}


def _acls(store: GraphStore) -> dict[str, list[str]]:
    rows = store.read_freeform("MATCH (d:Document) RETURN d.uri AS uri, d.acl AS acl")
    return {Path(r["uri"]).name: list(r["acl"]) for r in rows}


def test_bare_acl_entries_are_migrated_and_every_reader_keeps_their_access(
    engine: Engine, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in OLD_ACLS:
        (folder / name).write_text(f"The note {name} is about pump {len(name)}.\n")
    with KnowledgeAgent(engine.open(), default_text_embedder()) as agent:
        report = agent.ingest([str(folder)])
        assert report.ingested == len(OLD_ACLS), report.failures
        ids = {
            Path(r["uri"]).name: r["id"]
            for r in agent.store.read("document_list", {"principals": [], "admin": True})
        }
        # the store as kgrag wrote it before namespacing, and before the migration existed
        for name, acl in OLD_ACLS.items():
            raw_write(
                agent.store,
                "MATCH (d:Document {id: $id}) SET d.acl = $acl",
                {"id": ids[name], "acl": acl},
            )
        raw_write(agent.store, f"MATCH (m:Migration {{name: '{MIGRATION}'}}) DELETE m")
        assert _acls(agent.store) == OLD_ACLS
        assert {s.name: s.applied_at for s in status(agent.store)}[MIGRATION] is None

    with engine.open() as store:  # opening migrates
        assert {s.name: s.applied_at for s in status(store)}[MIGRATION] is not None
        migrated = _acls(store)
        assert migrated == EXPECTED
        for user, groups in READERS:
            before = {ids[n] for n, acl in OLD_ACLS.items() if _old_rule(acl, user, groups)}
            assert _readable(store, user, groups) == before, (user, groups)
        # idempotent: the statement again changes nothing; migrate() has nothing left to do
        assert store.write("document_acl_namespace") == [{"documents": 0}]
        assert migrate(store) == []
        assert _acls(store) == migrated


def test_a_new_store_records_the_migration_and_namespaced_acls_are_untouched(
    engine: Engine, tmp_path: Path
) -> None:
    (tmp_path / "a.md").write_text("The Feed Pump FP-2 is maintained by Grace Hopper.\n")
    with KnowledgeAgent(engine.open(), default_text_embedder()) as agent:
        assert MIGRATION in {s.name for s in status(agent.store) if s.applied_at}
        agent.ingest([str(tmp_path / "a.md")], acl=["user:ada", "group:ops"])
        assert agent.store.write("document_acl_namespace") == [{"documents": 0}]
        assert _acls(agent.store) == {"a.md": ["group:ops", "user:ada"]}
