"""Access control of the PageRank ``multi_hop`` path on both engines (embedded FalkorDB, Neo4j) with
real MiniLM embeddings: bob's rule plan whose vector search found nothing seeds the expansion from
the ``entity_chunks`` of an entity that alice's private document also mentions. Nothing of that
document (its id, its chunks, its text, the entities only it mentions) reaches bob's results, the
stored Cypher parameters of his trace or his audit, and his ranking is the one he got before the
private document existed (no side channel through co-occurrence weights); alice, with the same plan,
does reach them (so the checks can fail)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.audit import build_audit
from kgrag.core import OPERATOR, AccessContext
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.scheduler import Executor
from kgrag.executor.trace import TraceWriter, read_trace
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from kgrag.planner.rule import rule_plan
from tests.support.across import (  # noqa: F401 (a fixture)
    compared_across_engines,
    outcomes_digest,
    same_on_both_engines,
    shared_folder,
)
from tests.support.embedders import UnavailableEmbedder
from tests.support.engines import Engine

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

PUBLIC = {
    "pump.md": "The Feed Pump FP-2 is maintained by Grace Hopper. "
    "The Feed Pump FP-2 moves water from the river intake to the filters.\n",
    "valve.md": "The Intake Valve IV-3 is inspected by Grace Hopper every week. "
    "The Intake Valve IV-3 closes when the river floods.\n",
}
PRIVATE = (
    "Project Heliotrope: the Zephyr Turbine ZT-9 is maintained by Hedy Lamarr. "
    "The Zephyr Turbine ZT-9 will replace the Feed Pump FP-2 and the Intake Valve IV-3 "
    "next spring.\n"
)
SECRETS = ("heliotrope", "hedy", "zephyr", "lamarr", "zt-9", "zt9")
QUESTION = "Who maintains the Feed Pump FP-2?"
BOB = AccessContext(user="bob", groups=("engineering",))
ALICE = AccessContext(user="alice")


@dataclass
class World:
    agent: KnowledgeAgent
    private_doc: str
    private_chunks: set[str]
    private_entities: dict[str, str]  # id -> name: entities only the private document mentions
    bob_before: list[tuple[str, float]]  # bob's multi_hop ranking before it was ingested


def _plan(agent: KnowledgeAgent, access: AccessContext) -> Plan:
    found = agent.resolve_entities(["Feed Pump FP-2"], access)
    assert [e.id for e in found] == ["feed pump fp2"], found
    return rule_plan(QUESTION, entity_ids=[e.id for e in found], hops=3)


def _run(agent: KnowledgeAgent, access: AccessContext) -> tuple[Plan, dict[int, StepOutcome]]:
    plan = _plan(agent, access)
    env = ExecutionEnv(
        store=agent.store, text_embedder=UnavailableEmbedder(agent.text_embedder), access=access
    )
    return plan, Executor(env).run(plan)


def _hop(plan: Plan, outcomes: dict[int, StepOutcome]) -> StepOutcome:
    step = next(s for s in plan.plan if s.type == "multi_hop")
    out = outcomes[step.step_id]
    assert out.status == "ok", out.error
    return out


@pytest.fixture(scope="module")
def world(module_engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    # the same paths for both engines (tests/support/across.py)
    root = shared_folder(tmp_path_factory, "test_acl_pagerank")
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in PUBLIC.items():
        (docs / name).write_text(text, encoding="utf-8")
    private = root / "heliotrope.md"
    private.write_text(PRIVATE, encoding="utf-8")
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as agent:
        assert agent.ingest([str(docs)]).ingested == len(PUBLIC)
        plan, outcomes = _run(agent, BOB)
        before = [(h.id, h.score) for h in _hop(plan, outcomes).result]
        report = agent.ingest([str(private)], acl=["user:alice"])
        assert report.ingested == 1, report.failures
        (doc,) = report.document_ids
        chunks = {
            r["id"]
            for r in store.read_freeform(
                "MATCH (c:Chunk)-[:PART_OF]->(:Document {id: $id}) RETURN c.id AS id", {"id": doc}
            )
        }
        only_private = store.read_freeform(
            "MATCH (e:Entity)<-[:MENTIONS]-(:Chunk)-[:PART_OF]->(d:Document) "
            "WITH e, collect(DISTINCT d.id) AS docs WHERE docs = [$id] "
            "RETURN e.id AS id, e.name AS name",
            {"id": doc},
        )
        entities = {r["id"]: r["name"] for r in only_private}
        assert {"zephyr turbine zt9", "hedy lamarr"} <= set(entities), entities
        yield World(agent, doc, chunks, entities, before)


def _stable(world: World, value: Any) -> Any:
    from tests.support.across import stable_ids

    return stable_ids(world.agent.store, value)


def _secrets(world: World) -> list[str]:
    names = [n.lower() for n in world.private_entities.values()]
    return [world.private_doc, *world.private_chunks, *world.private_entities, *names, *SECRETS]


def _leaks(world: World, value: Any) -> list[str]:
    text = (value if isinstance(value, str) else json.dumps(value, default=str)).lower()
    return [s for s in _secrets(world) if s.lower() in text]


def _traced(
    world: World, access: AccessContext, query_id: str
) -> tuple[Plan, dict[int, StepOutcome]]:
    plan, outcomes = _run(world.agent, access)
    writer = TraceWriter(world.agent.store)
    writer.write_query(query_id, QUESTION, user=access.user, groups=access.groups, planner="rule")
    writer.write_plan(query_id, f"{query_id}:plan", plan, outcomes, source="rule")
    return plan, outcomes


def test_bobs_pagerank_walk_never_reaches_alices_document(
    world: World, request: pytest.FixtureRequest
) -> None:
    plan, outcomes = _traced(world, BOB, "q-bob")
    same_on_both_engines(request, "outcomes", outcomes_digest(world.agent.store, outcomes))
    hop = _hop(plan, outcomes)
    store = world.agent.store
    ran = [text for text, _ in hop.statements]
    # the PageRank path ran, through every hop, and found bob's evidence: the check is not empty
    assert store.statement("bridge_entities") not in ran
    assert ran.count(store.statement("expand_from_entities")) >= 1
    assert any("Feed Pump FP-2" in (h.text or "") for h in hop.result)
    reached = {i for _, params in hop.statements for i in params.get("ids", [])}
    assert "grace hopper" in reached and "feed pump fp2" in reached
    # nothing private in any step's results or in any parameter bob's reads were given
    for out in outcomes.values():
        assert not _leaks(world, [h.model_dump() for h in out.result])
        assert not _leaks(world, [params for _, params in out.statements])
    # ... nor in the stored trace (cypher_parameters included) or the audit, JSON and HTML
    trace = read_trace(store, "q-bob", OPERATOR).to_json()
    step = next(s for s in trace["steps"] if s["type"] == "multi_hop")
    assert step["cypher_parameters"], "no parameters were traced: the check would be empty"
    assert not _leaks(world, trace)
    audit = build_audit(store, "q-bob", OPERATOR)
    assert not _leaks(world, audit.model_dump(mode="json"))
    assert not _leaks(world, audit.to_html())


def test_bobs_ranking_does_not_depend_on_alices_document(
    world: World, request: pytest.FixtureRequest
) -> None:
    plan, outcomes = _run(world.agent, BOB)
    after = [(h.id, h.score) for h in _hop(plan, outcomes).result]
    same_on_both_engines(request, "before", _stable(world, world.bob_before))
    same_on_both_engines(request, "after", _stable(world, after))
    assert [i for i, _ in after] == [i for i, _ in world.bob_before]
    assert [s for _, s in after] == pytest.approx([s for _, s in world.bob_before])


def test_alice_does_reach_her_document_and_its_entities(
    world: World, request: pytest.FixtureRequest
) -> None:
    plan, outcomes = _traced(world, ALICE, "q-alice")
    same_on_both_engines(request, "outcomes", outcomes_digest(world.agent.store, outcomes))
    hop = _hop(plan, outcomes)
    assert world.private_chunks & {h.id for h in hop.result}
    reached = {i for _, params in hop.statements for i in params.get("ids", [])}
    assert {"zephyr turbine zt9", "hedy lamarr"} <= reached
    trace = read_trace(world.agent.store, "q-alice", OPERATOR).to_json()
    step = next(s for s in trace["steps"] if s["type"] == "multi_hop")
    assert {"zephyr turbine zt9", "hedy lamarr"} <= set(_leaks(world, step["cypher_parameters"]))
    assert world.private_doc in json.dumps(step["returned"]) or any(
        r["id"] in world.private_chunks for r in step["returned"]
    )
