"""Getting the graph store back without restarting the server.

When a request (or an ingestion job, or ``/healthz``) meets a :class:`StoreUnavailableError` (the
embedded FalkorDB server died, a remote server restarted or is unreachable), it reports it to the
:class:`StoreSupervisor`. The first report of a failure starts one background thread; reports
while it runs, or about a store already replaced, change nothing. The thread first checks the
store with a cheap read (a remote server that came back is reconnected to by its client), and
while it does not answer, closes it and opens a new one (an embedded store starts a new server,
which replays the append-only file), waiting longer after each failed attempt (exponential
backoff, capped). A store whose client reconnects by itself (Neo4j, ``GraphStore.reconnects``)
gets no ``reopen``: it is only probed until it answers, and never closed under the statements
of a running job. Until the store answers again every request that needs it gets a 503 with a
``Retry-After``, without touching the store.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from kgrag import metrics
from kgrag.graph.store import GraphStore
from kgrag.server.errors import ApiError

log = logging.getLogger(__name__)

#: Seconds a client is told to wait while the first reopen attempt runs.
FIRST_RETRY_AFTER_S = 2.0


class HoldsStore(Protocol):
    """What holds the store in use (the agent); the supervisor swaps ``store`` on reopening."""

    store: GraphStore


def probe_store(store: GraphStore) -> None:
    """A cheap read that fails when the store does not answer: the registered embedding spaces
    (a handful of nodes)."""
    store.read("embedding_space_list")


class StoreSupervisor:
    """Watches the store of ``holder`` and reopens it with ``reopen`` (None: only wait for it to
    answer again) after it became unavailable; thread-safe."""

    def __init__(
        self,
        holder: HoldsStore,
        reopen: Callable[[], GraphStore] | None,
        *,
        min_backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        probe: Callable[[GraphStore], None] = probe_store,
    ) -> None:
        self._holder = holder
        self._reopen = reopen
        self._min_backoff = min_backoff_s
        self._max_backoff = max_backoff_s
        self._probe = probe
        self._cond = threading.Condition()
        self._recovering = False
        self._stopped = False
        self._retry_at = 0.0  # time.monotonic() of the next attempt while recovering
        self._thread: threading.Thread | None = None
        self.failures = 0  #: failures that started a recovery
        self.reopens = 0  #: stores reopened
        self.last_error: str | None = None

    # -- state --------------------------------------------------------------------------------
    @property
    def store(self) -> GraphStore:
        return self._holder.store

    @property
    def ready(self) -> bool:
        with self._cond:
            return not (self._recovering or self._stopped)

    def retry_after(self) -> int:
        """Whole seconds until the store may answer again (at least 1)."""
        with self._cond:
            wait = self._retry_at - time.monotonic() if self._recovering else 0.0
        return max(1, math.ceil(wait))

    def unavailable(self) -> ApiError:
        """The 503 a request gets while the store is being recovered."""
        after = self.retry_after()
        with self._cond:
            stopped = self._stopped
        detail = (
            "the server is shutting down"
            if stopped
            else "the graph store does not answer; the server is reconnecting to it by itself. "
            f"Retry after {after} s: writes of interrupted ingestion jobs are idempotent and the "
            "server runs such jobs again"
        )
        return ApiError(503, "store_unavailable", detail, headers={"Retry-After": str(after)})

    def check(self) -> GraphStore:
        """The store to use now, or the 503 of :meth:`unavailable` while it is being recovered."""
        with self._cond:
            if not (self._recovering or self._stopped):
                return self._holder.store
        raise self.unavailable()

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the store answers again (True), at most ``timeout`` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: not self._recovering or self._stopped, timeout)
            return not (self._recovering or self._stopped)

    # -- recovery -----------------------------------------------------------------------------
    def failed(self, store: GraphStore | None = None, error: BaseException | None = None) -> bool:
        """Report that ``store`` (None: the current one) is unavailable. Starts a recovery unless
        one runs already or ``store`` was already replaced; True when it started one."""
        with self._cond:
            if self._stopped or self._recovering:
                return False
            if store is not None and store is not self._holder.store:
                return False  # that store failed before the last recovery replaced it
            self._recovering = True
            self._retry_at = time.monotonic() + FIRST_RETRY_AFTER_S
            self.failures += 1
            self.last_error = str(error) if error is not None else None
            self._thread = threading.Thread(
                target=self._recover, name="kgrag-store-recovery", daemon=True
            )
            self._thread.start()
        log.warning("the graph store does not answer (%s); recovering it", error or "probe failed")
        return True

    def _recover(self) -> None:
        delay = self._min_backoff
        attempt = 0
        while True:
            attempt += 1
            try:
                reopened = self._attempt()
            except Exception as e:
                with self._cond:
                    self.last_error = str(e)
                    self._retry_at = time.monotonic() + delay
                log.warning(
                    "store recovery attempt %d failed: %s; next attempt in %.1f s",
                    attempt,
                    e,
                    delay,
                )
                with self._cond:
                    if self._cond.wait_for(lambda: self._stopped, delay):
                        return
                delay = min(self._max_backoff, delay * 2)
                continue
            with self._cond:
                self._recovering = False
                self._cond.notify_all()
            log.warning(
                "the graph store answers again (%s, attempt %d)",
                "reopened" if reopened else "reconnected",
                attempt,
            )
            return

    def _attempt(self) -> bool:
        """Probe the store; reopen it when it does not answer. True when it was reopened."""
        with self._cond:
            if self._stopped:
                return False
        old = self._holder.store
        try:
            self._probe(old)
            return False
        except Exception as e:
            if self._reopen is None:
                raise
            log.info("the store %s does not answer (%s): reopening it", old.uri, e)
        # Close first: the last user of a dead embedded server clears its registry.
        with contextlib.suppress(Exception):
            old.close()
        new = self._reopen()
        try:
            self._probe(new)
        except Exception:
            with contextlib.suppress(Exception):
                new.close()
            raise
        with self._cond:
            if self._stopped:  # shut down meanwhile: nobody would close it
                new.close()
                return False
            self._holder.store = new
            self.reopens += 1
        metrics.STORE_REOPENS.inc()
        return True

    def stop(self, timeout: float = 10.0) -> None:
        """Stop recovering (at shutdown); waits for a running attempt at most ``timeout`` s."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def status(self) -> dict[str, Any]:
        with self._cond:
            return {
                "recovering": self._recovering,
                "failures": self.failures,
                "reopens": self.reopens,
            }
