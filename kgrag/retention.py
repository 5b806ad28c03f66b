"""Trace retention and erasure: removing the traces of questions from the graph.

Every answer leaves a trace (``Query``, ``Plan``, ``Step``, ``Answer`` and the ``Session`` it was
asked in, with their relationships), about 28 KB of store a question. :func:`prune_traces` removes
those of questions asked before a time, except the flagged ones (:func:`flag_query`: their audit
is kept) and, if asked, the newest ones of each session; :func:`forget_user` removes every
question one user asked (an erasure request), flagged or not. Both delete in batches of queries
(each batch one atomic statement), so a large prune never holds one huge transaction, and both
leave the evidence alone: documents, chunks, segments, images, tables and entities are never
touched. When they removed anything, the store is compacted afterwards (:func:`compact`).
A session is removed once it has no question left.
"""

from __future__ import annotations

import logging
import math
import time
from datetime import UTC, datetime, timedelta

from kgrag import metrics
from kgrag.auth.principal import check_name
from kgrag.config import MAX_AGE_DAYS, MAX_KEEP_LAST
from kgrag.core import Frozen, check_text
from kgrag.errors import NotFoundError
from kgrag.graph.store import GraphStore

log = logging.getLogger(__name__)

#: Queries whose traces one statement removes (a question has about ten trace nodes and fifty
#: relationships): a statement holds the store's write lock for tens of milliseconds, not
#: hundreds, so the questions asked meanwhile wait little (bench/trace_retention.py).
DEFAULT_BATCH = 50
#: After each delete statement a prune waits this many times as long as the statement took, so
#: that it holds the store at most half the time while questions are asked.
PAUSE_FACTOR = 1.0
#: The longest reason a flag records, in characters.
MAX_FLAG_REASON = 2000


def check_age_days(days: float) -> float:
    """``days`` if it is a prune's age (0 to :data:`MAX_AGE_DAYS`), else ValueError saying why."""
    if not math.isfinite(days) or not 0 <= days <= MAX_AGE_DAYS:
        raise ValueError(f"the age must be 0 to {MAX_AGE_DAYS:,} days (100 years), not {days}")
    return days


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
) -> PruneReport:
    """Remove the traces of the questions asked more than ``older_than_days`` days ago, except
    flagged ones (:func:`flag_query`) and the ``keep_last`` newest questions of each session
    (the questions asked outside any session count as one more session).
    ``older_than_days=0`` removes every trace but those."""
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
    )
    log.info(
        "pruned the traces of %d questions asked before %s (%d nodes, %d sessions)",
        report.queries,
        before,
        report.nodes,
        report.sessions,
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


def forget_user(store: GraphStore, user: str, *, batch: int = DEFAULT_BATCH) -> PruneReport:
    """Remove every question asked as ``user`` with its trace and answer, and the sessions
    left empty (the user's conversation memory). Other users' questions stay, even in a session
    they shared."""
    check_name("user", user)
    report = _remove(store, ("traces_select_user",), {"user": user}, batch)
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
) -> PruneReport:
    """Delete, batch by batch, the traces of the queries each statement of ``selects`` picks
    (until it picks none), then the sessions left empty."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    queries = nodes = 0
    for select in selects:
        while True:
            ids = [str(r["id"]) for r in store.read(select, {**params, "batch": batch})]
            if not ids:
                break
            started = time.perf_counter()
            removed = store.write("traces_delete", {"ids": ids})
            queries += len(ids)
            nodes += int(removed[0]["deleted"]) if removed else 0
            time.sleep((time.perf_counter() - started) * PAUSE_FACTOR)
    sessions = 0
    while True:
        rows = store.write("traces_delete_empty_sessions", {"batch": batch})
        deleted = int(rows[0]["deleted"]) if rows else 0
        if not deleted:
            break
        sessions += deleted
    metrics.TRACES_PRUNED.inc(nodes + sessions)
    if queries or sessions:
        compact(store)
    return PruneReport(queries=queries, nodes=nodes, sessions=sessions)
