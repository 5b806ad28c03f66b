"""The executor's scheduling: independent steps of a generation run at the same time, a step
that exceeds its timeout is recorded as failed without holding the query, and a failed step's
dependants are skipped unless a condition routes around it. Tools are the only steps that need
no store, so the plans here are made of ``tool_call`` steps over in-test tools."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, cast

import pytest

from kgrag.cancel import CancelToken
from kgrag.core import AccessContext, Hit
from kgrag.errors import CancelledError, ExecutionError
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.handlers import run_step
from kgrag.executor.scheduler import Executor
from kgrag.graph.store import GraphStore
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.models import Plan

Tool = Callable[[dict[str, Any]], list[Hit]]


def _env(tools: dict[str, Tool]) -> ExecutionEnv:
    # tool_call steps never touch the store or the embedder
    return ExecutionEnv(
        store=cast(GraphStore, None),
        text_embedder=cast(TextEmbedder, None),
        access=AccessContext(),
        tools=tools,
    )


def _step(
    sid: int, tool: str, deps: tuple[int, ...] = (), condition: str | None = None
) -> dict[str, Any]:
    return {
        "step_id": sid,
        "type": "tool_call",
        "parameters": {"tool": tool, "arguments": {}},
        "dependencies": list(deps),
        "condition": condition,
    }


def _hit(name: str) -> list[Hit]:
    return [Hit(id=name, kind="document", score=1.0, text=name)]


def test_independent_steps_of_a_generation_run_at_the_same_time() -> None:
    # each step waits for the other at a barrier: run one after the other, both would time out
    barrier = threading.Barrier(2, timeout=10)

    def meet(_: dict[str, Any]) -> list[Hit]:
        barrier.wait()
        return _hit("met")

    plan = Plan.parse({"plan": [_step(1, "meet"), _step(2, "meet")]})
    outcomes = Executor(_env({"meet": meet})).run(plan)
    assert [outcomes[s].status for s in (1, 2)] == ["ok", "ok"], outcomes


def test_a_step_over_its_timeout_fails_and_the_query_does_not_wait_for_it() -> None:
    release = threading.Event()
    finished = threading.Event()

    def stuck(_: dict[str, Any]) -> list[Hit]:
        release.wait(timeout=60)
        finished.set()
        return _hit("late")

    plan = Plan.parse(
        {
            "plan": [
                _step(1, "stuck"),
                _step(2, "quick"),
                _step(3, "quick", (1,)),
                _step(4, "quick", (1,), condition="step_1.status == 'error'"),
            ]
        }
    )
    try:
        outcomes = Executor(
            _env({"stuck": stuck, "quick": lambda _: _hit("q")}), step_timeout_s=0.2
        ).run(plan)
        # run() returned while the stuck tool is still blocked: nothing waited for it
        assert not finished.is_set()
    finally:
        release.set()
    assert outcomes[1].status == "error"
    assert outcomes[1].error == "step timed out after 0.2 s (KGRAG_STEP_TIMEOUT_S)"
    assert outcomes[2].status == "ok"
    assert outcomes[3].status == "skipped" and "step 1 did not succeed" in (outcomes[3].error or "")
    assert outcomes[4].status == "ok"  # its condition routes around the failure


def test_a_failing_step_records_its_error_and_its_dependants_are_skipped() -> None:
    def broken(_: dict[str, Any]) -> list[Hit]:
        raise ExecutionError("the tool broke")

    plan = Plan.parse({"plan": [_step(1, "broken"), _step(2, "ok", (1,)), _step(3, "ok", (2,))]})
    outcomes = Executor(_env({"broken": broken, "ok": lambda _: _hit("x")})).run(plan)
    assert outcomes[1].status == "error" and outcomes[1].error == "the tool broke"
    assert outcomes[2].status == "skipped" and outcomes[3].status == "skipped"
    assert "step 2 did not succeed" in (outcomes[3].error or "")


class _GatedEmbedder:
    """The model of a step whose embedding takes as long as the test wants (the store is never
    reached when cancellation works: the step's next statement is where it stops)."""

    model_name = "gated"
    dimensions = 3

    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.release.wait(timeout=60)
        return [[1.0, 0.0, 0.0] for _ in texts]


def test_a_step_that_times_out_stops_at_its_next_statement(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    env = ExecutionEnv(
        store=cast(GraphStore, None),
        text_embedder=cast(TextEmbedder, _GatedEmbedder(release)),
        access=AccessContext(),
    )
    plan = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "parameters": {"query": "anything", "k": 5},
                    "dependencies": [],
                }
            ]
        }
    )
    with caplog.at_level(logging.INFO, logger="kgrag.executor.scheduler"):
        outcomes = Executor(env, step_timeout_s=0.2).run(plan)
        assert outcomes[1].status == "error" and "timed out" in (outcomes[1].error or "")
        release.set()  # the model answers late: the step must not go on to its statement
        deadline = time.monotonic() + 30
        while "after its timeout" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
    assert "step 1 " in caplog.text and "after its timeout" in caplog.text, caplog.text
    # the token the scheduler cancels stops a step before its next statement (the store is None:
    # reaching it would be an AttributeError, not a CancelledError)
    token = CancelToken()
    token.cancel("step timed out")
    with pytest.raises(CancelledError, match="step timed out"):
        run_step(plan.step(1), {}, env, token)
