"""Write authorisation on the ingest side (issue 14, item 3), on both engines with real MiniLM
embeddings: a caller who may not change ACLs (``may_change_acl=False``: over HTTP, anyone without
the admin role) cannot change a stored document's ACL by ingesting its file again, neither the
same content nor a changed one: that file fails, naming the reason, and nothing of the document
changes, while the rest of the job goes on. Every ACL change that is made is recorded with who
and when: in the report and as an ``AclChange`` node linked to the document. The CLI records its
OS user."""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.cli import app
from kgrag.core import AccessContext
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

TEXT = "Project Heliotrope: the Zephyr Turbine ZT-9 is maintained by Hedy Lamarr.\n"
CHANGED = TEXT + "The Zephyr Turbine ZT-9 will replace the Feed Pump FP-2 next spring.\n"
WRITER, ADMIN = "key:writer-1", "key:admin-1"


@pytest.fixture
def agent(engine: Engine) -> Iterator[KnowledgeAgent]:
    with KnowledgeAgent(engine.open(), default_text_embedder()) as a:
        yield a


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "heliotrope.md"
    path.write_text(TEXT, encoding="utf-8")
    return path


def _documents(store: GraphStore) -> dict[str, list[str]]:
    """Every stored document (id -> its ACL, sorted)."""
    rows = store.read_freeform("MATCH (d:Document) RETURN d.id AS id, d.acl AS acl")
    return {r["id"]: sorted(r["acl"]) for r in rows}


def _changes(store: GraphStore) -> list[dict[str, Any]]:
    return store.read_freeform(
        "MATCH (c:AclChange) OPTIONAL MATCH (c)-[:CHANGED_ACL_OF]->(d:Document) "
        "RETURN c.document_id AS document_id, c.uri AS uri, c.actor AS actor, c.at AS at, "
        "c.old_acl AS old_acl, c.new_acl AS new_acl, d.id AS linked ORDER BY c.at, c.id"
    )


def _readable(store: GraphStore, access: AccessContext) -> set[str]:
    return {r["id"] for r in store.read("document_list", access.params())}


def test_without_the_right_a_reingest_cannot_change_an_acl(
    agent: KnowledgeAgent, doc: Path, tmp_path: Path
) -> None:
    first = agent.ingest([str(doc)], ["group:ops"], actor=ADMIN)
    (doc_id,) = first.document_ids
    before = _documents(agent.store)
    assert before == {doc_id: ["group:ops"]}
    eve = AccessContext(user="eve")

    # the same file made public (or readable by another group) by a writer: refused
    for n, acl in enumerate(([], ["group:eng"], ["group:ops", "user:eve"])):
        other = tmp_path / f"other{n}.md"  # a new file in the same job
        other.write_text(f"The Feed Pump FP-{n} is maintained by Grace Hopper.\n")
        report = agent.ingest([str(doc), str(other)], acl, actor=WRITER, may_change_acl=False)
        (failure,) = report.failures
        assert report.failed == 1 and failure.path == str(doc)
        assert failure.reason.startswith("ACL change refused: ")
        assert "group:ops" in failure.reason and "admin" in failure.reason
        assert report.acl_updated == [] and report.acl_changes == []
        # nothing of the document changed, and the rest of the job went on
        assert doc_id not in report.document_ids and report.ingested == 1
        assert _documents(agent.store)[doc_id] == ["group:ops"]
        assert doc_id not in _readable(agent.store, eve)
    assert _changes(agent.store) == []

    # the same ACL is no change: skipped; a changed file with the same ACL is an update
    same = agent.ingest([str(doc)], ["group:ops"], actor=WRITER, may_change_acl=False)
    assert (same.ingested, same.skipped, same.failed) == (0, 1, 0)
    doc.write_text(CHANGED, encoding="utf-8")
    updated = agent.ingest([str(doc)], ["group:ops"], actor=WRITER, may_change_acl=False)
    assert (updated.ingested, updated.failed, updated.acl_changes) == (1, 0, [])
    (new_id,) = updated.document_ids
    assert new_id != doc_id and _documents(agent.store)[new_id] == ["group:ops"]

    # a changed file with another ACL would change who reads the file's document: refused too
    doc.write_text(CHANGED + "A third sentence.\n", encoding="utf-8")
    widened = agent.ingest([str(doc)], ["*"], actor=WRITER, may_change_acl=False)
    assert widened.failed == 1 and widened.ingested == 0
    assert widened.failures[0].reason.startswith("ACL change refused: ")
    assert _documents(agent.store)[new_id] == ["group:ops"]
    assert new_id not in _readable(agent.store, eve)
    assert _changes(agent.store) == []


def test_every_acl_change_is_recorded_with_who_and_when(agent: KnowledgeAgent, doc: Path) -> None:
    started = datetime.now(UTC)
    (doc_id,) = agent.ingest([str(doc)], actor=ADMIN).document_ids
    private = agent.ingest([str(doc)], ["user:ada"], actor=ADMIN)
    assert private.acl_updated == [doc_id]
    (change,) = private.acl_changes
    assert (change.document_id, change.uri, change.actor) == (doc_id, str(doc), ADMIN)
    assert (change.old_acl, change.new_acl) == (("*",), ("user:ada",))
    assert started <= datetime.fromisoformat(change.at) <= datetime.now(UTC)
    (row,) = _changes(agent.store)
    assert row == {
        "document_id": doc_id,
        "uri": str(doc),
        "actor": ADMIN,
        "at": change.at,
        "old_acl": ["*"],
        "new_acl": ["user:ada"],
        "linked": doc_id,
    }

    # a changed file replacing a version of another ACL: recorded on the new document
    doc.write_text(CHANGED, encoding="utf-8")
    replaced = agent.ingest([str(doc)], ["group:ops"], actor="key:admin-2")
    (new_id,) = replaced.document_ids
    assert replaced.acl_updated == []  # re-embedded, not only its ACL rewritten
    (second,) = replaced.acl_changes
    assert (second.document_id, second.old_acl, second.new_acl) == (
        new_id,
        ("user:ada",),
        ("group:ops",),
    )
    assert _documents(agent.store) == {new_id: ["group:ops"]}
    rows = _changes(agent.store)
    assert [(r["document_id"], r["actor"], r["linked"]) for r in rows] == [
        (doc_id, ADMIN, None),  # its document was replaced; the record stays
        (new_id, "key:admin-2", new_id),
    ]
    # the same ACL again is no change and records nothing
    assert agent.ingest([str(doc)], ["group:ops"], actor=ADMIN).acl_changes == []
    assert len(_changes(agent.store)) == 2


def test_the_cli_records_its_os_user_with_an_acl_change(engine: Engine, doc: Path) -> None:
    runner = CliRunner(env=engine.env())

    def ingest(*flags: str) -> dict[str, Any]:
        r = runner.invoke(
            app, ["--quiet", "ingest", str(doc), *flags, "--store", engine.uri, "--json"]
        )
        assert r.exit_code == 0, r.output
        return dict(json.loads(r.stdout))

    assert ingest()["acl_changes"] == []
    (change,) = ingest("--acl", "user:ada", "--acl", "group:ops")["acl_changes"]
    assert change["actor"] == f"cli:{getpass.getuser()}"
    assert (change["old_acl"], change["new_acl"]) == (["*"], ["group:ops", "user:ada"])
    with engine.open() as store:
        assert [r["actor"] for r in _changes(store)] == [f"cli:{getpass.getuser()}"]
