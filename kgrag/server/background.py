"""Trace retention applied by the server itself: with ``Settings.trace_retention_days`` set, a
background thread runs :func:`kgrag.retention.prune_traces` (the same prune as ``kgrag traces
prune``) every ``trace_retention_interval_s`` seconds on the store in use, keeping the
``trace_retention_keep_last`` newest questions. Only traces go (Query, Plan, Step, Answer and the
sessions left empty); documents, chunks, images, tables and entities are never touched. A prune
that fails is logged and tried again at the next interval; while the store is being reopened
the round is skipped."""

from __future__ import annotations

import logging
import threading

from kgrag.errors import StoreUnavailableError
from kgrag.retention import prune_traces
from kgrag.server.errors import ApiError
from kgrag.server.recovery import StoreSupervisor

log = logging.getLogger(__name__)


class RetentionTask:
    """The background prune (see the module); :meth:`stop` ends it."""

    def __init__(
        self,
        supervisor: StoreSupervisor,
        *,
        older_than_days: float,
        keep_last: int,
        interval_s: float,
    ) -> None:
        self._supervisor = supervisor
        self._older_than_days = older_than_days
        self._keep_last = keep_last
        self._interval_s = interval_s
        self._stop = threading.Event()
        self.rounds = 0  #: prunes that ran to the end
        self._thread = threading.Thread(target=self._loop, name="kgrag-retention", daemon=True)
        self._thread.start()
        log.info(
            "trace retention: every %.0f s, traces older than %g days go (flagged ones and the "
            "newest %d of each session kept)",
            interval_s,
            older_than_days,
            keep_last,
        )

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.prune_once()

    def prune_once(self) -> None:
        """One prune of the store in use now (skipped while it is being reopened)."""
        try:
            store = self._supervisor.check()
        except ApiError:
            log.info("trace retention: the store is being reopened; skipping this round")
            return
        try:  # prune_traces logs what it removed
            prune_traces(store, older_than_days=self._older_than_days, keep_last=self._keep_last)
        except StoreUnavailableError as e:
            log.warning("trace retention: %s", e)
            self._supervisor.failed(store, e)
            return
        except Exception:  # the thread must survive a failed round
            log.exception("trace retention failed; trying again at the next interval")
            return
        self.rounds += 1

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop after the running prune (waits for it at most ``timeout_s`` seconds)."""
        self._stop.set()
        self._thread.join(timeout_s)
