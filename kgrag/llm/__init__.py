"""LLM access: an OpenAI-compatible chat client with structured output, prices and a budget."""

from kgrag.llm.client import ChatMessage, ChatResult, LLMClient
from kgrag.llm.errors import BudgetExceededError, LLMError
from kgrag.llm.prices import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    CostMeter,
    ListedPrice,
    ModelPrice,
    PriceTable,
    Usage,
    price_table,
)
from kgrag.llm.protocol import LLM

__all__ = [
    "DEFAULT_PRICES",
    "LLM",
    "PRICES_AS_OF",
    "BudgetExceededError",
    "ChatMessage",
    "ChatResult",
    "CostMeter",
    "LLMClient",
    "LLMError",
    "ListedPrice",
    "ModelPrice",
    "PriceTable",
    "Usage",
    "price_table",
]
