"""Errors of the LLM client: both are :class:`kgrag.errors.ModelError` (exit code 5).

::

    ModelError
    └── LLMError                 a chat call failed (HTTP error, timeout, refusal, bad JSON)
        └── BudgetExceededError  the cost meter is over its budget; no call was made
"""

from __future__ import annotations

from kgrag.errors import ModelError

__all__ = ["BudgetExceededError", "LLMError"]


class LLMError(ModelError):
    """A chat completion failed or returned something unusable."""


class BudgetExceededError(LLMError):
    """The LLM budget is spent: the call was refused before it was sent."""

    def __init__(
        self, spent_usd: float, budget_usd: float | None, *, tokens: tuple[int, int] | None = None
    ) -> None:
        if tokens is not None:
            message = (
                f"LLM token budget exceeded: used {tokens[0]} of {tokens[1]} tokens; "
                "raise llm_max_tokens_per_query (KGRAG_LLM_MAX_TOKENS_PER_QUERY) or continue "
                "offline"
            )
        else:
            message = (
                f"LLM budget exceeded: spent ${spent_usd:.6f} of ${budget_usd or 0.0:.6f}; "
                "raise llm_budget_usd (KGRAG_LLM_BUDGET_USD) or continue offline"
            )
        super().__init__(message)
        self.spent_usd = spent_usd
        self.budget_usd = budget_usd
        self.tokens = tokens
