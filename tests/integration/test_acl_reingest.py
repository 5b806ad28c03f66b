"""Ingesting an unchanged file again with another ACL, on both engines with real MiniLM
embeddings: only the document's ACL changes (no chunk, entity or timestamp is rewritten), the
report says so, readers see the new ACL at once; the same ACL again is still skipped."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.cli import app
from kgrag.core import AccessContext
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

TEXT = (
    "Project Heliotrope: the Zephyr Turbine ZT-9 is maintained by Hedy Lamarr. "
    "The Zephyr Turbine ZT-9 will replace the Feed Pump FP-2 next spring.\n"
)
QUESTION = "Who maintains the Zephyr Turbine ZT-9?"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        yield a


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "heliotrope.md"
    path.write_text(TEXT, encoding="utf-8")
    return path


def _state(store: GraphStore, uri: str) -> dict[str, object]:
    """Everything stored of the document except its ACL, and the ACL."""
    (row,) = store.read_freeform(
        "MATCH (d:Document {uri: $uri}) "
        "OPTIONAL MATCH (d)<-[:PART_OF]-(c:Chunk) "
        "OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity) "
        "RETURN d.id AS id, d.acl AS acl, d.ingested_at AS ingested_at, d.status AS status, "
        "d.sha256 AS sha256, collect(DISTINCT c.id) AS chunks, collect(DISTINCT e.id) AS entities, "
        "count(m) AS mentions",
        {"uri": uri},
    )
    return row


def _sees(agent: KnowledgeAgent, access: AccessContext, doc_id: str) -> bool:
    """Whether a reader finds the document, by listing and by vector search."""
    params = access.params()
    listed = any(r["id"] == doc_id for r in agent.store.read("document_list", params))
    vector = agent.text_embedder.embed([QUESTION])[0]
    found = agent.store.read("vector_chunks", {"vector": list(vector), "k": 10, **params})
    searched = any(r["document_id"] == doc_id for r in found)
    assert listed == searched, (listed, searched)
    return listed


def test_an_acl_change_on_reingest_applies_and_nothing_else_is_rewritten(
    agent: KnowledgeAgent, doc: Path
) -> None:
    bob, alice = AccessContext(user="bob"), AccessContext(user="alice")
    first = agent.ingest([str(doc)])
    assert (first.ingested, first.skipped, first.failed, first.acl_updated) == (1, 0, 0, [])
    (doc_id,) = first.document_ids
    before = _state(agent.store, str(doc))
    assert before["acl"] == ["*"] and before["chunks"] and before["entities"]
    assert _sees(agent, bob, doc_id) and _sees(agent, alice, doc_id)

    private = agent.ingest([str(doc)], acl=["user:alice"])
    assert (private.ingested, private.skipped, private.failed) == (1, 0, 0)
    assert private.acl_updated == [doc_id] and private.document_ids == [doc_id]
    after = _state(agent.store, str(doc))
    assert after["acl"] == ["user:alice"]
    assert {k: v for k, v in after.items() if k != "acl"} == {
        k: v for k, v in before.items() if k != "acl"
    }  # same id, chunks, mentions, entities and ingestion time: only the ACL was written
    assert private.stage_seconds.get("embed_text") is None  # nothing was embedded
    assert not _sees(agent, bob, doc_id)
    assert _sees(agent, alice, doc_id)
    # a group named like the user reads nothing of that user (namespaced principals)
    assert not _sees(agent, AccessContext(user="carol", groups=("alice",)), doc_id)

    again = agent.ingest([str(doc)], acl=["user:alice"])
    assert (again.ingested, again.skipped, again.failed, again.acl_updated) == (0, 1, 0, [])
    assert _state(agent.store, str(doc)) == after

    public = agent.ingest([str(doc)])  # no --acl: public again
    assert (public.ingested, public.skipped, public.acl_updated) == (1, 0, [doc_id])
    assert _state(agent.store, str(doc))["acl"] == ["*"]
    assert _sees(agent, bob, doc_id)


def test_the_same_principals_in_another_order_are_the_same_acl(
    agent: KnowledgeAgent, doc: Path
) -> None:
    first = agent.ingest([str(doc)], acl=["group:ops", "user:alice"])
    assert first.ingested == 1
    same = agent.ingest([str(doc)], acl=["user:alice", "group:ops", "user:alice"])
    assert (same.ingested, same.skipped, same.acl_updated) == (0, 1, [])


def test_cli_reingest_with_another_acl(engine: Engine, doc: Path) -> None:
    # after the tests of the shared `agent`: on Neo4j this test empties the one database
    runner = CliRunner(env=engine.env())
    store = engine.uri

    def ingest(*acl: str) -> dict[str, object]:
        flags = [a for p in acl for a in ("--acl", p)]
        r = runner.invoke(app, ["--quiet", "ingest", str(doc), *flags, "--store", store, "--json"])
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert {"ingested", "skipped", "failed", "failures", "seconds"} <= set(out)
        return out

    assert (ingest()["ingested"], ingest()["skipped"]) == (1, 1)
    changed = ingest("user:alice")
    assert (changed["ingested"], changed["skipped"], changed["failed"]) == (1, 0, 0)
    same = ingest("user:alice")
    assert (same["ingested"], same["skipped"]) == (0, 1)
    s = engine.open()
    try:
        rows = s.read_freeform("MATCH (d:Document) RETURN d.acl AS acl")
        assert [r["acl"] for r in rows] == [["user:alice"]]
    finally:
        s.close()
