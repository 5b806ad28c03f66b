"""``kgrag serve`` under uvicorn, stopping without dropping work.

On the first SIGTERM (or SIGINT) :class:`DrainingServer` keeps serving but takes no new work
(:class:`~kgrag.server.drain.Drain`: ``/readyz`` and new questions and jobs answer 503
``shutting_down``), interrupts the running ingestion job at its next progress event (it ends
``interrupted`` and resumes when submitted again), waits for the answers in flight, at most
``Settings.shutdown_timeout_s``, and only then lets uvicorn close its sockets and run the app's
shutdown. A second signal stops at once (uvicorn's own handling)."""

from __future__ import annotations

import logging
import signal
import threading
import time
from types import FrameType

import uvicorn
from fastapi import FastAPI

from kgrag.server.state import server_state_of

log = logging.getLogger(__name__)

#: The signals that start a drain.
DRAIN_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose first stop signal drains ``app`` (see the module) first."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, timeout_s: float) -> None:
        super().__init__(config)
        self._app = app
        self._timeout_s = timeout_s
        self._draining: threading.Thread | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        state = getattr(self._app.state, "server", None)
        if self._draining is not None or sig not in DRAIN_SIGNALS or state is None:
            super().handle_exit(sig, frame)  # a second signal, or not started yet: stop now
            return
        # a signal handler does no waiting: the drain runs beside the event loop
        self._draining = threading.Thread(target=self._drain, name="kgrag-drain", daemon=True)
        self._draining.start()

    def _drain(self) -> None:
        state = server_state_of(self._app.state)
        started = time.monotonic()
        state.drain.start()
        state.jobs.interrupt()
        log.warning(
            "shutting down: no new work taken; waiting up to %.0f s for %d answer(s) in flight",
            self._timeout_s,
            state.drain.in_flight,
        )
        if state.drain.wait_idle(self._timeout_s):
            log.warning("drained in %.1f s", time.monotonic() - started)
        else:
            log.error(
                "%d answer(s) still in flight after %.0f s: stopping anyway",
                state.drain.in_flight,
                self._timeout_s,
            )
        self.should_exit = True  # uvicorn's main loop sees it within 0.1 s
