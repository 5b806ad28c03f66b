"""Trace retention applied by the server itself: with ``Settings.trace_retention_days`` set, a
background thread runs :func:`kgrag.retention.prune_traces` (the same prune as ``kgrag traces
prune``) every ``trace_retention_interval_s`` seconds on the store in use, keeping the
``trace_retention_keep_last`` newest questions, at the duty cycle ``trace_prune_duty`` (it
pauses between batches; a stop ends it at its next pause). Only traces go (Query, Plan, Step,
Answer and the sessions left empty); documents, chunks, images, tables and entities are never
touched. A prune that fails is logged and tried again at the next interval; while the store is
being reopened the round is skipped."""

from __future__ import annotations

import logging
import threading

from kgrag.errors import StoreUnavailableError
from kgrag.retention import Pacer, PruneReport, prune_traces
from kgrag.server.errors import ApiError
from kgrag.server.recovery import StoreSupervisor

log = logging.getLogger(__name__)


class _Stopped(Exception):
    """The task was stopped during a prune's pause (the batches done so far stay done)."""


class RetentionTask:
    """The background prune (see the module); :meth:`stop` ends it."""

    def __init__(
        self,
        supervisor: StoreSupervisor,
        *,
        older_than_days: float,
        keep_last: int,
        interval_s: float,
        duty: float,
    ) -> None:
        self._supervisor = supervisor
        self._older_than_days = older_than_days
        self._keep_last = keep_last
        self._interval_s = interval_s
        self._duty = duty
        self._stop = threading.Event()
        self.rounds = 0  #: prunes that ran to the end
        self.last: PruneReport | None = None  #: what the last of them removed
        self._thread = threading.Thread(target=self._loop, name="kgrag-retention", daemon=True)
        self._thread.start()
        log.info(
            "trace retention: every %.0f s, traces older than %g days go (flagged ones and the "
            "newest %d of each session kept), at duty %g",
            interval_s,
            older_than_days,
            keep_last,
            duty,
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
        pacer = Pacer(self._duty, sleep=self._pause)
        try:  # prune_traces logs what it removed
            report = prune_traces(
                store,
                older_than_days=self._older_than_days,
                keep_last=self._keep_last,
                pacer=pacer,
            )
        except _Stopped:
            log.info("trace retention: stopped during a prune (the next one finishes it)")
            return
        except StoreUnavailableError as e:
            log.warning("trace retention: %s", e)
            self._supervisor.failed(store, e)
            return
        except Exception:  # the thread must survive a failed round
            log.exception("trace retention failed; trying again at the next interval")
            return
        self.last = report
        self.rounds += 1

    def _pause(self, seconds: float) -> None:
        """A prune's pause, cut short (ending the prune) when the task is stopped."""
        if self._stop.wait(seconds):
            raise _Stopped

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop; a running prune ends at its next pause (waits for it at most ``timeout_s``
        seconds)."""
        self._stop.set()
        self._thread.join(timeout_s)
