"""Cooperative cancellation: a :class:`CancelToken` is passed down to work that can run long; the
work checks it at its boundaries and stops with :class:`~kgrag.errors.CancelledError`. A thread
cannot be killed, so this is how work stops instead of only losing its reply. A question
streamed by ``POST /ask/stream`` stops at its next event once its client goes away
(``KnowledgeAgent.stream(cancel=...)``), and so does one awaited with ``aask``, ``astream`` or
``asearch`` whose task is cancelled (:mod:`kgrag.agent.aio`); a plan step that times out is
cancelled by the scheduler and stops at its next statement, model call or transcription window
(transcribers check the token between decoded windows and Whisper segments)."""

from __future__ import annotations

import threading

from kgrag.errors import CancelledError


class CancelToken:
    """Set once, read from any thread. A child token is cancelled when its parent is."""

    __slots__ = ("_event", "_parent", "_reason")

    def __init__(self, parent: CancelToken | None = None) -> None:
        self._event = threading.Event()
        self._parent = parent
        self._reason: str | None = None

    def child(self) -> CancelToken:
        """A token cancelled with this one, that can also be cancelled alone (one step)."""
        return CancelToken(self)

    def cancel(self, reason: str) -> None:
        """Ask the work to stop; the first reason given is kept."""
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set() or (self._parent is not None and self._parent.cancelled)

    @property
    def reason(self) -> str | None:
        if self._event.is_set():
            return self._reason
        return self._parent.reason if self._parent is not None else None

    def check(self) -> None:
        """Raise :class:`CancelledError` (with the reason) when cancelled."""
        if self.cancelled:
            raise CancelledError(self.reason or "cancelled")


def check(token: CancelToken | None) -> None:
    """:meth:`CancelToken.check` for an optional token."""
    if token is not None:
        token.check()
