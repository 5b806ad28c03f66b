"""Ingestion jobs: the embedded store has one writer, so every ingestion runs on one worker
thread, in the order the jobs were submitted. Job states live in memory (a restart forgets
them; what they stored stays in the graph). At most ``max_queued`` jobs wait at once; one more is
refused (429 with Retry-After) rather than queued without limit. A job that failed because the
store stopped answering is run again once the store is back (``retry``), at most
``max_attempts`` times in all: writes are idempotent and interrupted documents are rewritten.

When the server shuts down (:meth:`IngestJobs.interrupt`) the running job stops at its next
progress event and every job not finished is marked ``interrupted``: submitted again (to this
server once restarted), it resumes, since the documents it completed are skipped as unchanged and
the one it was writing is rewritten."""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from kgrag.auth.principal import Principal
from kgrag.errors import CancelledError, KgragError
from kgrag.ingest.pipeline import IngestReport
from kgrag.logs import log_context
from kgrag.server.errors import ApiError
from kgrag.server.models import JobView

log = logging.getLogger(__name__)

#: Runs one job: (paths, acl, who submitted it) -> report.
IngestFn = Callable[[Sequence[str], Sequence[str], Principal], IngestReport]
#: Whether a job that failed with this error should run again (may wait for the store first).
RetryFn = Callable[[KgragError], bool]

#: Seconds a client is told to wait when the queue is full.
QUEUE_FULL_RETRY_AFTER_S = 5

#: The error of a job the server's shutdown interrupted.
INTERRUPTED = (
    "the server shut down before this job finished; submit the same job again to resume it: "
    "the documents it completed are skipped as unchanged, the one it was writing is rewritten"
)
#: Job states that no longer change.
FINISHED = ("done", "failed", "interrupted")


def _now() -> str:
    return datetime.now(UTC).isoformat()


class IngestJobs:
    """A bounded queue of ingestion jobs and the single worker that runs them."""

    def __init__(
        self,
        run: IngestFn,
        keep: int = 1000,
        *,
        max_queued: int | None = None,
        retry: RetryFn | None = None,
        max_attempts: int = 3,
        failure_message: Callable[[KgragError, int], str] | None = None,
    ) -> None:
        if max_queued is not None and max_queued < 1:
            raise ValueError("max_queued must be at least 1")
        self._run = run
        self._keep = keep
        self._max_queued = max_queued
        self._retry = retry
        self._max_attempts = max(1, max_attempts)
        self._failure_message = failure_message
        self._jobs: dict[str, JobView] = {}
        self._owners: dict[str, Principal] = {}
        self._waiting = 0  # jobs queued, not yet running
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._worker = threading.Thread(target=self._loop, name="kgrag-ingest", daemon=True)
        self._worker.start()

    @property
    def waiting(self) -> int:
        with self._lock:
            return self._waiting

    def interrupt(self) -> None:
        """Shutting down: the running job stops at its next progress event
        (:meth:`check_interrupted`), the queued ones do not start; all end ``interrupted``."""
        self._stopping.set()

    def check_interrupted(self) -> None:
        """:class:`CancelledError` once :meth:`interrupt` was called (a job's progress callback)."""
        if self._stopping.is_set():
            raise CancelledError("the server is shutting down")

    def submit(self, paths: Sequence[str], acl: Sequence[str], by: Principal) -> JobView:
        """Queue a job; :class:`ApiError` 429 ``ingest_queue_full`` when ``max_queued`` wait."""
        job = JobView(
            id="job_" + uuid.uuid4().hex[:16],
            status="queued",
            paths=list(paths),
            acl=list(acl),
            created_at=_now(),
        )
        with self._lock:
            if self._max_queued is not None and self._waiting >= self._max_queued:
                raise ApiError(
                    429,
                    "ingest_queue_full",
                    f"{self._waiting} ingestion jobs already wait to run, the most this server "
                    f"queues; retry after {QUEUE_FULL_RETRY_AFTER_S} s or once GET /jobs/{{id}} "
                    "shows earlier jobs done",
                    headers={"Retry-After": str(QUEUE_FULL_RETRY_AFTER_S)},
                )
            self._jobs[job.id] = job
            self._owners[job.id] = by
            self._waiting += 1
            while len(self._jobs) > self._keep:  # forget the oldest finished jobs
                oldest = next((k for k, j in self._jobs.items() if j.status in FINISHED), None)
                if oldest is None:
                    break
                del self._jobs[oldest]
                del self._owners[oldest]
        self._queue.put(job.id)
        return job

    def get(self, job_id: str) -> JobView | None:
        with self._lock:
            return self._jobs.get(job_id)

    def owner(self, job_id: str) -> str | None:
        """The id of the principal that submitted ``job_id``."""
        with self._lock:
            found = self._owners.get(job_id)
            return found.id if found else None

    def _update(self, job_id: str, **changes: object) -> JobView:
        with self._lock:
            job = self._jobs[job_id].model_copy(update=changes)
            self._jobs[job_id] = job
            return job

    def _should_retry(self, error: KgragError, attempt: int) -> bool:
        if self._retry is None or attempt >= self._max_attempts or self._stopping.is_set():
            return False
        try:
            return self._retry(error)
        except Exception:  # the worker must survive its retry policy too
            log.exception("deciding whether to run a failed job again")
            return False

    def _loop(self) -> None:
        while True:
            job_id = self._queue.get()
            if job_id is None:
                return
            with self._lock:
                self._waiting -= 1
            if self._stopping.is_set():
                log.warning("ingest job %s interrupted before it started", job_id)
                self._update(job_id, status="interrupted", error=INTERRUPTED, finished_at=_now())
                continue
            job = self._update(job_id, status="running", started_at=_now())
            with self._lock:
                by = self._owners[job_id]
            self._attempts(job, by)

    def _attempts(self, job: JobView, by: Principal) -> None:
        """Run ``job``, again after a loss of the store as ``retry`` decides."""
        job_id = job.id
        attempt = 0
        while True:
            attempt += 1
            self._update(job_id, attempts=attempt)
            try:
                with log_context(job_id=job_id, principal=by.id):
                    report = self._run(job.paths, job.acl, by)
            except KgragError as e:
                if isinstance(e, CancelledError) and self._stopping.is_set():
                    log.warning("ingest job %s interrupted: %s", job_id, e.reason)
                    self._update(
                        job_id, status="interrupted", error=INTERRUPTED, finished_at=_now()
                    )
                    return
                if self._should_retry(e, attempt):
                    log.warning(
                        "ingest job %s: attempt %d failed (%s); running it again",
                        job_id,
                        attempt,
                        e,
                    )
                    continue
                log.warning("ingest job %s failed: %s", job_id, e)
                message = self._failure_message(e, attempt) if self._failure_message else str(e)
                self._update(job_id, status="failed", error=message, finished_at=_now())
            except Exception as e:  # the worker must survive any job
                log.exception("ingest job %s failed unexpectedly", job_id)
                self._update(
                    job_id,
                    status="failed",
                    error=f"{type(e).__name__}: {e}",
                    finished_at=_now(),
                )
            else:
                self._update(job_id, status="done", report=report, finished_at=_now())
            return

    def close(self, timeout: float = 30.0) -> None:
        """Stop after the jobs already queued."""
        self._queue.put(None)
        self._worker.join(timeout)
