"""The LLM planner over HTTP against LocalOpenAIServer (a real server on 127.0.0.1 speaking the
OpenAI wire format): a valid plan is used; every kind of invalid plan falls back to the rule
planner with the reason. (That the reason reaches the stored trace is tested with the embedded
store in test_executor_plans.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kgrag.llm import CostMeter, LLMClient
from kgrag.planner.analysis import QueryAnalysis, ResolvedEntity, analyse
from kgrag.planner.llm import available_templates, llm_plan, plan_question
from kgrag.planner.models import (
    DocumentDatesStep,
    DocumentTypesStep,
    MetadataSearchStep,
    Plan,
    plan_json_schema,
)
from kgrag.planner.params import DOCUMENT_STEP_TYPES, DocumentDatesParams
from kgrag.planner.rule import rule_plan
from tests.support.openai_server import LocalOpenAIServer

CHAT = "/v1/chat/completions"
QUESTION = "Who maintains the pump that the meeting agreed to replace?"
ENTITY = ResolvedEntity(id="feed pump fp-2", name="Feed Pump FP-2", score=1.0, surface="pump")


def _analysis() -> QueryAnalysis:
    return analyse(QUESTION, lambda spans: [ENTITY])


def _rule() -> Plan:
    return rule_plan(QUESTION, entity_ids=[ENTITY.id])


def _client(server: LocalOpenAIServer, **kwargs: Any) -> LLMClient:
    return LLMClient("gpt-4o-mini", base_url=server.base_url, max_retries=0, **kwargs)


def _step(sid: int, kind: str, params: dict[str, Any], deps: list[int] | None = None) -> dict:
    return {
        "step_id": sid,
        "type": kind,
        "modality": "text",
        "parameters": params,
        "dependencies": deps or [],
        "condition": None,
        "trace": {"source": "llm", "explanation": "test"},
    }


def _valid_plan() -> dict[str, Any]:
    return {
        "plan": [
            _step(1, "vector_search", {"query": "pump replacement meeting", "k": 5}),
            _step(
                2,
                "graph_query",
                {"template": "entity_chunks", "params": {"entity_ids": [ENTITY.id]}, "k": 5},
            ),
            _step(3, "multi_hop", {"seeds_from": [1, 2], "hops": 2, "k": 5}, [1, 2]),
            _step(4, "aggregate", {"sources": [1, 2, 3], "k": 5}, [1, 2, 3]),
        ],
        "traceability": True,
    }


def test_a_valid_llm_plan_is_used(openai_server: LocalOpenAIServer) -> None:
    openai_server.add_chat_reply(json.dumps(_valid_plan()))
    meter = CostMeter()
    result = llm_plan(
        QUESTION,
        _analysis(),
        _client(openai_server, meter=meter),
        rule_fallback=_rule,
        tools={"calculator": "arithmetic on numbers"},
    )
    assert result.source == "llm"
    assert result.fallback_reason is None
    assert [s.type for s in result.plan.plan] == [
        "vector_search",
        "graph_query",
        "multi_hop",
        "aggregate",
    ]
    assert all(s.trace.source == "llm" for s in result.plan.plan)
    assert result.usage is not None and result.usage.cost_usd > 0
    assert meter.calls == 1

    body = openai_server.requests_to(CHAT)[0].body
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "plan"
    assert fmt["json_schema"]["schema"] == plan_json_schema()
    system, user = (m["content"] for m in body["messages"])
    for template in available_templates():  # told every template, with its parameters
        assert f"- {template.name}(" in system
    assert "entity_chunks(entity_ids)" in system
    assert "calculator: arithmetic on numbers" in system
    assert "multi_hop" in system and "aggregate" in system
    assert json.dumps(QUESTION) in user
    assert '"id": "feed pump fp-2"' in user  # the analysis' resolved entity
    assert _rule().to_json() in user  # the baseline plan


def _assert_fallback(result: Any, *needles: str) -> None:
    assert result.source == "rule"
    assert result.plan == _rule()
    assert result.fallback_reason is not None
    for needle in needles:
        assert needle in result.fallback_reason, result.fallback_reason


def _bad(server: LocalOpenAIServer, reply: str, **kwargs: Any) -> Any:
    server.add_chat_reply(reply)
    return llm_plan(QUESTION, _analysis(), _client(server, **kwargs), rule_fallback=_rule)


def test_a_cyclic_plan_falls_back(openai_server: LocalOpenAIServer) -> None:
    plan = _valid_plan()
    plan["plan"][0]["dependencies"] = [4]
    plan["plan"][0]["parameters"] = {"query_from": 4, "k": 5}
    result = _bad(openai_server, json.dumps(plan))
    _assert_fallback(result, "invalid plan: step 1", "cycle: 1 -> 3 -> 4 -> 1")


@pytest.mark.parametrize(
    ("template", "needle"),
    [
        ("../x", "template"),
        ("x; DROP", "template"),
        ("drop_everything", "unknown Cypher template 'drop_everything'"),
        ("vector_chunks", "unknown Cypher template 'vector_chunks'"),  # not a templates/ file
    ],
)
def test_an_unknown_template_falls_back(
    openai_server: LocalOpenAIServer, template: str, needle: str
) -> None:
    plan = _valid_plan()
    plan["plan"][1]["parameters"]["template"] = template
    result = _bad(openai_server, json.dumps(plan))
    _assert_fallback(result, "step 2", needle)


def test_an_injected_label_falls_back(openai_server: LocalOpenAIServer) -> None:
    plan = _valid_plan()
    plan["plan"][2]["parameters"]["relationships"] = ["MENTIONS]->(n) DETACH DELETE n //"]
    result = _bad(openai_server, json.dumps(plan))
    _assert_fallback(result, "step 3", "relationships")


def test_an_unknown_step_type_or_tool_falls_back(openai_server: LocalOpenAIServer) -> None:
    plan = _valid_plan()
    plan["plan"][0]["type"] = "cypher_write"
    _assert_fallback(_bad(openai_server, json.dumps(plan)), "step 1")
    plan = _valid_plan()
    plan["plan"].append(_step(5, "tool_call", {"tool": "shell", "arguments": {"cmd": "rm"}}))
    _assert_fallback(_bad(openai_server, json.dumps(plan)), "unknown tool 'shell'")


def test_bad_json_falls_back(openai_server: LocalOpenAIServer) -> None:
    _assert_fallback(_bad(openai_server, '{"plan": [{"step_id": 1,'), "not valid JSON")


def test_http_failure_falls_back(openai_server: LocalOpenAIServer) -> None:
    openai_server.fail_next(1, 500, path=CHAT)
    result = llm_plan(QUESTION, _analysis(), _client(openai_server), rule_fallback=_rule)
    _assert_fallback(result, "LLM planner failed", "HTTP 500")
    assert result.usage is None


def test_spent_budget_falls_back_without_a_call(openai_server: LocalOpenAIServer) -> None:
    client = _client(openai_server, meter=CostMeter(budget_usd=0.0))
    result = llm_plan(QUESTION, _analysis(), client, rule_fallback=_rule)
    _assert_fallback(result, "budget exceeded")
    assert openai_server.requests_to(CHAT) == []


def test_plan_question_without_a_client_is_the_rule_planner() -> None:
    result = plan_question(QUESTION, _analysis(), None, rule_fallback=_rule)
    assert result.source == "rule"
    assert result.fallback_reason is None
    assert result.plan == _rule()


def test_an_unavailable_vector_index_falls_back(openai_server: LocalOpenAIServer) -> None:
    plan = _valid_plan()
    plan["plan"][0]["parameters"]["index"] = "image_embedding"
    plan["plan"][0]["modality"] = "image"
    openai_server.add_chat_reply(json.dumps(plan))
    result = llm_plan(
        QUESTION,
        _analysis(),
        _client(openai_server),
        rule_fallback=_rule,
        indexes={"chunk_embedding", "entity_clip"},
    )
    _assert_fallback(result, "step 1", "'image_embedding' is not available")
    system = openai_server.requests_to(CHAT)[0].body["messages"][0]["content"]
    assert "Vector indexes available: chunk_embedding, entity_clip." in system
    # The same plan is accepted where image search is available.
    openai_server.add_chat_reply(json.dumps(plan))
    ok = llm_plan(QUESTION, _analysis(), _client(openai_server), rule_fallback=_rule)
    assert ok.source == "llm"


def test_a_plan_of_document_tools_becomes_their_typed_steps(
    openai_server: LocalOpenAIServer,
) -> None:
    """Every document tool is in the prompt, and a reply naming them parses to their steps."""
    plan = {
        "plan": [
            _step(1, "document_types", {"k": 5}),
            _step(2, "document_dates", {"target": "the maintenance roster"}),
            _step(3, "metadata_search", {"formats": ["markdown"], "date_from": "2024"}),
        ],
        "traceability": True,
    }
    openai_server.add_chat_reply(json.dumps(plan))
    result = llm_plan(QUESTION, _analysis(), _client(openai_server), rule_fallback=_rule)
    assert result.source == "llm", result.fallback_reason
    assert [type(s) for s in result.plan.plan] == [
        DocumentTypesStep,
        DocumentDatesStep,
        MetadataSearchStep,
    ]
    assert result.plan.plan[1].parameters == DocumentDatesParams(target="the maintenance roster")
    system = openai_server.requests_to(CHAT)[0].body["messages"][0]["content"]
    for step_type in DOCUMENT_STEP_TYPES:
        assert f"\n- {step_type}: " in system


def test_an_unknown_step_type_is_named_and_not_run(openai_server: LocalOpenAIServer) -> None:
    plan = _valid_plan()
    plan["plan"][0] = _step(1, "document_delete", {"target": "roster"})
    result = _bad(openai_server, json.dumps(plan))
    _assert_fallback(result, "step 1", "unknown step type 'document_delete' (not run)")
