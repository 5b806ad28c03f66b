"""Runs a validated plan: topological generations, independent steps of a generation
concurrently, a timeout per step, conditions evaluated by the whitelist evaluator, failures
recorded and their dependants skipped unless a condition routes around them."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from kgrag.cancel import CancelToken
from kgrag.errors import CancelledError, KgragError
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.handlers import run_step
from kgrag.graph import cypher
from kgrag.planner.conditions import parse_condition
from kgrag.planner.models import Plan, Step
from kgrag.planner.validate import generations, validate_plan

log = logging.getLogger(__name__)


class Executor:
    def __init__(
        self, env: ExecutionEnv, *, step_timeout_s: float = 30.0, max_parallel: int = 4
    ) -> None:
        self.env = env
        self.step_timeout_s = step_timeout_s
        self.max_parallel = max_parallel

    def validate(self, plan: Plan) -> None:
        validate_plan(
            plan,
            template_exists=lambda name: cypher.exists(f"templates/{name}"),
            tool_exists=lambda name: name in self.env.tools,
        )

    def run(
        self, plan: Plan, on_step: Callable[[Step, StepOutcome], None] | None = None
    ) -> dict[int, StepOutcome]:
        graph = validate_plan(
            plan,
            template_exists=lambda name: cypher.exists(f"templates/{name}"),
            tool_exists=lambda name: name in self.env.tools,
        )
        outcomes: dict[int, StepOutcome] = {}
        pool = ThreadPoolExecutor(max_workers=self.max_parallel, thread_name_prefix="kgrag-step")
        try:
            for generation in generations(graph):
                started: dict[int, tuple[float, Future[StepOutcome], CancelToken]] = {}
                for sid in generation:
                    step = plan.step(sid)
                    skip = self._skip_reason(step, outcomes)
                    if skip is not None:
                        outcomes[sid] = StepOutcome(status="skipped", error=skip)
                        continue
                    inputs = {d: outcomes[d] for d in step.dependencies}
                    token = CancelToken()
                    started[sid] = (
                        time.perf_counter(),
                        pool.submit(run_step, step, inputs, self.env, token),
                        token,
                    )
                for sid, (t0, future, token) in started.items():
                    outcomes[sid] = self._finish(sid, t0, future, token)
                for sid in generation:
                    if on_step is not None:
                        on_step(plan.step(sid), outcomes[sid])
        finally:
            # A step that timed out was cancelled: it stops at its next statement, model call
            # or transcription window (a thread cannot be killed); the query does not wait for
            # it, and whatever it returns late is dropped. Steps only read.
            pool.shutdown(wait=False, cancel_futures=True)
        return outcomes

    def _skip_reason(self, step: Step, outcomes: dict[int, StepOutcome]) -> str | None:
        failed = [d for d in step.dependencies if outcomes[d].status != "ok"]
        if step.condition:
            try:
                holds = parse_condition(step.condition).evaluate(outcomes)
            except KgragError as e:
                return f"condition could not be evaluated: {e}"
            if not holds:
                return f"condition is false: {step.condition}"
            return None  # a true condition routes around failed dependencies
        if failed:
            return f"skipped because step {failed[0]} did not succeed"
        return None

    def _finish(
        self, sid: int, t0: float, future: Future[StepOutcome], token: CancelToken
    ) -> StepOutcome:
        # the timeout counts from the step's start, not from when this generation's earlier
        # steps were collected
        remaining = max(0.0, t0 + self.step_timeout_s - time.perf_counter())
        try:
            outcome: StepOutcome = future.result(timeout=remaining)
        except FutureTimeout:
            reason = f"step timed out after {self.step_timeout_s:g} s (KGRAG_STEP_TIMEOUT_S)"
            token.cancel(reason)
            future.add_done_callback(functools.partial(_log_late_step, sid))
            outcome = StepOutcome(status="error", error=reason)
        except KgragError as e:
            outcome = StepOutcome(status="error", error=str(e))
        except Exception as e:  # a bug or a driver error: record it, never crash the query
            log.exception("step %s failed", sid)
            outcome = StepOutcome(status="error", error=f"{type(e).__name__}: {e}")
        outcome.duration_ms = round((time.perf_counter() - t0) * 1000, 2)
        return outcome


def _log_late_step(sid: int, future: Future[StepOutcome]) -> None:
    """How a step that timed out ended: stopped by its cancel token, or finished anyway."""
    error = future.exception()
    if isinstance(error, CancelledError):
        log.info("step %s stopped after its timeout: %s", sid, error)
    else:
        log.info("step %s finished after its timeout; its result was dropped", sid)
