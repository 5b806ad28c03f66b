"""LLM access: an OpenAI-compatible chat client with structured output, prices and a budget."""

from kgrag.llm.client import ChatMessage, ChatResult, LLMClient
from kgrag.llm.errors import BudgetExceededError, LLMError
from kgrag.llm.prices import DEFAULT_PRICES, CostMeter, ModelPrice, PriceTable, Usage
from kgrag.llm.protocol import LLM

__all__ = [
    "DEFAULT_PRICES",
    "LLM",
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
