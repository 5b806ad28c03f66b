"""Trace retention and erasure: removing the traces of questions from the graph.

Every answer leaves a trace (``Query``, ``Plan``, ``Step``, ``Answer`` and the ``Session`` it was
asked in, with their relationships), about 28 KB of store a question. :func:`prune_traces` removes
those of questions asked before a time, except the flagged ones (:func:`flag_query`: their audit
is kept) and, if asked, the newest ones of each session; :func:`forget_user` removes every
question one user asked (an erasure request), flagged or not. Both delete in batches of queries
(each batch one atomic statement), so a large prune never holds one huge transaction, and pause
after each statement (:class:`Pacer`: a prune works at most a ``duty`` share of its wall time,
``Settings.trace_prune_duty``), so the questions asked meanwhile wait little; both leave the
evidence alone: documents, chunks, segments, images, tables and entities are never
touched. When they removed anything, the store is compacted afterwards (:func:`compact`).
A session is removed once it has no question left.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TypeVar

from kgrag import metrics
from kgrag.auth.principal import check_name
from kgrag.config import DEFAULT_PRUNE_DUTY, MAX_AGE_DAYS, MAX_KEEP_LAST, MIN_PRUNE_DUTY
from kgrag.core import Frozen, check_text
from kgrag.errors import NotFoundError
from kgrag.graph.store import GraphStore

log = logging.getLogger(__name__)

#: Queries whose traces one statement removes (a question has about ten trace nodes and fifty
#: relationships): a statement holds the store's write lock for tens of milliseconds, not
#: hundreds, so the questions asked meanwhile wait little (bench/trace_retention.py).
DEFAULT_BATCH = 50
#: The longest reason a flag records, in characters.
MAX_FLAG_REASON = 2000


def check_age_days(days: float) -> float:
    """``days`` if it is a prune's age (0 to :data:`MAX_AGE_DAYS`), else ValueError saying why."""
    if not math.isfinite(days) or not 0 <= days <= MAX_AGE_DAYS:
        raise ValueError(f"the age must be 0 to {MAX_AGE_DAYS:,} days (100 years), not {days}")
    return days


def check_duty(duty: float) -> float:
    """``duty`` if it is a prune's duty cycle (:data:`MIN_PRUNE_DUTY` to 1), else ValueError."""
    if not math.isfinite(duty) or not MIN_PRUNE_DUTY <= duty <= 1:
        raise ValueError(
            f"the duty cycle (the share of its wall time a prune spends deleting) must be "
            f"{MIN_PRUNE_DUTY} to 1, not {duty}"
        )
    return duty


_T = TypeVar("_T")


@dataclass
class Pacer:
    """The pace of a prune or an erasure: after each batch (its statements' time, ``work``), it
    sleeps ``work * (1 / duty - 1)``, so that it works a ``duty`` share of its wall time and
    leaves the rest to the questions asked meanwhile: 1 never pauses, 0.5 pauses as long as
    each batch took, 0.25 three times as long. A smaller duty slows the prune down by the
    same factor (BENCHMARKS.md, "Trace retention"). ``clock`` and ``sleep`` are the process's
    unless given (a stop event's wait, say)."""

    duty: float = DEFAULT_PRUNE_DUTY
    clock: Callable[[], float] = time.perf_counter
    sleep: Callable[[float], object] = time.sleep
    work_seconds: float = field(default=0.0, init=False)
    """Seconds the batches took so far."""
    pause_seconds: float = field(default=0.0, init=False)
    """Seconds it paused so far."""

    def __post_init__(self) -> None:
        check_duty(self.duty)

    def run(self, batch: Callable[[], _T]) -> _T:
        """``batch()``, then the pause its time calls for."""
        started = self.clock()
        result = batch()
        work = self.clock() - started
        pause = work * (1 / self.duty - 1)
        self.work_seconds += work
        self.pause_seconds += pause
        if pause > 0:
            self.sleep(pause)
        return result


def check_keep_last(count: int) -> int:
    """``count`` if it is 0 to :data:`MAX_KEEP_LAST`, else ValueError saying why."""
    if not 0 <= count <= MAX_KEEP_LAST:
        raise ValueError(
            f"the number of questions kept must be 0 to {MAX_KEEP_LAST:,}, not {count}"
        )
    return count


class PruneReport(Frozen):
    """What a prune or an erasure removed."""

    queries: int
    """Questions whose traces were removed."""
    nodes: int
    """Trace nodes removed (Query, Plan, Step, Answer), sessions not included."""
    sessions: int
    """Sessions removed because no question was left in them."""
    before: str | None = None
    """Prune: questions asked before this time (ISO 8601, UTC) were removed."""
    duty: float = 1.0
    """The duty cycle it ran at (:class:`Pacer`)."""
    work_seconds: float = 0.0
    """Seconds its statements took (the compaction not included)."""
    pause_seconds: float = 0.0
    """Seconds it paused between them."""


class FlagReport(Frozen):
    """The flag of one answer: while it is set, no prune removes the question's trace and audit."""

    query_id: str
    flagged: bool
    flagged_at: str | None = None
    """When it was flagged (ISO 8601, UTC)."""
    flagged_by: str | None = None
    """Who flagged it: the credential id (``key:...``, ``jwt:...``, ``local``) or ``operator``."""
    reason: str | None = None


def prune_traces(
    store: GraphStore,
    *,
    older_than_days: float,
    keep_last: int = 0,
    batch: int = DEFAULT_BATCH,
    now: datetime | None = None,
    pacer: Pacer | None = None,
) -> PruneReport:
    """Remove the traces of the questions asked more than ``older_than_days`` days ago, except
    flagged ones (:func:`flag_query`) and the ``keep_last`` newest questions of each session
    (the questions asked outside any session count as one more session).
    ``older_than_days=0`` removes every trace but those. ``pacer``: how long to pause between
    batches (default: a :class:`Pacer` of :data:`~kgrag.config.DEFAULT_PRUNE_DUTY`)."""
    check_age_days(older_than_days)
    check_keep_last(keep_last)
    moment = (now or datetime.now(UTC)) - timedelta(days=older_than_days)
    before = moment.isoformat()
    kept_from = None
    if keep_last:
        rows = store.read("traces_nth_newest_sessionless", {"skip": keep_last - 1})
        # fewer questions outside a session than keep_last: every one is kept
        kept_from = str(rows[0]["created_at"]) if rows else ""
    params = {"before": before, "keep_last": keep_last}
    report = _remove(
        store,
        ("traces_select_old_sessionless", "traces_select_old_in_sessions"),
        params | {"kept_from": kept_from},
        batch,
        pacer or Pacer(),
    )
    log.info(
        "pruned the traces of %d questions asked before %s (%d nodes, %d sessions; %.1f s of "
        "work and %.1f s of pauses at duty %g)",
        report.queries,
        before,
        report.nodes,
        report.sessions,
        report.work_seconds,
        report.pause_seconds,
        report.duty,
    )
    return report.model_copy(update={"before": before})


def compact(store: GraphStore) -> None:
    """Give back the space of what a prune or an erasure removed, where the engine can: the
    embedded store rewrites its append-only log (else the log keeps every deleted trace until
    Redis rewrites it by itself, once it has doubled); Neo4j needs nothing (its store files keep
    their size and their freed records are reused; it prunes its own transaction logs). What
    this leaves, FalkorDB's list of freed ids, only a rebuild gives back: ``kgrag db compact``
    (:func:`kgrag.graph.rebuild.rebuild`), an operator step with the server stopped."""
    started = time.perf_counter()
    store.compact()
    log.info("compacted %s in %.2f s", store.uri, time.perf_counter() - started)


def forget_user(
    store: GraphStore, user: str, *, batch: int = DEFAULT_BATCH, pacer: Pacer | None = None
) -> PruneReport:
    """Remove every question asked as ``user`` with its trace and answer, and the sessions
    left empty (the user's conversation memory). Other users' questions stay, even in a session
    they shared. Paced as a prune (``pacer``, :func:`prune_traces`)."""
    check_name("user", user)
    report = _remove(store, ("traces_select_user",), {"user": user}, batch, pacer or Pacer())
    log.info(
        "erased %d questions of a user (%d nodes, %d sessions)",
        report.queries,
        report.nodes,
        report.sessions,
    )
    return report


def flag_query(
    store: GraphStore, query_id: str, *, by: str, reason: str | None = None
) -> FlagReport:
    """Flag the answer of query ``query_id`` (a reviewer doubts it, a complaint names it): its
    trace and audit are kept by every prune until :func:`unflag_query`; an erasure of its user
    still removes it. Flagging again replaces who, when and why. NotFoundError for an unknown
    query; ValueError for a reason longer than :data:`MAX_FLAG_REASON` characters or holding a
    NUL character (:class:`~kgrag.errors.InvalidTextError` for a lone surrogate)."""
    if reason is not None and len(reason) > MAX_FLAG_REASON:
        raise ValueError(
            f"a flag's reason is at most {MAX_FLAG_REASON:,} characters, not {len(reason):,}"
        )
    if reason is not None and "\x00" in reason:  # neither store can hold one
        raise ValueError("a flag's reason must not hold a NUL character")
    if reason is not None:
        check_text("flag reason", reason)
    at = datetime.now(UTC).isoformat()
    return _set_flag(store, query_id, {"flagged_at": at, "flagged_by": by, "reason": reason})


def unflag_query(store: GraphStore, query_id: str) -> FlagReport:
    """Clear the flag of query ``query_id`` (prunes remove it again once old enough)."""
    return _set_flag(store, query_id, {"flagged_at": None, "flagged_by": None, "reason": None})


def _set_flag(store: GraphStore, query_id: str, values: dict[str, str | None]) -> FlagReport:
    check_text("query id", query_id)
    rows = store.write("query_set_flag", {"id": query_id, **values})
    if not rows:
        raise NotFoundError(f"no query {query_id!r}")
    row = rows[0]
    return FlagReport(
        query_id=query_id,
        flagged=row["flagged_at"] is not None,
        flagged_at=row["flagged_at"],
        flagged_by=row["flagged_by"],
        reason=row["reason"],
    )


def _remove(
    store: GraphStore,
    selects: tuple[str, ...],
    params: dict[str, object],
    batch: int,
    pacer: Pacer,
) -> PruneReport:
    """Delete, batch by batch, the traces of the queries each statement of ``selects`` picks
    (until it picks none), then the sessions left empty; ``pacer`` pauses after each batch."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    queries = nodes = 0
    work, pause = pacer.work_seconds, pacer.pause_seconds  # a pacer may pace several

    def delete_batch(select: str) -> int:
        """Select a batch of queries and delete their traces: how many queries (0: done)."""
        nonlocal queries, nodes
        ids = [str(r["id"]) for r in store.read(select, {**params, "batch": batch})]
        if ids:
            removed = store.write("traces_delete", {"ids": ids})
            queries += len(ids)
            nodes += int(removed[0]["deleted"]) if removed else 0
        return len(ids)

    def delete_sessions() -> int:
        rows = store.write("traces_delete_empty_sessions", {"batch": batch})
        return int(rows[0]["deleted"]) if rows else 0

    for select in selects:
        while pacer.run(partial(delete_batch, select)):
            pass
    sessions = 0
    while deleted := pacer.run(delete_sessions):
        sessions += deleted
    metrics.TRACES_PRUNED.inc(nodes + sessions)
    if queries or sessions:
        compact(store)
    return PruneReport(
        queries=queries,
        nodes=nodes,
        sessions=sessions,
        duty=pacer.duty,
        work_seconds=round(pacer.work_seconds - work, 3),
        pause_seconds=round(pacer.pause_seconds - pause, 3),
    )
