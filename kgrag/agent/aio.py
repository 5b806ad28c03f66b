"""The asyncio side of :class:`~kgrag.agent.agent.KnowledgeAgent` (``aask``, ``astream``,
``asearch``, ``aingest``): the synchronous work runs in a worker thread of the event loop's
executor, and cancelling the awaiting task sets the run's
:class:`~kgrag.cancel.CancelToken`. A question checks that token at each of its events (after a
plan, a step, a judge call), so a cancelled one stops there with no further step or model call;
its trace is written only after retrieval and synthesis, in one go, so a question stopped before
that leaves no ``Query`` node at all, and one stopped later leaves its complete trace. The
coroutine returns (raising :class:`asyncio.CancelledError`) only once the worker has stopped,
so nothing of the run is still writing when the caller goes on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from kgrag.cancel import CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Why a run stopped when its awaiting task was cancelled (``CancelledError.reason``).
CANCELLED_BY_CALLER = "the awaiting task was cancelled"


async def _wait_stopped(future: asyncio.Future[Any]) -> None:
    """Wait for a worker that was asked to stop; its outcome (the CancelledError it stopped
    with, or what it returned when it was past its last check) is dropped."""
    with contextlib.suppress(BaseException):
        await asyncio.shield(future)
    if not future.done():  # cancelled again while waiting: the caller will not wait longer
        log.warning("a cancelled run is still stopping in its worker thread")


async def run_cancellable(work: Callable[[], T], cancel: CancelToken) -> T:
    """``work()`` in a worker thread; when the awaiting task is cancelled, ``cancel`` is set and
    this waits for ``work`` to stop before the cancellation goes on."""
    future = asyncio.get_running_loop().run_in_executor(None, work)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.cancel(CANCELLED_BY_CALLER)
        await _wait_stopped(future)
        raise


async def stream_events(
    start: Callable[[Callable[[object], None]], Callable[[], Any]], cancel: CancelToken
) -> AsyncIterator[Any]:
    """The events a run emits, as they happen. ``start(emit)`` builds the run with ``emit``
    (called from the worker thread; it raises CancelledError once ``cancel`` is set) and
    returns the function that runs it. An error of the run is raised after the events before
    it; when the consumer stops early (``aclose``, a cancelled task) the run is cancelled and
    waited for."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[Any] = asyncio.Queue()
    done = object()

    def emit(event: object) -> None:
        loop.call_soon_threadsafe(events.put_nowait, event)
        cancel.check()

    work = start(emit)
    future = loop.run_in_executor(None, work)
    # scheduled after every event the worker emitted (the same thread, in order)
    future.add_done_callback(lambda _: events.put_nowait(done))
    try:
        while (item := await events.get()) is not done:
            yield item
        future.result()  # the run's error, if any
    finally:
        if not future.done():
            cancel.cancel(CANCELLED_BY_CALLER)
            await _wait_stopped(future)
