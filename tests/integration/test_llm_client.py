"""LLMClient over HTTP against LocalOpenAIServer (a real server on 127.0.0.1, OpenAI wire
format)."""

from __future__ import annotations

import json
import threading

import pytest
from pydantic import BaseModel

from kgrag.agent.providers import llm_client
from kgrag.config import Settings
from kgrag.llm import (
    DEFAULT_PRICES,
    BudgetExceededError,
    ChatMessage,
    CostMeter,
    LLMClient,
    LLMError,
    PriceTable,
    Usage,
)
from kgrag.llm.prices import MAX_PRICE_PER_MILLION, ModelPrice
from tests.support.openai_server import LocalOpenAIServer, count_tokens

CHAT = "/v1/chat/completions"
MESSAGES = [
    ChatMessage(role="system", content="You answer in JSON."),
    ChatMessage(role="user", content="Name one pump."),
]


class Pump(BaseModel):
    name: str
    flow_lpm: int


def _client(server: LocalOpenAIServer, **kwargs: object) -> LLMClient:
    return LLMClient("gpt-4o-mini", base_url=server.base_url, api_key="k", **kwargs)  # type: ignore[arg-type]


def test_structured_output_request_carries_the_schema(openai_server: LocalOpenAIServer) -> None:
    openai_server.add_chat_reply('{"name": "Feed Pump FP-2", "flow_lpm": 120}')
    pump, result = _client(openai_server).chat_json(MESSAGES, Pump)
    assert pump == Pump(name="Feed Pump FP-2", flow_lpm=120)
    assert result.model == "gpt-4o-mini"
    body = openai_server.requests_to(CHAT)[0].body
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Pump"
    assert fmt["json_schema"]["schema"] == Pump.model_json_schema()
    assert openai_server.requests_to(CHAT)[0].headers["authorization"] == "Bearer k"


def test_plain_chat_sends_no_response_format(openai_server: LocalOpenAIServer) -> None:
    openai_server.add_chat_reply("The feed pump.")
    result = _client(openai_server).chat(MESSAGES, max_tokens=50)
    assert result.text == "The feed pump."
    body = openai_server.requests_to(CHAT)[0].body
    assert "response_format" not in body
    assert body["max_tokens"] == 50


def test_usage_is_priced_from_the_table_and_metered(openai_server: LocalOpenAIServer) -> None:
    reply = '{"name": "P-1", "flow_lpm": 3}'
    openai_server.add_chat_reply(reply, reply)
    meter = CostMeter()
    client = _client(openai_server, meter=meter)
    _, first = client.chat_json(MESSAGES, Pump)
    prompt = sum(count_tokens(m.content) for m in MESSAGES)
    completion = count_tokens(reply)
    assert first.usage.prompt_tokens == prompt
    assert first.usage.completion_tokens == completion
    # gpt-4o-mini: $0.15 per 1M input tokens, $0.60 per 1M output tokens
    assert first.usage.cost_usd == pytest.approx((prompt * 0.15 + completion * 0.60) / 1e6)
    client.chat_json(MESSAGES, Pump)
    assert meter.calls == 2
    assert meter.spent_usd == pytest.approx(2 * first.usage.cost_usd)
    assert meter.prompt_tokens == 2 * prompt


def test_price_table_snapshots_and_unknown_models(caplog: pytest.LogCaptureFixture) -> None:
    assert DEFAULT_PRICES.cost("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(12.5)
    assert DEFAULT_PRICES.cost("gpt-4o-mini-2024-07-18", 1_000_000) == pytest.approx(0.15)
    assert DEFAULT_PRICES.cost("text-embedding-3-small", 1_000_000) == pytest.approx(0.02)
    with caplog.at_level("WARNING", logger="kgrag.llm.prices"):
        assert DEFAULT_PRICES.cost("my-local-llama", 1000, 1000) == 0.0
    assert "my-local-llama" in caplog.text


def test_budget_exceeded_refuses_before_calling(openai_server: LocalOpenAIServer) -> None:
    # the dearest price a table may list: $0.10 a token, so one call spends the budget
    prices = PriceTable(prices={"gpt-4o-mini": ModelPrice(input_per_million=MAX_PRICE_PER_MILLION)})
    meter = CostMeter(budget_usd=0.05)
    client = _client(openai_server, prices=prices, meter=meter)
    openai_server.add_chat_reply("ok", "never sent")
    client.chat(MESSAGES)
    assert meter.exceeded
    with pytest.raises(BudgetExceededError, match="budget exceeded"):
        client.chat(MESSAGES)
    assert len(openai_server.requests_to(CHAT)) == 1
    # A fresh per-query meter lets the same client call again.
    assert client.with_meter(CostMeter(budget_usd=100.0)).chat(MESSAGES).text == "never sent"


def test_http_500_is_retried_then_a_clear_error(openai_server: LocalOpenAIServer) -> None:
    client = _client(openai_server, max_retries=2)
    openai_server.fail_next(1, 500, retry_after_ms=1, path=CHAT)
    openai_server.add_chat_reply("recovered")
    assert client.chat(MESSAGES).text == "recovered"
    assert len(openai_server.requests_to(CHAT)) == 2

    openai_server.reset()
    openai_server.fail_next(3, 500, retry_after_ms=1, path=CHAT)
    with pytest.raises(LLMError, match=r"HTTP 500.*after 2 retries"):
        client.chat(MESSAGES)
    assert len(openai_server.requests_to(CHAT)) == 3


def test_http_400_is_not_retried(openai_server: LocalOpenAIServer) -> None:
    openai_server.fail_next(1, 400, message="bad schema", path=CHAT)
    with pytest.raises(LLMError, match=r"HTTP 400: bad schema"):
        _client(openai_server).chat(MESSAGES)
    assert len(openai_server.requests_to(CHAT)) == 1


def test_invalid_json_is_a_clear_error(openai_server: LocalOpenAIServer) -> None:
    client = _client(openai_server)
    openai_server.add_chat_reply('{"name": "P-1", "flow_lpm": ')
    with pytest.raises(LLMError, match="not valid JSON"):
        client.chat_json(MESSAGES, Pump)
    openai_server.add_chat_reply('{"name": "P-1", "flow_lpm": "many"}')
    with pytest.raises(LLMError, match=r"does not match Pump.*flow_lpm"):
        client.chat_json(MESSAGES, Pump)


def test_refusal_and_connection_errors(openai_server: LocalOpenAIServer) -> None:
    openai_server.add_chat_reply({"content": None, "refusal": "I cannot help with that."})
    with pytest.raises(LLMError, match="refused: I cannot help"):
        _client(openai_server).chat(MESSAGES)
    dead = LLMClient("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout_s=2)
    with pytest.raises(LLMError, match="could not connect"):
        dead.chat(MESSAGES)


def test_from_settings(openai_server: LocalOpenAIServer) -> None:
    assert llm_client(Settings(llm_model=None)) is None
    client = llm_client(
        Settings(llm_model="gpt-4o-mini", openai_base_url=openai_server.base_url, llm_budget_usd=0)
    )
    assert client is not None
    assert client.meter.budget_usd == 0
    with pytest.raises(BudgetExceededError):
        client.chat(MESSAGES)
    assert openai_server.requests_to(CHAT) == []


def test_meter_is_thread_safe() -> None:
    meter = CostMeter()
    usage = Usage(prompt_tokens=1, completion_tokens=1, cost_usd=0.001)

    def work() -> None:
        for _ in range(1000):
            meter.add(usage)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert meter.calls == 4000
    assert meter.spent_usd == pytest.approx(4.0)
    assert json.loads(json.dumps(meter.prompt_tokens)) == 4000
