"""An OpenAI-compatible chat client: structured output, token cost from a price table, a budget.

:class:`LLMClient` calls ``/v1/chat/completions`` through the ``openai`` package (imported when a
client is built). Any OpenAI-compatible ``base_url`` works. HTTP 408/409/429/5xx and lost
connections are retried by the ``openai`` client's own backoff loop (``max_retries``); whatever
still fails becomes an :class:`~kgrag.llm.errors.LLMError` saying what failed and what to do.
Message contents are never logged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from kgrag.core import Frozen
from kgrag.errors import ConfigError
from kgrag.llm.errors import LLMError
from kgrag.llm.openai_api import ErrorHints, OpenAIEndpoint
from kgrag.llm.prices import DEFAULT_PRICES, CostMeter, PriceTable, Usage

__all__ = ["ChatMessage", "ChatResult", "LLMClient"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)


class ChatMessage(Frozen):
    """One message of a chat."""

    role: Literal["system", "user", "assistant"]
    content: str


class ChatResult(Frozen):
    """The assistant's text, the tokens and cost of the call, and the model that answered."""

    text: str
    usage: Usage
    model: str


class LLMClient(OpenAIEndpoint):
    """A chat model behind the OpenAI chat completions API.

    Args:
        model: the chat model, e.g. ``gpt-4o-mini``.
        base_url: an OpenAI-compatible endpoint (``http://host:port/v1``); OpenAI's when ``None``.
        api_key: the key; when empty the ``openai`` package's own default applies
            (``OPENAI_API_KEY``), or a placeholder for a custom ``base_url``.
        prices: the price table for the cost of each call (:data:`DEFAULT_PRICES`).
        meter: where costs are added up; a call is refused while the meter is over budget.
        timeout_s: timeout of one HTTP request.
        max_retries: retries of 408/409/429/5xx answers and lost connections.
    """

    error = LLMError

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str = "",
        prices: PriceTable | None = None,
        meter: CostMeter | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        if not model:
            raise ConfigError("an LLM model name is required (KGRAG_LLM_MODEL)")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries}")
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s}")
        self.model = model
        self.prices = prices if prices is not None else DEFAULT_PRICES
        self.meter = meter if meter is not None else CostMeter()
        super().__init__(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=max_retries,
            subject=f" for {model!r}",
            setup_hint="; set KGRAG_OPENAI_API_KEY (or OPENAI_API_KEY) or KGRAG_OPENAI_BASE_URL",
        )

    @property
    def hints(self) -> ErrorHints:
        return ErrorHints(
            key="check KGRAG_OPENAI_API_KEY",
            retry="try again later",
            request="check the model name and the request",
            timeout=f"after {self._max_retries} retries; raise KGRAG_LLM_TIMEOUT_S",
            connect="check KGRAG_OPENAI_BASE_URL and that the server runs",
        )

    def with_meter(self, meter: CostMeter) -> LLMClient:
        """The same client (same connection pool) counting into another meter, e.g. one per
        query for a per-query budget."""
        clone = object.__new__(LLMClient)
        clone.__dict__.update(self.__dict__)
        clone.meter = meter
        return clone

    # ------------------------------------------------------------------------------- calls

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str = "result",
        temperature: float = 0.0,
        max_tokens: int | None = None,
        strict: bool = False,
    ) -> ChatResult:
        """One chat completion. With ``json_schema`` the request asks for structured output
        (``response_format: {"type": "json_schema", ...}``) and the answer must be JSON.

        Raises:
            BudgetExceededError: the meter is over budget (nothing is sent).
            LLMError: HTTP error after retries, timeout, refusal, empty or non-JSON answer.
        """
        self.meter.check()
        if not messages:
            raise LLMError("chat() needs at least one message")
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump() for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": strict},
            }
        what = f"chat completion with {self.model!r} at {self.endpoint}"
        response = self._request(what, lambda: self._client.chat.completions.create(**kwargs))

        answered_model = str(getattr(response, "model", None) or self.model)
        raw_usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(raw_usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(raw_usage, "completion_tokens", 0) or 0)
        # Priced by the model asked for: a dated snapshot name in the answer maps to it anyway.
        usage = self.prices.usage(self.model, prompt_tokens, completion_tokens)
        self.meter.add(usage)
        logger.debug(
            "chat %s: %d prompt + %d completion tokens, $%.6f",
            self.model,
            prompt_tokens,
            completion_tokens,
            usage.cost_usd,
        )

        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LLMError(f"{what}: the answer has no choices")
        choice = choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise LLMError(f"{what}: the model refused: {refusal}")
        text = message.content
        if not isinstance(text, str) or not text.strip():
            raise LLMError(f"{what}: the answer is empty (finish_reason {choice.finish_reason})")
        if json_schema is not None:
            if choice.finish_reason == "length":
                raise LLMError(
                    f"{what}: the structured answer was cut at max_tokens; raise max_tokens"
                )
            try:
                json.loads(text)
            except ValueError as e:
                raise LLMError(f"{what}: structured output is not valid JSON ({e})") from e
        return ChatResult(text=text, usage=usage, model=answered_model)

    def chat_json(
        self,
        messages: Sequence[ChatMessage],
        model_type: type[T],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        strict: bool = False,
    ) -> tuple[T, ChatResult]:
        """A structured answer parsed and validated as ``model_type`` (its JSON Schema is sent
        unless ``json_schema`` is given). Raises :class:`LLMError` when it does not validate."""
        schema = json_schema if json_schema is not None else model_type.model_json_schema()
        result = self.chat(
            messages,
            json_schema=schema,
            schema_name=schema_name or model_type.__name__,
            temperature=temperature,
            max_tokens=max_tokens,
            strict=strict,
        )
        try:
            value = model_type.model_validate_json(result.text)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            raise LLMError(
                f"the answer of {self.model!r} does not match {model_type.__name__}: "
                f"{e.error_count()} error(s), first at {where}: {first['msg']}"
            ) from e
        return value, result

    def __repr__(self) -> str:
        return f"LLMClient({self.model!r}, base_url={self.endpoint!r})"
