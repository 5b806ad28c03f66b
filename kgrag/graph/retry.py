"""Retries with exponential backoff for store calls that are safe to repeat, through tenacity.

A call is repeated only when both hold: the error is one the database driver classifies as
retryable (Neo4j: ``ServiceUnavailable``, ``SessionExpired``, ``TransientError`` — what
``Neo4jError.is_retryable()`` / ``DriverError.is_retryable()`` answer), and running the statement
twice gives the same graph as running it once: a read, or a write whose ``.cypher`` file declares
``// idempotent: yes`` in its header (:func:`kgrag.graph.cypher.idempotent`). Any other write is
never repeated: after a dropped connection its outcome is unknown, and the error says so.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from pydantic import Field
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from kgrag.core import Frozen

log = logging.getLogger(__name__)

T = TypeVar("T")


class RetryPolicy(Frozen):
    """Exponential backoff: attempt ``n`` (from 1) waits ``initial_delay_s * multiplier**(n-1)``,
    capped at ``max_delay_s``, each delay scaled by a random factor in ``[1 - jitter, 1]``."""

    attempts: int = Field(5, ge=1, description="total attempts, the first included")
    initial_delay_s: float = Field(0.2, ge=0)
    multiplier: float = Field(2.0, ge=1)
    max_delay_s: float = Field(5.0, ge=0)
    jitter: float = Field(0.2, ge=0, le=1)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """The wait after failed attempt ``attempt`` (from 1)."""
        r = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        base = min(self.max_delay_s, self.initial_delay_s * self.multiplier ** (attempt - 1))
        return base * (1 - self.jitter * r.random())

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The waits between attempts (``attempts - 1`` of them)."""
        for n in range(1, self.attempts):
            yield self.delay(n, rng)


#: No repetition (for writes that are not idempotent).
NO_RETRY = RetryPolicy(attempts=1)


def call_with_retry(
    fn: Callable[[], T],
    policy: RetryPolicy,
    is_retryable: Callable[[BaseException], bool],
    *,
    what: str = "store call",
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``fn``; on a retryable error wait and run it again, up to ``policy.attempts`` times.

    The last error is raised unchanged (the caller wraps it), with a note (``__notes__``) saying
    how many attempts were made when they ran out.
    """

    def wait(state: RetryCallState) -> float:
        return policy.delay(state.attempt_number)

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s failed (attempt %d of %d): %s; retrying in %.2f s",
            what,
            state.attempt_number,
            policy.attempts,
            type(error).__name__,
            state.upcoming_sleep,
        )

    def give_up(state: RetryCallState) -> T:
        error = state.outcome.exception() if state.outcome else None
        assert error is not None  # tenacity gives up only after a failed attempt
        error.add_note(f"gave up after {state.attempt_number} attempt(s)")
        raise error

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception(is_retryable),
        sleep=sleep,
        before_sleep=before_sleep,
        retry_error_callback=give_up,
    )
    return retrying(fn)
