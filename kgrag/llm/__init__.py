"""LLM access: an OpenAI-compatible chat client with structured output, prices and a budget."""

from kgrag.llm.client import ChatMessage, ChatResult, LLMClient
from kgrag.llm.errors import BudgetExceededError, LLMError
from kgrag.llm.prices import DEFAULT_PRICES, CostMeter, ModelPrice, PriceTable, Usage

__all__ = [
    "DEFAULT_PRICES",
    "BudgetExceededError",
    "ChatMessage",
    "ChatResult",
    "CostMeter",
    "LLMClient",
    "LLMError",
    "ModelPrice",
    "PriceTable",
    "Usage",
]
