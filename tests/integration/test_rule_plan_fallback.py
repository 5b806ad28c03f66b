"""The rule plan's entity fallback on both engines (embedded FalkorDB, Neo4j): the named entities'
chunks (and the paths between them) are read only when the vector search found nothing, and then
seed the PageRank expansion; with vector hits they are skipped and the bridge retrieval runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from kgrag.executor.base import StepOutcome
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.models import Plan
from tests.support.across import outcomes_digest, same_on_both_engines
from tests.support.corpus import PAINTERS, corpus_agent, run_plan
from tests.support.embedders import UnavailableEmbedder
from tests.support.engines import Engine

#: Three passages of a 2-hop chain and a distractor (tests/support/corpus.py).
CORPUS = {
    name: PAINTERS[name]
    for name in ("quiet_harbour.txt", "mirela_vastok.txt", "kestrin.txt", "tomas_brenn.txt")
}
QUESTION = "Did Mirela Vastok grow up in Kestrin?"


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    # the same paths for both engines (tests/support/across.py)
    yield from corpus_agent(module_engine, tmp_path_factory, "test_rule_plan_fallback", CORPUS)


def _run(agent: KnowledgeAgent, embedder: TextEmbedder) -> tuple[Plan, dict[int, StepOutcome]]:
    plan, analysis = agent.plan(QUESTION)
    assert len(analysis.entity_mentions) >= 2, analysis.entity_mentions
    return plan, run_plan(agent, plan, embedder=embedder)


def _steps(plan: Plan, template: str) -> list[int]:
    return [
        s.step_id
        for s in plan.plan
        if s.type == "graph_query" and s.parameters.template == template  # type: ignore[union-attr]
    ]


def test_entity_steps_are_skipped_when_the_vector_search_finds_hits(
    agent: KnowledgeAgent, request: pytest.FixtureRequest
) -> None:
    plan, outcomes = _run(agent, agent.text_embedder)
    same_on_both_engines(request, "outcomes", outcomes_digest(agent.store, outcomes))
    entity_steps = _steps(plan, "entity_chunks") + _steps(plan, "entity_paths")
    assert len(entity_steps) == 2
    assert all(outcomes[s].status == "skipped" for s in entity_steps)
    hop = next(s for s in plan.plan if s.type == "multi_hop")
    ran = [text for text, _ in outcomes[hop.step_id].statements]
    assert outcomes[hop.step_id].status == "ok" and agent.store.statement("bridge_entities") in ran
    text, _ = final_evidence(plan, outcomes)
    assert "Mirela Vastok" in {h.title for h in text}


def test_entities_seed_pagerank_when_the_vector_search_fails(
    agent: KnowledgeAgent, request: pytest.FixtureRequest
) -> None:
    plan, outcomes = _run(agent, UnavailableEmbedder(agent.text_embedder))
    # The lexical step and the aggregates are left out of the comparison: FalkorDB's full-text
    # tokeniser (RediSearch) does not split words at a line break ("Kestrin\nKestrin is" is one
    # token), which its template makes up for with prefix searches, so the engines' candidate
    # pools may still differ.
    lexical = {
        *_steps(plan, "chunks_fulltext"),
        *(s.step_id for s in plan.plan if s.type == "aggregate"),
    }
    digest = outcomes_digest(agent.store, outcomes)
    same_on_both_engines(request, "outcomes", {k: v for k, v in digest.items() if k not in lexical})
    assert outcomes[1].status == "error"
    (chunks,) = _steps(plan, "entity_chunks")
    assert outcomes[chunks].status == "ok" and outcomes[chunks].count > 0
    hop = next(s for s in plan.plan if s.type == "multi_hop")
    ran = [text for text, _ in outcomes[hop.step_id].statements]
    assert outcomes[hop.step_id].status == "ok", outcomes[hop.step_id].error
    assert agent.store.statement("bridge_entities") not in ran  # no re-query: PageRank
    assert agent.store.statement("expand_from_entities") in ran
    text, _ = final_evidence(plan, outcomes)
    assert {"Mirela Vastok", "Kestrin"} & {h.title for h in text}
