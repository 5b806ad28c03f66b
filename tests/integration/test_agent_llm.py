"""The agent's LLM paths, on both engines (embedded FalkorDB, Neo4j), against a real local HTTP
server speaking the OpenAI wire format (tests/support/openai_server.py) with the real ``openai``
client: synthesis with numbered citations (markers that point at no evidence dropped), the LLM judge
driving a refinement, the groundedness judge removing unsupported sentences and triggering a second
synthesis, the LLM rewrite of a follow-up, the per-query budget (``budget_exceeded``), cost on the
Query node."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.limits import QueryLimits
from kgrag.config import Settings
from kgrag.core import OPERATOR, AccessContext
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore
from kgrag.llm import LLMClient
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.analysis import analyse
from kgrag.planner.document_plans import document_plan
from kgrag.tools import ToolContext, default_registry
from tests.support.across import compared_across_engines, shared_folder  # noqa: F401 (a fixture)
from tests.support.engines import Engine
from tests.support.openai_server import LocalOpenAIServer

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

ROSTER = (
    "The Pressure Valve PV-7 is maintained by Ada Lovelace. She inspects it every Monday.\n\n"
    "The Feed Pump FP-2 is maintained by Grace Hopper, who keeps the spare seals.\n"
)
QUESTION = "Who maintains the Pressure Valve PV-7?"
PLAN = {
    "plan": [
        {
            "step_id": 1,
            "type": "vector_search",
            "parameters": {"query": QUESTION, "index": "chunk_embedding", "k": 5},
        }
    ],
    "traceability": True,
}


@dataclass
class Script:
    """Answers each kind of request the agent makes, recognised by its structured-output name."""

    verdicts: list[dict[str, Any]] = field(
        default_factory=lambda: [{"decision": "SATISFIED", "reason": "answered"}]
    )
    answers: list[str] = field(
        default_factory=lambda: [
            "The Pressure Valve PV-7 is maintained by Ada Lovelace {ada}. "
            "She inspects it every Monday {ada}. Nobody else touches it [99]."
        ]
    )
    checks: list[list[bool] | None] = field(default_factory=list)
    rewrite: str = ""
    plan: dict[str, Any] = field(default_factory=lambda: PLAN)
    seen: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> str:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        prompt = body["messages"][-1]["content"]
        self.seen.append(name or "answer")
        if name == "plan":
            return json.dumps(self.plan)
        if name == "_LlmVerdict":
            return json.dumps(self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0])
        if name == "_LlmChecks":
            n = len(re.findall(r"(?m)^\d+\. ", prompt.split("Sentences:", 1)[1]))
            given = self.checks.pop(0) if self.checks else None
            return json.dumps({"supported": given if given is not None else [True] * n})
        if name == "_Rewrite":
            return json.dumps({"standalone_question": self.rewrite})
        if name is None and prompt.startswith("Rewrite this answer as a bulleted"):
            return "- The Pressure Valve PV-7 is maintained by Ada Lovelace [1]\n- Also [7]"
        if name is None and "Evidence:" in prompt:
            numbers = {
                int(m.group(1)) for m in re.finditer(r"(?m)^\[(\d+)\] .*Ada Lovelace", prompt)
            }
            text = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            return text.format(ada=f"[{min(numbers)}]" if numbers else "")
        return "generated text"


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


@pytest.fixture(scope="module")
def store(
    module_engine: Engine, embedder: TextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    # the same paths for both engines (tests/support/across.py)
    folder = shared_folder(tmp_path_factory, "test_agent_llm")
    (folder / "roster.md").write_text(ROSTER, encoding="utf-8")
    s = module_engine.open()
    assert KnowledgeAgent(s, embedder).ingest([str(folder / "roster.md")]).ingested == 1
    yield s
    s.close()


def _agent(
    store: GraphStore,
    embedder: TextEmbedder,
    server: LocalOpenAIServer,
    script: Script,
    budget: float | None = None,
    tokens: int | None = None,
    max_plan_steps: int = 32,
) -> KnowledgeAgent:
    server.chat_handler = script
    client = LLMClient("gpt-4o-mini", base_url=server.base_url, api_key="test", max_retries=0)
    limits = QueryLimits(
        llm_budget_usd=budget, llm_max_tokens=tokens, max_plan_steps=max_plan_steps
    )
    return KnowledgeAgent(store, embedder, llm=client, limits=limits)


def test_llm_synthesis_cites_only_evidence_the_trace_returned(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script()
    answer = _agent(store, embedder, openai_server, script).ask(QUESTION)
    assert answer.mode == "llm" and answer.planner == "llm"
    assert "Ada Lovelace" in answer.answer and "[99]" not in answer.answer
    assert {int(m) for m in re.findall(r"\[(\d+)\]", answer.answer)} == {1}
    assert [c.marker for c in answer.citations] == [1]
    returned = {
        r["id"]
        for s in read_trace(store, answer.query_id, OPERATOR).to_json()["steps"]
        for r in s["returned"]
    }
    assert {c.node_id for c in answer.citations} <= returned
    assert "Sources:\n[1] (Source: roster.md)" in answer.answer
    assert script.seen == ["plan", "_LlmVerdict", "answer", "_LlmChecks"]
    assert answer.cost > 0 and answer.exit_reason == "satisfied"
    row = store.read_freeform(
        "MATCH (q:Query {id: $id})-[:ANSWERED_BY]->(a:Answer) "
        "RETURN q.cost AS cost, a.groundedness AS g, a.mode AS mode",
        {"id": answer.query_id},
    )[0]
    assert row["cost"] == pytest.approx(answer.cost) and row["mode"] == "llm"
    assert row["g"] == answer.groundedness == 1.0


def test_llm_judge_refines_then_is_satisfied(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script(
        verdicts=[
            {"decision": "REFINE", "reason": "no schedule", "next_query": "Ada Lovelace Monday"},
            {"decision": "SATISFIED", "reason": "answered"},
        ]
    )
    events: list[Any] = []
    answer = _agent(store, embedder, openai_server, script).ask(QUESTION, on_event=events.append)
    assert (answer.exit_reason, answer.iterations) == ("satisfied", 2)
    plans = [e for e in events if e.kind == "plan"]
    assert [p.query for p in plans] == [QUESTION, "Ada Lovelace Monday"]
    judged = [e for e in events if e.kind == "evaluation"]
    assert [(e.decision, e.judge) for e in judged] == [("REFINE", "llm"), ("SATISFIED", "llm")]


def test_unsupported_sentences_resynthesise_then_are_removed(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script(
        answers=[
            "Grace Hopper maintains it {ada}. It was built in Paris {ada}. It is blue {ada}.",
            "The Pressure Valve PV-7 is maintained by Ada Lovelace {ada}. "
            "It is painted gold {ada}.",
        ],
        checks=[[False, False, True], [True, False]],
    )
    answer = _agent(store, embedder, openai_server, script).ask(QUESTION)
    assert script.seen.count("answer") == 2  # groundedness 1/3 < threshold: synthesised again
    assert "Ada Lovelace" in answer.answer and "gold" not in answer.answer
    assert (answer.groundedness, answer.verdict) == (0.5, "partially_grounded")
    stored = store.read("trace_read_query", {"id": answer.query_id})[0]
    assert stored["groundedness"] == 0.5 and stored["verdict"] == "partially_grounded"


def test_follow_up_is_rewritten_by_the_llm(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script(rewrite="When does Ada Lovelace inspect the Pressure Valve PV-7?")
    agent = _agent(store, embedder, openai_server, script)
    agent.ask(QUESTION, session_id="llm-s", user="ada")
    events: list[Any] = []
    follow = agent.ask(
        "when does she do it?", session_id="llm-s", user="ada", on_event=events.append
    )
    assert follow.resolved_question == script.rewrite
    rewrite = [e for e in events if e.kind == "rewrite"]
    assert rewrite and rewrite[0].method == "llm" and rewrite[0].rewritten == script.rewrite
    assert "_Rewrite" in script.seen


def test_reformat_request_reuses_the_answer_through_the_llm(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script()
    agent = _agent(store, embedder, openai_server, script)
    first = agent.ask(QUESTION, session_id="llm-list", user="ada")
    calls_before = len(script.seen)
    listed = agent.ask("give me that as a list", session_id="llm-list", user="ada")
    assert (listed.iterations, listed.mode, listed.planner) == (0, "llm", "memory")
    assert listed.answer.startswith("- The Pressure Valve PV-7 is maintained by Ada Lovelace [1]")
    assert "[7]" not in listed.answer and "Sources:\n[1] (Source: roster.md)" in listed.answer
    assert [c.node_id for c in listed.citations] == [c.node_id for c in first.citations]
    assert script.seen[calls_before:] == ["answer"]  # one reformat call, no retrieval
    assert listed.cost > 0


def test_budget_exceeded_stops_the_loop_and_answers_offline(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script()
    answer = _agent(store, embedder, openai_server, script, budget=1e-7).ask(QUESTION)
    assert answer.exit_reason == "budget_exceeded"
    assert answer.mode == "extractive" and "Ada Lovelace" in answer.answer
    assert script.seen == ["plan"]  # every later call was refused before it was sent
    assert answer.cost > 1e-7
    row = store.read_freeform(
        "MATCH (q:Query {id: $id}) RETURN q.cost AS cost, q.exit_reason AS r",
        {"id": answer.query_id},
    )[0]
    assert row["r"] == "budget_exceeded" and row["cost"] == pytest.approx(answer.cost)


def test_the_token_budget_from_settings_stops_the_loop_too(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    settings = Settings(llm_max_tokens_per_query=1, max_iterations=2, step_timeout_s=7)
    limits = QueryLimits.from_settings(settings)
    assert (limits.llm_max_tokens, limits.max_iterations, limits.step_timeout_s) == (1, 2, 7)
    script = Script()
    answer = _agent(store, embedder, openai_server, script, tokens=1).ask(QUESTION)
    assert answer.exit_reason == "budget_exceeded"
    assert answer.mode == "extractive" and "Ada Lovelace" in answer.answer
    assert script.seen == ["plan"]  # the plan call spent the tokens; nothing later was sent


def test_an_llm_plan_longer_than_the_step_limit_is_refused_for_the_rule_plan(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    search = PLAN["plan"][0]
    long_plan = {"plan": [{**search, "step_id": i} for i in range(1, 18)], "traceability": True}
    script = Script(plan=long_plan)
    answer = _agent(store, embedder, openai_server, script, max_plan_steps=16).ask(QUESTION)
    assert answer.planner == "rule" and "Ada Lovelace" in answer.answer
    plan = read_trace(store, answer.query_id, OPERATOR).to_json()["plan"]
    assert "the plan has 17 steps; at most 16 are allowed" in plan["fallback_reason"]
    # the same plan within the limit is the LLM's
    within = _agent(store, embedder, openai_server, Script(plan=long_plan), max_plan_steps=32)
    assert within.ask(QUESTION).planner == "llm"


def test_llm_generate_tool_is_offered_with_a_client(
    store: GraphStore, openai_server: LocalOpenAIServer
) -> None:
    openai_server.chat_handler = Script()
    client = LLMClient("gpt-4o-mini", base_url=openai_server.base_url, api_key="test")
    tools = default_registry().bind(ToolContext(store=store, access=AccessContext(), llm=client))
    hits = tools["llm_generate"]({"prompt": "Say something."})
    assert [h.text for h in hits] == ["generated text"]
    assert client.meter.calls == 1


def test_refinements_stop_before_the_step_limit(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    """KGRAG_MAX_PLAN_STEPS bounds the steps of all iterations together: a refinement whose plan
    would go over it is not run (exit reason ``max_iterations``)."""
    search = PLAN["plan"][0]
    nine = {"plan": [{**search, "step_id": i} for i in range(1, 10)], "traceability": True}

    def refining() -> Script:
        return Script(
            plan=nine,
            verdicts=[
                {"decision": "REFINE", "reason": "more", "next_query": "Ada Lovelace Monday"},
                {"decision": "REFINE", "reason": "more", "next_query": "Pressure Valve PV-7 seals"},
                {"decision": "SATISFIED", "reason": "answered"},
            ],
        )

    bounded = _agent(store, embedder, openai_server, refining(), max_plan_steps=16).ask(QUESTION)
    roomy = _agent(store, embedder, openai_server, refining(), max_plan_steps=32).ask(QUESTION)
    bounded_steps = len(read_trace(store, bounded.query_id, OPERATOR).to_json()["steps"])
    roomy_steps = len(read_trace(store, roomy.query_id, OPERATOR).to_json()["steps"])
    assert bounded.exit_reason == "max_iterations" and bounded_steps <= 16
    # the control: with room, the same refinements run past 16 steps to the judge's "satisfied"
    assert (roomy.exit_reason, roomy.iterations) == ("satisfied", 3) and roomy_steps > 16
    assert bounded.iterations < roomy.iterations


def _one_step(step_type: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "plan": [{"step_id": 1, "type": step_type, "parameters": parameters}],
        "traceability": True,
    }


@pytest.mark.parametrize(
    ("question", "step_type", "parameters", "said"),
    [
        (
            "In which format do you hold the roster?",
            "document_types",
            {"k": 10},
            "markdown (text/markdown): 1 readable document",
        ),
        (
            "Give me the roster in a nutshell.",
            "document_summary",
            {"target": "roster"},
            "roster [1]: ",
        ),
    ],
)
def test_an_llm_plan_naming_a_document_tool_runs_that_step(
    store: GraphStore,
    embedder: TextEmbedder,
    openai_server: LocalOpenAIServer,
    question: str,
    step_type: str,
    parameters: dict[str, Any],
    said: str,
) -> None:
    """The planner's prompt describes the document tools (generated from the plan model), and a
    model's plan naming one is run as that typed step; the answer is the tool's, citing the
    document. (The rule planner has no document plan for these questions: the LLM plans them.
    A ``document_dates`` answer gives the time of ingestion, which differs between the engines'
    stores: it is planned alike, tests/unit/test_plan_prompt.py.)"""
    assert document_plan(question, analyse(question)) is None
    script = Script(plan=_one_step(step_type, parameters))
    answer = _agent(store, embedder, openai_server, script).ask(question)
    system = openai_server.requests_to("/v1/chat/completions")[0].body["messages"][0]["content"]
    assert f"\n- {step_type}: " in system
    assert answer.planner == "llm"
    steps = read_trace(store, answer.query_id, OPERATOR).to_json()["steps"]
    assert [s["type"] for s in steps] == [step_type]
    assert said in answer.answer, answer.answer
    assert [str(c.uri).rsplit("/", 1)[-1] for c in answer.citations] == ["roster.md"]


def test_an_llm_plan_with_an_unknown_step_type_is_not_run(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    script = Script(plan=_one_step("document_delete", {"target": "roster"}))
    answer = _agent(store, embedder, openai_server, script).ask(QUESTION)
    assert answer.planner == "rule" and "Ada Lovelace" in answer.answer
    trace = read_trace(store, answer.query_id, OPERATOR).to_json()
    assert "unknown step type 'document_delete' (not run)" in trace["plan"]["fallback_reason"]
    assert "document_delete" not in {s["type"] for s in trace["steps"]}
