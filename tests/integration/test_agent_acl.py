"""Access control through the whole agent, on both engines (embedded FalkorDB, Neo4j): a document
only alice may read never reaches bob's answer, citations, trace (every node any step RETURNED),
entity resolution, image search, conversation memory or tools; the same questions as alice do reach
it (so the checks can fail). The CLI flags --acl, --user, --groups and --session work end to end."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.answer import Answer
from kgrag.cli import app
from kgrag.config import Settings
from kgrag.core import OPERATOR, AccessContext
from kgrag.demo.shapes import draw_shape
from kgrag.errors import KgragError, QueryRefusedError
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory
from kgrag.modalities.clip import tiny_clip_embedder
from kgrag.tools import ToolContext, default_registry
from tests.support.across import compared_across_engines  # noqa: F401 (a fixture)
from tests.support.engines import Engine

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

PUBLIC_TEXT = (
    "The Feed Pump FP-2 is maintained by Grace Hopper. "
    "The Feed Pump FP-2 moves water from the river intake to the filters.\n"
)
PRIVATE_TEXT = (
    "Project Heliotrope: the Zephyr Turbine ZT-9 is maintained by Hedy Lamarr. "
    "The Zephyr Turbine ZT-9 will replace the Feed Pump FP-2 next spring.\n"
)
SECRETS = ("Heliotrope", "Hedy", "heliotrope", "hedy")
TURBINE = "Who maintains the Zephyr Turbine ZT-9?"
PUMP = "Who maintains the Feed Pump FP-2 and what will replace it?"
CIRCLE = "Show me a picture of a red circle."


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], list[Path]]:
    folder = tmp_path_factory.mktemp("acl-corpus")
    public = folder / "public.md"
    public.write_text(PUBLIC_TEXT, encoding="utf-8")
    private = folder / "heliotrope.md"
    private.write_text(PRIVATE_TEXT, encoding="utf-8")
    rng = random.Random(3)
    circle, square = folder / "secret_circle.png", folder / "blue_square.png"
    draw_shape("red", "circle", rng).save(circle)
    draw_shape("blue", "square", rng).save(square)
    return [public, square], [private, circle]


@pytest.fixture(scope="module")
def store(module_engine: Engine) -> Iterator[GraphStore]:
    s = module_engine.open()
    yield s
    s.close()


@pytest.fixture(scope="module")
def agent(store: GraphStore, corpus: tuple[list[Path], list[Path]]) -> KnowledgeAgent:
    a = KnowledgeAgent(
        store, factory.text_embedder(Settings()), image_embedder=cache(tiny_clip_embedder)
    )
    public, private = corpus
    assert a.ingest([str(p) for p in public]).failed == 0
    assert a.ingest([str(p) for p in private], acl=["user:alice"]).failed == 0
    return a


@pytest.fixture(scope="module")
def private_docs(store: GraphStore) -> set[str]:
    rows = store.read("document_list", {"principals": [], "admin": True})
    docs = {r["id"] for r in rows if "user:alice" in (r.get("acl") or [])}
    if not docs:  # document_list may not return the acl: ask the graph
        docs = {
            r["id"]
            for r in store.read_freeform(
                "MATCH (d:Document) WHERE 'user:alice' IN d.acl RETURN d.id AS id"
            )
        }
    assert len(docs) == 2
    return docs


def _returned(store: GraphStore, query_id: str) -> list[dict[str, object]]:
    return store.read_freeform(
        "MATCH (:Query {id: $id})-[:PLANNED]->(:Plan)-[:HAS_STEP]->(:Step)-[:RETURNED]->(n) "
        "OPTIONAL MATCH (n)-[:PART_OF]->(d:Document) "
        "OPTIONAL MATCH (n)<-[:MENTIONS|DEPICTS]-(m)-[:PART_OF]->(md:Document) "
        "RETURN DISTINCT n.id AS id, labels(n) AS labels, d.id AS doc, "
        "collect(DISTINCT md.id) AS mentioned_in",
        {"id": query_id},
    )


def _assert_nothing_private(store: GraphStore, answer: Answer, private: set[str]) -> None:
    assert not any(s in answer.answer for s in SECRETS), answer.answer
    assert not {c.document_id for c in answer.citations} & private
    returned = _returned(store, answer.query_id)
    assert returned, "the trace returned nothing: the check would be empty"
    for row in returned:
        if "Entity" in row["labels"]:  # type: ignore[operator]
            assert set(row["mentioned_in"]) - private, row  # type: ignore[arg-type]
        else:
            assert row["doc"] not in private, row
    trace = json.dumps(read_trace(store, answer.query_id, OPERATOR).to_json())
    assert not any(d in trace for d in private)
    assert not any(s in trace for s in SECRETS)


@pytest.mark.parametrize("question", [TURBINE, PUMP, CIRCLE])
def test_bob_never_sees_alices_document(
    agent: KnowledgeAgent, store: GraphStore, private_docs: set[str], question: str
) -> None:
    answer = agent.ask(question, user="bob", groups=["engineering"])
    _assert_nothing_private(store, answer, private_docs)


@pytest.mark.parametrize("question", [TURBINE, CIRCLE])
def test_alice_does_see_her_document(
    agent: KnowledgeAgent, private_docs: set[str], question: str
) -> None:
    answer = agent.ask(question, user="alice")
    assert {c.document_id for c in answer.citations} & private_docs
    if question == TURBINE:
        assert "Hedy Lamarr" in answer.answer


def test_entity_resolution_is_filtered(agent: KnowledgeAgent) -> None:
    assert agent.resolve_entities(["Zephyr Turbine ZT-9"], AccessContext(user="bob")) == []
    found = agent.resolve_entities(["Zephyr Turbine ZT-9"], AccessContext(user="alice"))
    assert [e.name for e in found] == ["Zephyr Turbine ZT-9"]


def test_memory_of_one_user_is_not_read_for_another(
    agent: KnowledgeAgent, store: GraphStore, private_docs: set[str]
) -> None:
    mine = agent.ask(TURBINE, session_id="shared", user="alice")
    assert "Hedy Lamarr" in mine.answer
    theirs = agent.ask("give me that as a list", session_id="shared", user="bob")
    assert theirs.iterations >= 1  # no history for bob: nothing to reformat
    _assert_nothing_private(store, theirs, private_docs)
    again = agent.ask("give me that as a list", session_id="shared", user="alice")
    assert again.iterations == 0 and "Hedy Lamarr" in again.answer


def test_cypher_template_tool_reads_as_the_caller(agent: KnowledgeAgent, store: GraphStore) -> None:
    tools = default_registry()
    args = {"template": "entity_chunks", "params": {"entity_ids": ["zephyr turbine zt9"]}}
    bob = tools.bind(ToolContext(store=store, access=AccessContext(user="bob")))
    alice = tools.bind(ToolContext(store=store, access=AccessContext(user="alice")))
    assert "llm_generate" not in bob  # no LLM client: not offered
    assert bob["cypher_template"](args) == []
    assert any("Hedy Lamarr" in (h.text or "") for h in alice["cypher_template"](args))
    with pytest.raises(QueryRefusedError, match="allow-listed"):
        bob["cypher_template"]({"template": "trace_answer"})
    with pytest.raises(QueryRefusedError, match="set by kgrag"):
        bob["cypher_template"]({**args, "params": {"entity_ids": [], "admin": True}})
    freeform = {"cypher": "MATCH (d:Document) RETURN d.id AS id, d.title AS title"}
    with pytest.raises(QueryRefusedError, match="admin"):
        bob["cypher_template"](freeform)
    admin = tools.bind(ToolContext(store=store, access=AccessContext(admin=True)))
    assert len(admin["cypher_template"](freeform)) == 4
    with pytest.raises(KgragError):
        admin["cypher_template"]({"cypher": "CREATE (n:Document {id: 'x'}) RETURN n.id AS id"})
    assert admin["calculator"]({"expression": "2 ** 10 - 24"})[0].text == "2 ** 10 - 24 = 1000"


# On a store of its own: the `engine` fixture's tests run after the module's (pytest orders the
# tests of a module-scoped parameter first), so on Neo4j emptying the one database loses nothing.
def test_cli_acl_user_groups_session_end_to_end(
    engine: Engine, corpus: tuple[list[Path], list[Path]]
) -> None:
    runner = CliRunner(env={**engine.env(), "KGRAG_DATA_DIR": str(engine.folder)})
    store = engine.uri
    public, private = corpus
    texts = [p for p in [*public, *private] if p.suffix == ".md"]
    base = ["--quiet"]
    result = runner.invoke(
        app, [*base, "ingest", str(texts[1]), "--acl", "group:alice", "--store", store, "--json"]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, [*base, "ingest", str(texts[0]), "--store", store, "--json"])
    assert result.exit_code == 0, result.output

    def ask(*args: str) -> dict[str, object]:
        r = runner.invoke(app, [*base, "ask", *args, "--store", store, "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)

    bob = ask(TURBINE, "--user", "bob", "--groups", "engineering,ops", "--session", "cli")
    assert set(bob) >= {"query_id", "answer", "citations", "exit_reason", "iterations"}
    assert not any(s in str(bob["answer"]) for s in SECRETS)
    member = ask(TURBINE, "--user", "carol", "--groups", "ops,alice", "--session", "cli2")
    assert "Hedy Lamarr" in str(member["answer"])
    listed = ask(
        "give me that as a list", "--user", "carol", "--groups", "ops,alice", "--session", "cli2"
    )
    assert listed["iterations"] == 0 and "Hedy Lamarr" in str(listed["answer"])
    assert [c["node_id"] for c in listed["citations"]] == [  # type: ignore[union-attr]
        c["node_id"]
        for c in member["citations"]  # type: ignore[union-attr]
    ]
