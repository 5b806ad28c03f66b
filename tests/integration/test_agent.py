"""The agent's offline paths on both engines (embedded FalkorDB, Neo4j) with real MiniLM
embeddings: multi-hop extractive answers with citations that the trace returned, the
evaluate/refine loop and its exit reasons, typed events from ``stream``, conversation memory in
the graph, groundedness."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.answer import Answer
from kgrag.agent.audit import build_audit
from kgrag.agent.limits import QueryLimits
from kgrag.config import Settings
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from tests.support.across import (  # noqa: F401 (a fixture)
    answer_digest,
    compared_across_engines,
    same_on_both_engines,
    shared_folder,
)
from tests.support.engines import Engine

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

EXIT_REASONS = {
    "satisfied",
    "max_iterations",
    "redundant_query",
    "no_next_query",
    "budget_exceeded",
}

CORPUS = {
    "roster.md": "# Maintenance roster\n\nThe Pressure Valve PV-7 is maintained by Ada Lovelace. "
    "She inspects it every Monday.\n\nThe Feed Pump FP-2 is maintained by Grace Hopper, who "
    "also keeps the spare seals.\n",
    "minutes.txt": "Minutes of the Riverside meeting. The meeting agreed to replace the "
    "Pressure Valve PV-7 next week. The new valve arrives on Thursday.\n",
    "incidents.txt": "On 3 March the Feed Pump FP-2 lost pressure after a seal failed. "
    "Grace Hopper replaced the seal.\n",
    "manual.md": "# Pump manual\n\nThe Feed Pump FP-2 moves water from the river intake to the "
    "filters. The Feed Pump FP-2 builds pressure for the filter beds.\n",
    "canteen.txt": "The canteen serves soup on Fridays. Parking is behind the station.\n",
}


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


@pytest.fixture(scope="module")
def store(module_engine: Engine) -> Iterator[GraphStore]:
    s = module_engine.open()
    yield s
    s.close()


@pytest.fixture(scope="module")
def agent(
    store: GraphStore, embedder: TextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> KnowledgeAgent:
    # the same paths for both engines (tests/support/across.py)
    corpus = shared_folder(tmp_path_factory, "test_agent")
    for name, text in CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    a = KnowledgeAgent(store, embedder)
    report = a.ingest([str(corpus)])
    assert report.ingested == len(CORPUS) and report.failed == 0
    return a


def _returned_ids(store: GraphStore, query_id: str) -> set[str]:
    return {
        r["id"]
        for step in read_trace(store, query_id, OPERATOR).to_json()["steps"]
        for r in step["returned"]
    }


def _check_citations(store: GraphStore, answer: Answer) -> None:
    """Every marker in the text is a citation; every citation was returned by a trace step."""
    markers = {int(m) for m in re.findall(r"\[(\d+)\]", answer.answer)}
    assert markers == {c.marker for c in answer.citations}
    assert {c.node_id for c in answer.citations} <= _returned_ids(store, answer.query_id)
    assert "(Source: " in answer.answer


def test_multi_hop_question_follows_the_meeting_to_the_maintainer(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    answer = agent.ask("Who maintains the part that the meeting agreed to replace?")
    same_on_both_engines(request, "answer", answer_digest(store, answer))
    assert answer.mode == "extractive"
    assert answer.answer.startswith("Extractive answer")
    assert "Ada Lovelace" in answer.answer
    titles = {c.uri.rsplit("/", 1)[-1] for c in answer.citations if c.uri}
    assert {"roster.md", "minutes.txt"} <= titles
    assert "canteen" not in answer.answer.lower()
    _check_citations(store, answer)
    assert answer.exit_reason in EXIT_REASONS and answer.iterations >= 1
    assert answer.groundedness == 1.0 and answer.verdict == "grounded"
    q = store.read("trace_read_query", {"id": answer.query_id})[0]
    assert q["exit_reason"] == answer.exit_reason and q["iterations"] == answer.iterations
    assert q["groundedness"] == answer.groundedness and q["answer_mode"] == "extractive"


def test_sentences_without_key_term_support_are_not_chosen(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    answer = agent.ask("What happened to the Feed Pump FP-2 and who fixed it?")
    same_on_both_engines(request, "answer", answer_digest(store, answer))
    assert "lost pressure after a seal failed" in answer.answer
    assert "Grace Hopper replaced the seal" in answer.answer
    assert "soup" not in answer.answer and "Thursday" not in answer.answer


def test_unanswerable_question_refines_and_stops_with_a_reason(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    events: list[object] = []
    answer = agent.ask("What is the warranty of the zeppelin quasar?", on_event=events.append)
    same_on_both_engines(request, "answer", answer_digest(store, answer))
    same_on_both_engines(request, "decisions", [d.model_dump() for d in answer.decisions])
    evaluations = [e for e in events if getattr(e, "kind", None) == "evaluation"]
    assert evaluations[0].decision == "REFINE"  # type: ignore[attr-defined]
    assert evaluations[0].next_query  # type: ignore[attr-defined]
    assert answer.iterations >= 2
    # the loop stopped (limit, repeat or no next query); nothing supports an answer: abstained
    assert answer.exit_reason == "not_found" and answer.citations == ()
    plan = read_trace(store, answer.query_id, OPERATOR).to_json()["plan"]["json"]["plan"]
    explanations = [s["trace"]["explanation"] for s in plan]
    assert any(e.startswith("iteration 2") for e in explanations)
    assert len({s["step_id"] for s in plan}) == len(plan)

    # every judged iteration's decision is returned and stored on the Query node
    decisions = answer.decisions
    assert [d.decision for d in decisions] == [e.decision for e in evaluations]  # type: ignore[attr-defined]
    assert decisions[0].query == "What is the warranty of the zeppelin quasar?"
    assert decisions[0].next_query == evaluations[0].next_query  # type: ignore[attr-defined]
    assert [d.iteration for d in decisions] == list(range(1, len(decisions) + 1))
    if len(decisions) > 1:
        assert decisions[1].query == decisions[0].next_query
    row = store.read_freeform(
        "MATCH (q:Query {id: $id}) RETURN q.decisions AS d", {"id": answer.query_id}
    )[0]
    assert row["d"] == [d.decision for d in decisions]
    stored = read_trace(store, answer.query_id, OPERATOR).to_json()["query"]["decisions"]
    assert stored == [d.model_dump() for d in decisions]
    report = build_audit(store, answer.query_id, OPERATOR)
    assert any(line.startswith("iteration 1 (") and "REFINE" in line for line in report.reasoning)


def test_max_iterations_one_stops_after_one_iteration(
    store: GraphStore, embedder: TextEmbedder, agent: KnowledgeAgent, request: pytest.FixtureRequest
) -> None:
    once = KnowledgeAgent(store, embedder, limits=QueryLimits(max_iterations=1))
    answer = once.ask("What is the warranty of the zeppelin quasar?")
    same_on_both_engines(request, "answer", answer_digest(store, answer))
    # one iteration, judged REFINE, then stopped by the limit; the answer abstains
    assert answer.iterations == 1 and [d.decision for d in answer.decisions] == ["REFINE"]
    assert answer.exit_reason == "not_found"


# On a store of its own: the `engine` fixture's tests run after the module's (pytest orders the
# tests of a module-scoped parameter first), so on Neo4j emptying the one database loses nothing.
def test_limits_from_settings_reach_the_questions(
    engine: Engine, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp_path = shared_folder(tmp_path_factory, "test_agent-limits")
    settings = engine.settings(max_iterations=1, data_dir=engine.folder)
    (tmp_path / "note.txt").write_text("The zeppelin hangar opens at dawn.", encoding="utf-8")
    with KnowledgeAgent.open(settings) as opened:
        assert opened.limits == QueryLimits.from_settings(settings)
        opened.ingest([str(tmp_path / "note.txt")])
        answer = opened.ask("What is the warranty of the zeppelin quasar?")
        same_on_both_engines(request, "answer", answer_digest(opened.store, answer))
    assert (answer.exit_reason, answer.iterations) == ("not_found", 1)


def test_stream_yields_typed_events_in_order(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    events = list(agent.stream("Who keeps the spare seals?"))
    kinds = [e.kind for e in events]
    same_on_both_engines(request, "kinds", kinds)
    assert kinds[0] == "plan" and kinds[-2:] == ["answer", "complete"]
    assert "step" in kinds and "evaluation" in kinds
    plan_event = events[0]
    assert plan_event.kind == "plan"
    steps = [e for e in events if e.kind == "step" and e.iteration == 1]
    assert {s.step_id for s in steps} == set(plan_event.plan.step_ids)
    answer, complete = events[-2], events[-1]
    assert answer.kind == "answer" and complete.kind == "complete"
    assert answer.answer.query_id == complete.query_id
    assert complete.exit_reason == answer.answer.exit_reason
    assert "Grace Hopper" in answer.answer.answer
    same_on_both_engines(request, "answer", answer_digest(store, answer.answer))


def test_stream_raises_the_error_of_the_run(agent: KnowledgeAgent) -> None:
    from kgrag.errors import InvalidTextError

    with pytest.raises(InvalidTextError, match="invalid question: it is empty"):
        list(agent.stream("   "))


def test_session_follow_ups_and_reformat_without_retrieval(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    first = agent.ask("What happened to the Feed Pump FP-2?", session_id="s-mem", user="ada")
    follow = agent.ask("what does it build?", session_id="s-mem", user="ada")
    assert follow.resolved_question is not None and "Feed Pump FP-2" in follow.resolved_question
    assert "builds pressure for the filter beds" in follow.answer
    events: list[object] = []
    listed = agent.ask(
        "give me that as a list", session_id="s-mem", user="ada", on_event=events.append
    )
    assert listed.iterations == 0 and not any(getattr(e, "kind", "") == "plan" for e in events)
    assert [c.node_id for c in listed.citations] == [c.node_id for c in follow.citations]
    assert "builds pressure for the filter beds" in listed.answer
    assert listed.answer.splitlines()[2].startswith("- ")
    reused = store.read_freeform(
        "MATCH (q:Query {id: $id}) RETURN q.reuses AS reuses", {"id": listed.query_id}
    )
    assert reused == [{"reuses": follow.query_id}]  # the trace whose evidence it cites
    cited = read_trace(store, listed.query_id, OPERATOR).to_json()["answer"]["citations"]
    assert {c["node_id"] for c in cited} <= _returned_ids(store, follow.query_id)
    turns = store.read_freeform(
        "MATCH (:Session {id: $s})-[t:HAS_TURN]->(q:Query) RETURN t.n AS n, q.id AS id ORDER BY n",
        {"s": "s-mem"},
    )
    assert [(r["n"], r["id"]) for r in turns] == [
        (1, first.query_id),
        (2, follow.query_id),
        (3, listed.query_id),
    ]
    # another user in the same session sees none of ada's history
    other = agent.ask("what does it build?", session_id="s-mem", user="bob")
    assert other.resolved_question == "what does it build?"
    for label, got in (("first", first), ("follow", follow), ("listed", listed), ("other", other)):
        same_on_both_engines(request, label, answer_digest(store, got))


def test_tell_me_more_carries_the_entities_of_the_previous_answer(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    agent.ask("Who maintains the part that the meeting agreed to replace?", session_id="s-more")
    more = agent.ask("tell me more about that", session_id="s-more")
    same_on_both_engines(request, "resolved", more.resolved_question)
    same_on_both_engines(request, "answer", answer_digest(store, more))
    assert more.resolved_question is not None
    assert "Pressure Valve PV-7" in more.resolved_question or "Ada Lovelace" in (
        more.resolved_question
    )
    assert "PV-7" in more.answer


def test_noisy_evidence_is_filtered_to_supporting_documents(
    agent: KnowledgeAgent, store: GraphStore, request: pytest.FixtureRequest
) -> None:
    events: list[object] = []
    answer = agent.ask("Where is the parking?", on_event=events.append)
    same_on_both_engines(request, "answer", answer_digest(store, answer))
    decisions = [
        getattr(e, "decision", None) for e in events if getattr(e, "kind", "") == "evaluation"
    ]
    assert decisions == ["FILTER", "SATISFIED"]
    assert (answer.exit_reason, answer.iterations) == ("satisfied", 2)
    assert {c.uri.rsplit("/", 1)[-1] for c in answer.citations if c.uri} == {"canteen.txt"}
    steps = read_trace(store, answer.query_id, OPERATOR).to_json()["steps"]
    filters = [s for s in steps if s["type"] == "filter" and s["parameters"].get("document_ids")]
    assert len(filters) == 1 and filters[0]["status"] == "ok"
    assert all(r["id"] in _returned_ids(store, answer.query_id) for r in filters[0]["returned"])
