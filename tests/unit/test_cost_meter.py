"""The per-question LLM budget: money and tokens, refused before a call once spent."""

from __future__ import annotations

import pytest

from kgrag.llm import BudgetExceededError, CostMeter, Usage


def test_the_token_budget_refuses_once_reached_and_names_the_setting() -> None:
    meter = CostMeter(token_budget=1000)
    meter.add(Usage(prompt_tokens=600, completion_tokens=300, cost_usd=0.0))
    meter.check()  # 900 of 1000: still allowed
    assert not meter.exceeded
    meter.add(Usage(prompt_tokens=80, completion_tokens=20, cost_usd=0.0))
    assert meter.exceeded
    with pytest.raises(BudgetExceededError, match="KGRAG_LLM_MAX_TOKENS_PER_QUERY") as caught:
        meter.check()
    assert caught.value.tokens == (1000, 1000)


def test_the_money_budget_is_checked_as_well() -> None:
    meter = CostMeter(budget_usd=0.01, token_budget=10**6)
    meter.add(Usage(prompt_tokens=10, completion_tokens=10, cost_usd=0.02))
    with pytest.raises(BudgetExceededError, match="KGRAG_LLM_BUDGET_USD"):
        meter.check()


def test_without_budgets_nothing_is_ever_refused() -> None:
    meter = CostMeter()
    meter.add(Usage(prompt_tokens=10**7, completion_tokens=10**7, cost_usd=1000.0))
    meter.check()
    assert not meter.exceeded


def test_negative_budgets_are_refused() -> None:
    with pytest.raises(ValueError, match="token_budget"):
        CostMeter(token_budget=-1)
