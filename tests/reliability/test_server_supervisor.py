"""The HTTP server's store supervisor (kgrag/server/recovery.py) with stand-in stores: one
reopen per failure however many threads report it, a report about a store already replaced
changes nothing, failed reopen attempts back off exponentially, and stopping ends a recovery."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from kgrag.errors import StoreUnavailableError
from kgrag.server.errors import ApiError
from kgrag.server.recovery import StoreSupervisor

pytestmark = pytest.mark.reliability


class FakeStore:
    def __init__(self, name: str, down: bool = False) -> None:
        self.uri = f"fake://{name}"
        self.down = down
        self.closed = False
        self.reads = 0  # the supervisor's probes

    def read(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        self.reads += 1
        if self.down or self.closed:
            raise StoreUnavailableError(f"{self.uri} does not answer")
        return []

    def close(self) -> None:
        self.closed = True


def _until(condition: Callable[[], bool], what: str, bound_s: float = 10) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``bound_s`` seconds."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, f"not seen within {bound_s} s: {what}"
        time.sleep(0.01)


class Holder:
    def __init__(self, store: FakeStore) -> None:
        self.store = store


class Reopener:
    """Opens new FakeStores; the first ``failures`` attempts raise."""

    def __init__(self, failures: int = 0, delay: float = 0.0) -> None:
        self.failures = failures
        self.delay = delay
        self.calls: list[float] = []
        self.lock = threading.Lock()

    def __call__(self) -> FakeStore:
        with self.lock:
            self.calls.append(time.monotonic())
            n = len(self.calls)
        time.sleep(self.delay)
        if n <= self.failures:
            raise StoreUnavailableError(f"attempt {n}: the server does not start")
        return FakeStore(f"reopened-{n}")


def test_many_threads_reporting_one_failure_reopen_once() -> None:
    old = FakeStore("first", down=True)
    holder = Holder(old)
    reopen = Reopener(delay=0.3)
    sup = StoreSupervisor(holder, reopen)  # type: ignore[arg-type]
    barrier = threading.Barrier(16)
    started: list[bool] = []

    def report() -> None:
        barrier.wait()
        started.append(sup.failed(old, StoreUnavailableError("lost")))

    threads = [threading.Thread(target=report) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert started.count(True) == 1
    # meanwhile requests are refused with a 503 and Retry-After
    with pytest.raises(ApiError) as e:
        sup.check()
    assert e.value.status == 503 and int(e.value.headers["Retry-After"]) >= 1
    assert sup.wait_ready(10)
    assert len(reopen.calls) == 1 and sup.reopens == 1 and sup.failures == 1
    assert old.closed and holder.store is not old and sup.check() is holder.store
    # late reports about the replaced store start nothing
    assert sup.failed(old, StoreUnavailableError("late")) is False
    assert sup.ready and len(reopen.calls) == 1
    sup.stop()


def test_a_store_that_answers_again_is_kept() -> None:
    store = FakeStore("remote", down=True)
    holder = Holder(store)
    sup = StoreSupervisor(holder, None, min_backoff_s=0.05)  # type: ignore[arg-type]
    assert sup.failed(None, StoreUnavailableError("lost"))
    # probed, failed and probed again after its backoff: still recovering while it is down
    _until(lambda: store.reads >= 2, "two probes of the store while it is down")
    assert not sup.ready
    store.down = False  # the server came back; its client reconnects
    assert sup.wait_ready(5)
    assert holder.store is store and not store.closed and sup.reopens == 0
    sup.stop()


def test_failed_reopen_attempts_back_off_exponentially() -> None:
    holder = Holder(FakeStore("first", down=True))
    reopen = Reopener(failures=3)
    sup = StoreSupervisor(holder, reopen, min_backoff_s=0.2, max_backoff_s=0.5)  # type: ignore[arg-type]
    sup.failed(None, StoreUnavailableError("lost"))
    assert sup.wait_ready(10)
    assert len(reopen.calls) == 4 and sup.reopens == 1
    gaps = [b - a for a, b in zip(reopen.calls, reopen.calls[1:], strict=False)]
    # 0.2, 0.4, then capped at 0.5 (each gap also holds a probe and a close: a little more)
    for gap, expected in zip(gaps, (0.2, 0.4, 0.5), strict=True):
        assert expected - 0.02 <= gap < expected + 0.5, gaps
    sup.stop()


def test_stop_ends_a_recovery_that_cannot_succeed() -> None:
    holder = Holder(FakeStore("first", down=True))
    reopen = Reopener(failures=10_000)
    sup = StoreSupervisor(holder, reopen, min_backoff_s=5.0)  # type: ignore[arg-type]
    sup.failed(None, StoreUnavailableError("lost"))
    # the first attempt failed (its error recorded with the next attempt's time)
    _until(lambda: "attempt 1" in (sup.last_error or ""), "the first reopen attempt failing")
    # waiting out its 5 s backoff; a client is told to come back then
    with pytest.raises(ApiError) as e:
        sup.check()
    assert 4 <= int(e.value.headers["Retry-After"]) <= 5
    t0 = time.monotonic()
    sup.stop()
    assert time.monotonic() - t0 < 2
    assert not sup.wait_ready(0.1)
    assert len(reopen.calls) == 1
