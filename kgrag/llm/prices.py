"""What LLM calls cost: a price table (USD per million tokens) and a thread-safe cost meter."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from pydantic import Field

from kgrag.core import Frozen
from kgrag.llm.errors import BudgetExceededError

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_AS_OF",
    "CostMeter",
    "ListedPrice",
    "ModelPrice",
    "PriceTable",
    "Usage",
    "price_table",
]

logger = logging.getLogger(__name__)


class Usage(Frozen):
    """Tokens of one call and what they cost."""

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    cost_usd: float = Field(ge=0)


#: The highest price a model may list, in USD per million tokens (the dearest list price is a
#: few hundred; more is a typo, e.g. a price per token multiplied once too often).
MAX_PRICE_PER_MILLION = 100_000.0


class ModelPrice(Frozen):
    """USD per one million input (prompt) and output (completion) tokens."""

    input_per_million: float = Field(ge=0, le=MAX_PRICE_PER_MILLION, allow_inf_nan=False)
    output_per_million: float = Field(0.0, ge=0, le=MAX_PRICE_PER_MILLION, allow_inf_nan=False)


class PriceTable(Frozen):
    """Prices per model name. A dated snapshot (``gpt-4o-mini-2024-07-18``) takes the price of
    the longest listed name it starts with; an unknown model costs 0 and logs a warning once."""

    prices: dict[str, ModelPrice]

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or ``None`` when no listed name matches."""
        if model in self.prices:
            return self.prices[model]
        matches = [name for name in self.prices if model.startswith(name + "-")]
        if not matches:
            return None
        return self.prices[max(matches, key=len)]

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int = 0) -> float:
        """USD for ``prompt_tokens`` in and ``completion_tokens`` out with ``model``."""
        price = self.price(model)
        if price is None:
            _warn_unknown(model)
            return 0.0
        return (
            prompt_tokens * price.input_per_million + completion_tokens * price.output_per_million
        ) / 1_000_000

    def usage(self, model: str, prompt_tokens: int, completion_tokens: int) -> Usage:
        """A :class:`Usage` with its cost from this table."""
        return Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=self.cost(model, prompt_tokens, completion_tokens),
        )


_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_unknown(model: str) -> None:
    with _warned_lock:
        if model in _warned:
            return
        _warned.add(model)
    logger.warning("no price known for model %r: its calls are counted as costing $0", model)


def _p(inp: float, out: float = 0.0) -> ModelPrice:
    return ModelPrice(input_per_million=inp, output_per_million=out)


PRICES_AS_OF = "2025"
"""When :data:`DEFAULT_PRICES` were OpenAI's list prices; ``Settings.llm_prices``
(``KGRAG_LLM_PRICES``) adds or overrides models without a release."""

#: OpenAI's public list prices (standard tier, USD per 1M tokens) as of :data:`PRICES_AS_OF`.
DEFAULT_PRICES = PriceTable(
    prices={
        "gpt-4o-mini": _p(0.15, 0.60),
        "gpt-4o": _p(2.50, 10.00),
        "gpt-4.1": _p(2.00, 8.00),
        "gpt-4.1-mini": _p(0.40, 1.60),
        "gpt-4.1-nano": _p(0.10, 0.40),
        "gpt-5": _p(1.25, 10.00),
        "gpt-5-mini": _p(0.25, 2.00),
        "gpt-5-nano": _p(0.05, 0.40),
        "o3-mini": _p(1.10, 4.40),
        "o4-mini": _p(1.10, 4.40),
        "gpt-4-turbo": _p(10.00, 30.00),
        "gpt-3.5-turbo": _p(0.50, 1.50),
        "text-embedding-3-small": _p(0.02),
        "text-embedding-3-large": _p(0.13),
        "text-embedding-ada-002": _p(0.10),
    }
)


class ListedPrice(ModelPrice):
    """The price of one model, as ``Settings.llm_prices`` lists it."""

    model: str = Field(min_length=1)


def price_table(overrides: Sequence[ListedPrice] = ()) -> PriceTable:
    """:data:`DEFAULT_PRICES` with ``overrides`` (``Settings.llm_prices``) added or replacing
    the listed models' prices."""
    if not overrides:
        return DEFAULT_PRICES
    listed = {p.model: ModelPrice(**p.model_dump(exclude={"model"})) for p in overrides}
    return PriceTable(prices={**DEFAULT_PRICES.prices, **listed})


class CostMeter:
    """Adds up the cost of LLM calls against an optional budget (USD). Thread-safe.

    Use one meter per query for a per-query budget; share it between every client of that query.
    """

    def __init__(self, budget_usd: float | None = None, token_budget: int | None = None) -> None:
        if budget_usd is not None and budget_usd < 0:
            raise ValueError(f"budget_usd must be 0 or more, got {budget_usd}")
        if token_budget is not None and token_budget < 0:
            raise ValueError(f"token_budget must be 0 or more, got {token_budget}")
        self.budget_usd = budget_usd
        self.token_budget = token_budget
        self._spent = 0.0
        self._calls = 0
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._lock = threading.Lock()

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return self._spent

    @property
    def calls(self) -> int:
        with self._lock:
            return self._calls

    @property
    def prompt_tokens(self) -> int:
        with self._lock:
            return self._prompt_tokens

    @property
    def completion_tokens(self) -> int:
        with self._lock:
            return self._completion_tokens

    @property
    def exceeded(self) -> bool:
        """True once the spend or the tokens have reached their budget (never without one)."""
        with self._lock:
            return self._over() is not None

    def add(self, usage: Usage) -> None:
        """Count one call."""
        with self._lock:
            self._spent += usage.cost_usd
            self._calls += 1
            self._prompt_tokens += usage.prompt_tokens
            self._completion_tokens += usage.completion_tokens

    def check(self) -> None:
        """Raise :class:`BudgetExceededError` when the money or the token budget is spent."""
        with self._lock:
            over = self._over()
        if over is not None:
            raise over

    def _over(self) -> BudgetExceededError | None:
        if self.budget_usd is not None and self._spent >= self.budget_usd:
            return BudgetExceededError(self._spent, self.budget_usd)
        used = self._prompt_tokens + self._completion_tokens
        if self.token_budget is not None and used >= self.token_budget:
            return BudgetExceededError(
                self._spent, self.budget_usd, tokens=(used, self.token_budget)
            )
        return None

    def __repr__(self) -> str:
        return f"CostMeter(budget_usd={self.budget_usd}, spent_usd={self.spent_usd:.6f})"
