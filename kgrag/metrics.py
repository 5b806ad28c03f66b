"""Prometheus metrics of this process (``prometheus-client``), in one registry of kgrag's own.

The HTTP server exposes them at ``GET /metrics``; a CLI batch job writes them to a file in the
node-exporter textfile format (``--metrics-file``, :func:`write_textfile`). The library calls
the ``observe_*`` functions where the work happens (an answer, a step, an ingestion job, a model
load, a store error), so the CLI and the server count the same things. Labels hold only small
closed sets (planner, exit reason, step type, route template, status): never a question, a user,
a path or an id.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Protocol

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    write_to_textfile,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "REGISTRY", "exposition", "write_textfile"]

#: kgrag's registry (not the library's global one: tests and embedders get only kgrag's series).
REGISTRY = CollectorRegistry(auto_describe=True)

#: Seconds: from a fast cached answer to a slow LLM run.
_ASK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
_STEP_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0)

ASK_SECONDS = Histogram(
    "kgrag_ask_seconds",
    "Time to answer a question, by planner and exit reason.",
    ["planner", "exit_reason"],
    buckets=_ASK_BUCKETS,
    registry=REGISTRY,
)
ASK_FAILURES = Counter(
    "kgrag_ask_failures",
    "Questions that ended in an error instead of an answer, by error type.",
    ["error"],
    registry=REGISTRY,
)
ABSTENTIONS = Counter(
    "kgrag_answers_abstained",
    "Answers in which the agent abstained (found nothing that answers the question).",
    registry=REGISTRY,
)
STEP_SECONDS = Histogram(
    "kgrag_step_seconds",
    "Time of one plan step, by step type and status.",
    ["type", "status"],
    buckets=_STEP_BUCKETS,
    registry=REGISTRY,
)
INGEST_FILES = Counter(
    "kgrag_ingest_files",
    "Files handled by ingestion jobs, by outcome (ingested, skipped, failed).",
    ["outcome"],
    registry=REGISTRY,
)
INGEST_PASSAGES = Counter(
    "kgrag_ingest_passages",
    "Passages (chunks and segments) written by ingestion jobs.",
    registry=REGISTRY,
)
INGEST_JOBS = Counter(
    "kgrag_ingest_jobs",
    "Ingestion jobs that ran to the end (each may have failed files).",
    registry=REGISTRY,
)
INGEST_STAGE_SECONDS = Counter(
    "kgrag_ingest_stage_seconds",
    "Seconds spent per ingestion stage (parse, chunk, embed_text, write, ...).",
    ["stage"],
    registry=REGISTRY,
)
MODEL_LOAD_SECONDS = Gauge(
    "kgrag_model_load_seconds",
    "Seconds the last load of a model took, by kind (text, image, audio).",
    ["kind"],
    registry=REGISTRY,
)
STORE_ERRORS = Counter(
    "kgrag_store_errors",
    "Statements the graph store failed, by error type.",
    ["error"],
    registry=REGISTRY,
)
STORE_REOPENS = Counter(
    "kgrag_store_reopens",
    "Times the server reopened (or saw again) a graph store that had stopped answering.",
    registry=REGISTRY,
)
JOB_QUEUE_DEPTH = Gauge(
    "kgrag_ingest_jobs_queued",
    "Ingestion jobs waiting or running in the server's queue.",
    registry=REGISTRY,
)
HTTP_REQUESTS = Counter(
    "kgrag_http_requests",
    "HTTP requests handled, by method, route template and status code.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_SECONDS = Histogram(
    "kgrag_http_request_seconds",
    "Time to the end of an HTTP response, by route template.",
    ["route"],
    buckets=_ASK_BUCKETS,
    registry=REGISTRY,
)
TRACES_PRUNED = Counter(
    "kgrag_traces_pruned_nodes",
    "Trace nodes (Query, Plan, Step, Answer, Session) removed by retention or erasure.",
    registry=REGISTRY,
)


class _Answered(Protocol):
    """What is counted of an answer (``kgrag.Answer``)."""

    @property
    def planner(self) -> str: ...
    @property
    def exit_reason(self) -> str: ...


class _Ingested(Protocol):
    """What is counted of a finished ingestion job (``kgrag.IngestReport``)."""

    @property
    def ingested(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def stage_seconds(self) -> Mapping[str, float]: ...


def observe_answer(answer: _Answered, seconds: float) -> None:
    """Count one answered question (and its abstention)."""
    ASK_SECONDS.labels(planner=answer.planner, exit_reason=answer.exit_reason).observe(seconds)
    if answer.exit_reason == "not_found":
        ABSTENTIONS.inc()


def observe_ask_failure(error: BaseException) -> None:
    ASK_FAILURES.labels(error=type(error).__name__).inc()


def observe_step(step_type: str, status: str, duration_ms: float) -> None:
    STEP_SECONDS.labels(type=step_type, status=status).observe(max(duration_ms, 0.0) / 1000.0)


def observe_ingest(report: _Ingested) -> None:
    """Count one finished ingestion job (its passages are counted as they are written)."""
    INGEST_JOBS.inc()
    INGEST_FILES.labels(outcome="ingested").inc(report.ingested)
    INGEST_FILES.labels(outcome="skipped").inc(report.skipped)
    INGEST_FILES.labels(outcome="failed").inc(report.failed)
    for stage, seconds in report.stage_seconds.items():
        INGEST_STAGE_SECONDS.labels(stage=stage).inc(max(seconds, 0.0))


def observe_store_error(error: BaseException) -> None:
    STORE_ERRORS.labels(error=type(error).__name__).inc()


@contextlib.contextmanager
def model_load(kind: str) -> Iterator[None]:
    """Time a model load of ``kind`` (text, image, audio) into ``kgrag_model_load_seconds``."""
    start = time.perf_counter()
    yield
    MODEL_LOAD_SECONDS.labels(kind=kind).set(time.perf_counter() - start)


def exposition() -> bytes:
    """The registry in the Prometheus text format (what ``GET /metrics`` returns)."""
    return generate_latest(REGISTRY)


def check_textfile(path: Path) -> Path:
    """``path`` if :func:`write_textfile` can write it, else ValueError saying why: a folder, a
    path below a file, or a folder this process may not write in. Checked before a command runs
    (its metrics are written when it ends); nothing is left behind."""
    path = path.expanduser()
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file in it, such as {path / 'kgrag.prom'}")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # write_textfile makes the folders
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder, so {path} cannot be written")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise ValueError(f"{path} cannot be written: {e.strerror or e} in {folder}") from None
    return path


def write_textfile(path: Path) -> None:
    """Write the registry to ``path`` for node-exporter's textfile collector (written beside it
    and renamed by ``prometheus_client``, so the collector never reads half a file)."""
    path = path.expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_to_textfile(str(path), REGISTRY)
