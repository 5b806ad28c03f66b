"""The chat model the agent, the planner, the judge and the ingest summaries talk to.

:class:`LLM` is what they need of one; :class:`~kgrag.llm.client.LLMClient` (any
OpenAI-compatible endpoint) is the implementation kgrag ships, and any object with these methods
(another vendor's client, a recorded one in a test) can be given to
:class:`~kgrag.agent.agent.KnowledgeAgent` instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

if TYPE_CHECKING:
    from kgrag.llm.client import ChatMessage, ChatResult
    from kgrag.llm.prices import CostMeter

__all__ = ["LLM"]

T = TypeVar("T", bound=BaseModel)


@runtime_checkable
class LLM(Protocol):
    """A chat model with structured output whose calls are counted by a :class:`CostMeter`."""

    def with_meter(self, meter: CostMeter) -> LLM:
        """The same model counting into ``meter`` (one per question, for its budget)."""
        ...

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
        """One chat completion; with ``json_schema`` the answer must be that JSON.
        Raises :class:`~kgrag.llm.errors.LLMError` (and ``BudgetExceededError``)."""
        ...

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
        """A structured answer validated as ``model_type``."""
        ...
