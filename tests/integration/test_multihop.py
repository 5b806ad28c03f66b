"""Multi-hop retrieval on both engines (embedded FalkorDB, Neo4j) with real MiniLM embeddings: the
rule plan (bridge retrieval in its ``multi_hop`` step) finds the passage of every hop of a 2-hop and
a 3-hop question, where plain vector search over the same store misses one hop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from kgrag.core import Hit
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from kgrag.planner.rule import rule_plan
from tests.support.across import (  # noqa: F401 (a fixture)
    compared_across_engines,
    same_on_both_engines,
    shared_folder,
)
from tests.support.corpus import PAINTERS, corpus_agent, run_plan
from tests.support.engines import Engine

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

CORPUS = PAINTERS
TWO_HOP = "In which town was the painter of The Quiet Harbour born?"
TWO_HOP_GOLD = {"The Quiet Harbour", "Mirela Vastok"}
THREE_HOP = "Which river flows through the town where the painter of The Quiet Harbour grew up?"
THREE_HOP_GOLD = {"The Quiet Harbour", "Mirela Vastok", "Kestrin"}


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    # the same paths for both engines (tests/support/across.py)
    yield from corpus_agent(module_engine, tmp_path_factory, "test_multihop", CORPUS)


def _titles(hits: list[Hit], n: int) -> list[str]:
    return list(dict.fromkeys(h.title for h in hits if h.title))[:n]


def _dense(agent: KnowledgeAgent, question: str, n: int) -> list[str]:
    plan = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "parameters": {"query": question, "index": "chunk_embedding", "k": n},
                }
            ]
        }
    )
    return _titles(run_plan(agent, plan)[1].result, n)


def _kgrag(
    agent: KnowledgeAgent, question: str, n: int, hops: int
) -> tuple[list[str], Plan, list[str]]:
    """The rule plan the agent makes (2 hops by default), through the executor."""
    default, analysis = agent.plan(question)
    entity_ids = [e.id for e in analysis.entity_mentions]
    plan = default if hops == 2 else rule_plan(question, entity_ids=entity_ids, hops=hops)
    outcomes = run_plan(agent, plan)
    text, _images = final_evidence(plan, outcomes)
    hop = next(s for s in plan.plan if s.type == "multi_hop")
    assert outcomes[hop.step_id].status == "ok", outcomes[hop.step_id].error
    statements = [name for name, _params in outcomes[hop.step_id].statements]
    return _titles(text, n), plan, statements


@pytest.mark.parametrize(
    ("question", "gold", "hops"),
    [(TWO_HOP, TWO_HOP_GOLD, 2), (THREE_HOP, THREE_HOP_GOLD, 3)],
    ids=["2hop", "3hop"],
)
def test_every_hop_is_retrieved_where_vector_search_misses_one(
    agent: KnowledgeAgent, question: str, gold: set[str], hops: int, request: pytest.FixtureRequest
) -> None:
    n = 5  # recall@5, the benchmark's cut-off
    dense = _dense(agent, question, n)
    found, plan, statements = _kgrag(agent, question, n, hops)
    same_on_both_engines(request, "dense", dense)
    same_on_both_engines(request, "kgrag", found)
    assert not gold <= set(dense), f"plain vector search already finds every hop: {dense}"
    assert "Mirela Vastok" not in dense  # the bridge passage is the hop it misses
    assert gold <= set(found), f"kgrag top {n}: {found}"
    # the passage vector search did rank first stays on top
    assert found[0] == dense[0]
    # the hop was found through the graph: the bridge entities were read by Cypher
    assert sum("MENTIONS" in s for s in statements) == hops - 1  # one bridge round per hop
    assert [s.type for s in plan.plan][:1] == ["vector_search"]


def _long_document(root_text: str, filler: str, n: int) -> str:
    return " ".join([root_text, *(filler.format(i=i) for i in range(n))])


# On a store of its own: the `engine` fixture's tests run after the module's (pytest orders the
# tests of a module-scoped parameter first), so on Neo4j emptying the one database loses nothing.
def test_multi_hop_walks_only_the_relationships_it_names(
    engine: Engine, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = shared_folder(tmp_path_factory, "test_multihop-next")
    text = _long_document(
        "The zeppelin hangar doors carry a warranty of seven years from Hallmark Doors.",
        "Inspection note {i} records that the hangar crew oiled the rails and checked the seals.",
        60,
    )
    (root / "hangar.txt").write_text(text, encoding="utf-8")
    store = engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        assert a.ingest([str(root / "hangar.txt")]).ingested == 1
        chunks = [
            r["id"]
            for r in store.read_freeform(
                "MATCH (c:Chunk) RETURN c.id AS id ORDER BY c.position", {}
            )
        ]
        assert len(chunks) >= 3

        def hop(relationships: list[str]) -> tuple[list[str], list[str]]:
            plan = Plan.parse(
                {
                    "plan": [
                        {
                            "step_id": 1,
                            "type": "vector_search",
                            "parameters": {
                                "query": "warranty of the zeppelin hangar doors",
                                "k": 1,
                            },
                        },
                        {
                            "step_id": 2,
                            "type": "multi_hop",
                            "dependencies": [1],
                            "parameters": {
                                "seeds_from": [1],
                                "hops": 1,
                                "relationships": relationships,
                                "k": 5,
                            },
                        },
                    ]
                }
            )
            outcomes = run_plan(a, plan)
            assert [h.id for h in outcomes[1].result] == [chunks[0]]
            assert outcomes[2].status == "ok", outcomes[2].error
            names = [
                store.statement(n) for n in ("expand_next_chunks", "expand_entities_of_chunks")
            ]
            ran = [names.index(t) for t, _ in outcomes[2].statements if t in names]
            return [h.id for h in outcomes[2].result], [("NEXT", "MENTIONS")[i] for i in ran]

        reached, walked = hop(["NEXT"])
        same_on_both_engines(request, "reached", [chunks.index(c) for c in reached])
        assert walked == ["NEXT"]
        assert chunks[1] in reached and chunks[2] not in reached  # one hop along reading order
        _, walked = hop(["RELATED"])
        assert walked == []  # from chunks, RELATED alone reaches nothing: no chunk walk at all
