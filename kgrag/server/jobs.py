"""Ingestion jobs: the embedded store has one writer, so every ingestion runs on one worker
thread, in the order the jobs were submitted. Job states live in memory (a restart forgets
them; what they stored stays in the graph)."""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from kgrag.errors import KgragError
from kgrag.ingest.pipeline import IngestReport
from kgrag.server.models import JobView

log = logging.getLogger(__name__)

#: Runs one job: (paths, acl) -> report.
IngestFn = Callable[[Sequence[str], Sequence[str]], IngestReport]


def _now() -> str:
    return datetime.now(UTC).isoformat()


class IngestJobs:
    """A queue of ingestion jobs and the single worker that runs them."""

    def __init__(self, run: IngestFn, keep: int = 1000) -> None:
        self._run = run
        self._keep = keep
        self._jobs: dict[str, JobView] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._worker = threading.Thread(target=self._loop, name="kgrag-ingest", daemon=True)
        self._worker.start()

    def submit(self, paths: Sequence[str], acl: Sequence[str]) -> JobView:
        job = JobView(
            id="job_" + uuid.uuid4().hex[:16],
            status="queued",
            paths=list(paths),
            acl=list(acl),
            created_at=_now(),
        )
        with self._lock:
            self._jobs[job.id] = job
            while len(self._jobs) > self._keep:  # forget the oldest finished jobs
                oldest = next(
                    (k for k, j in self._jobs.items() if j.status in ("done", "failed")), None
                )
                if oldest is None:
                    break
                del self._jobs[oldest]
        self._queue.put(job.id)
        return job

    def get(self, job_id: str) -> JobView | None:
        with self._lock:
            return self._jobs.get(job_id)

    def _update(self, job_id: str, **changes: object) -> JobView:
        with self._lock:
            job = self._jobs[job_id].model_copy(update=changes)
            self._jobs[job_id] = job
            return job

    def _loop(self) -> None:
        while True:
            job_id = self._queue.get()
            if job_id is None:
                return
            job = self._update(job_id, status="running", started_at=_now())
            try:
                report = self._run(job.paths, job.acl)
            except KgragError as e:
                log.warning("ingest job %s failed: %s", job_id, e)
                self._update(job_id, status="failed", error=str(e), finished_at=_now())
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

    def close(self, timeout: float = 30.0) -> None:
        """Stop after the jobs already queued."""
        self._queue.put(None)
        self._worker.join(timeout)
