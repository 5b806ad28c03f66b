"""What one question may use: retrieval iterations, LLM money and tokens, time per plan step.
One frozen model, built from :class:`~kgrag.config.Settings` by the agent, so every limit a user
can set is enforced in one place (each limit's error message names the setting to raise)."""

from __future__ import annotations

from pydantic import Field

from kgrag.agent.loop import DEFAULT_MAX_ITERATIONS
from kgrag.config import DEFAULT_LLM_MAX_TOKENS_PER_QUERY, Settings
from kgrag.core import Frozen
from kgrag.planner.models import MAX_PLAN_STEPS


class QueryLimits(Frozen):
    max_iterations: int = Field(DEFAULT_MAX_ITERATIONS, ge=1, le=10)
    """Retrieval iterations (plan, execute, judge) per question (KGRAG_MAX_ITERATIONS)."""
    llm_budget_usd: float | None = Field(None, ge=0)
    """LLM spend per question (KGRAG_LLM_BUDGET_USD); unlimited when unset."""
    llm_max_tokens: int | None = Field(DEFAULT_LLM_MAX_TOKENS_PER_QUERY, ge=0)
    """LLM prompt + completion tokens per question (KGRAG_LLM_MAX_TOKENS_PER_QUERY)."""
    max_plan_steps: int = Field(MAX_PLAN_STEPS, ge=16, le=MAX_PLAN_STEPS)
    """Steps one question may run, over all its iterations (KGRAG_MAX_PLAN_STEPS): an LLM plan
    longer than this is refused (the rule plan runs instead, the trace says why), and the loop
    stops refining (``max_iterations``) before a refinement would pass it."""
    step_timeout_s: float = Field(30.0, gt=0)
    """Time one plan step may take before it is recorded as failed (KGRAG_STEP_TIMEOUT_S)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> QueryLimits:
        return cls(
            max_iterations=settings.max_iterations,
            llm_budget_usd=settings.llm_budget_usd,
            llm_max_tokens=settings.llm_max_tokens_per_query,
            step_timeout_s=settings.step_timeout_s,
            max_plan_steps=settings.max_plan_steps,
        )
