"""Retries with exponential backoff for store calls that are safe to repeat.

A call is repeated only when both hold: the error is one the database driver classifies as
retryable (Neo4j: ``ServiceUnavailable``, ``SessionExpired``, ``TransientError`` — what
``Neo4jError.is_retryable()`` / ``DriverError.is_retryable()`` answer), and running the statement
twice gives the same graph as running it once (a read, or a write built from ``MERGE`` and plain
``SET``). A write that creates nodes unconditionally or increments a property is never repeated:
after a dropped connection its outcome is unknown, and the error says so.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

T = TypeVar("T")

# A CREATE clause that is not "ON CREATE SET" and not schema DDL ("CREATE INDEX ... IF NOT EXISTS").
_CREATE_CLAUSE = re.compile(
    r"(?<!\bON\s)\bCREATE\b(?!\s+(?:OR\s+REPLACE\s+)?(?:VECTOR\s+|FULLTEXT\s+|RANGE\s+|TEXT\s+|"
    r"POINT\s+|LOOKUP\s+)?(?:INDEX|CONSTRAINT)\b)",
    re.IGNORECASE,
)
# SET a.b = a.b + ... or SET a.b = coalesce(a.b, 0) + ...: repeating it changes the value again.
_INCREMENT = re.compile(
    r"\b(\w+)\.(\w+)\s*=\s*(?:coalesce\(\s*\1\.\2\s*,[^)]*\)|\1\.\2)\s*[-+]",
    re.IGNORECASE,
)


class RetryPolicy(BaseModel):
    """Exponential backoff: attempt ``n`` (from 1) waits ``initial_delay_s * multiplier**(n-1)``,
    capped at ``max_delay_s``, each delay scaled by a random factor in ``[1 - jitter, 1]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    attempts: int = Field(5, ge=1, description="total attempts, the first included")
    initial_delay_s: float = Field(0.2, ge=0)
    multiplier: float = Field(2.0, ge=1)
    max_delay_s: float = Field(5.0, ge=0)
    jitter: float = Field(0.2, ge=0, le=1)

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The waits between attempts (``attempts - 1`` of them)."""
        r = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        for n in range(self.attempts - 1):
            base = min(self.max_delay_s, self.initial_delay_s * self.multiplier**n)
            yield base * (1 - self.jitter * r.random())


#: No repetition (for writes that are not idempotent).
NO_RETRY = RetryPolicy(attempts=1)


def is_idempotent(cypher: str) -> bool:
    """Whether running ``cypher`` twice leaves the same graph as running it once."""
    return not _CREATE_CLAUSE.search(cypher) and not _INCREMENT.search(cypher)


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
    delays = policy.delays()
    attempt = 1
    while True:
        try:
            return fn()
        except Exception as e:
            if not is_retryable(e):
                raise
            delay = next(delays, None)
            if delay is None:
                e.add_note(f"gave up after {attempt} attempt(s)")
                raise
            log.warning(
                "%s failed (attempt %d of %d): %s; retrying in %.2f s",
                what,
                attempt,
                policy.attempts,
                type(e).__name__,
                delay,
            )
            sleep(delay)
            attempt += 1
