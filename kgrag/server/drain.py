"""Stopping without dropping work (SIGTERM, :mod:`kgrag.server.lifecycle`): once the server
drains, ``/readyz`` and ``/healthz`` answer 503 ``shutting_down`` (a load balancer sends new
requests elsewhere), a new question or ingestion job gets the same 503 with Retry-After, and the
answers already being built may finish: :meth:`Drain.wait_idle` waits for them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from kgrag.server.errors import ApiError

#: Seconds a client refused while the server drains is told to wait (another instance, or this
#: one restarted, answers by then).
DRAIN_RETRY_AFTER_S = 5


class Drain:
    """Whether this server still takes new work, and how many answers are in flight;
    thread-safe."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._draining = False
        self._in_flight = 0

    @property
    def draining(self) -> bool:
        with self._cond:
            return self._draining

    @property
    def in_flight(self) -> int:
        with self._cond:
            return self._in_flight

    def start(self) -> bool:
        """Stop taking new work; True the first time."""
        with self._cond:
            first = not self._draining
            self._draining = True
            self._cond.notify_all()
            return first

    def refusal(self) -> ApiError:
        """The 503 of a request that would start new work while the server drains."""
        return ApiError(
            503,
            "shutting_down",
            "this server is shutting down: it finishes the answers in flight and takes no new "
            f"work; retry after {DRAIN_RETRY_AFTER_S} s (another instance, or this one once "
            "restarted)",
            headers={"Retry-After": str(DRAIN_RETRY_AFTER_S)},
        )

    def check(self) -> None:
        """:meth:`refusal` while draining."""
        if self.draining:
            raise self.refusal()

    def admit(self) -> None:
        """Count one more answer in flight (:meth:`done` when it ends); :meth:`refusal` while
        draining."""
        with self._cond:
            if self._draining:
                raise self.refusal()
            self._in_flight += 1

    def done(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._cond.notify_all()

    @contextmanager
    def answer(self) -> Iterator[None]:
        """:meth:`admit` for the duration of a block."""
        self.admit()
        try:
            yield
        finally:
            self.done()

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no answer is in flight (True), at most ``timeout_s`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: self._in_flight == 0, timeout_s)
