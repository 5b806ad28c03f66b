"""Concurrency on one store, on each engine (the embedded FalkorDB, Neo4j): questions while a job
ingests, two ingestion jobs over overlapping files (one after the other, and at the same time
from two threads). No duplicates (one Document per content hash), nothing unfinished, no deadlock
(every thread joins within a bound), memory bounded; the graph equals the clean run's on the same
engine, and the clean runs of the two engines are equal."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.ingest.pipeline import IngestOptions, IngestReport
from kgrag.modalities.base import TextEmbedder
from tests.reliability.conftest import BATCH_CHUNKS, ingest
from tests.reliability.support import GraphSnapshot, snapshot
from tests.support.engines import Engine

pytestmark = pytest.mark.reliability
log = logging.getLogger(__name__)

JOIN_TIMEOUT_S = 240.0
#: Resident memory a test may add to the test process (models are loaded before it starts).
MEMORY_BOUND_BYTES = 400 * 1024 * 1024


#: The clean run's graph per Neo4j engine (the embedded one is conftest's ``clean_run``).
_CLEAN: dict[str, GraphSnapshot] = {}


def _open_text_store(engine: Engine, embedder: TextEmbedder) -> GraphStore:
    store = engine.open()
    ensure_space(
        store,
        EmbeddingSpace(name="text", model=embedder.model_name, dimensions=embedder.dimensions),
    )
    return store


@pytest.fixture
def clean(
    engine: Engine, minilm: TextEmbedder, corpus: Path, clean_run: GraphSnapshot
) -> GraphSnapshot:
    """The graph of one uninterrupted ingestion of the corpus on this test's engine. Neo4j has
    one database: its clean run is kept as data (once per session) and the database emptied
    before the test's own store opens."""
    if not engine.is_neo4j:
        return clean_run
    if engine.name not in _CLEAN:
        store = _open_text_store(engine, minilm)
        try:
            report = ingest(store, minilm, [str(corpus)])
            assert report.failed == 0 and report.ingested == 8, report
            _CLEAN[engine.name] = snapshot(store)
        finally:
            store.close()
            engine.reset()
        # the same corpus gives the same graph on both engines
        assert _CLEAN[engine.name] == clean_run
    return _CLEAN[engine.name]


@pytest.fixture
def fresh_store(engine: Engine, minilm: TextEmbedder, clean: GraphSnapshot) -> Iterator[GraphStore]:
    """An empty store of the test's engine with the text embedding space (after ``clean``)."""
    store = _open_text_store(engine, minilm)
    yield store
    store.close()


def _files(corpus: Path) -> list[str]:
    return sorted(str(p) for p in corpus.glob("*.txt"))


def _assert_equal_to_clean(after: GraphSnapshot, clean: GraphSnapshot) -> None:
    assert after.unfinished() == []
    assert set(after.hashes.values()) == {1}, "two Documents share a content hash"
    assert sorted(after.documents) == sorted(clean.documents)
    assert after.labels == clean.labels
    assert after.relationships == clean.relationships


def _run_threads(targets: list[Any]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guard(fn: Any) -> Any:
        def run() -> None:
            try:
                fn()
            except BaseException as e:
                errors.append(e)

        return run

    threads = [threading.Thread(target=guard(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"threads still running after {JOIN_TIMEOUT_S} s (deadlock?): {stuck}"
    return errors


def test_questions_while_ingesting_through_one_agent(
    fresh_store: GraphStore, minilm: TextEmbedder, corpus: Path, clean: GraphSnapshot
) -> None:
    files = _files(corpus)
    agent = KnowledgeAgent(
        fresh_store, minilm, ingest_options=IngestOptions(batch_chunks=BATCH_CHUNKS)
    )
    assert agent.ingest(files[:3]).ingested == 3
    rss0 = psutil.Process().memory_info().rss
    done = threading.Event()
    answers: list[int] = []
    reports: list[IngestReport] = []
    questions = [
        "Who inspected the Feed Pump FP-2?",
        "What happened to the Valve V-7 in Cambridge?",
        "Which parts did Grace Hopper agree to replace?",
    ]

    def ingest_rest() -> None:
        try:
            reports.append(agent.ingest(files[3:]))
        finally:
            done.set()

    def ask(n: int) -> None:
        for i in range(40):  # bounded, and stops soon after the ingestion does
            answer = agent.ask(questions[(n + i) % len(questions)], user=f"reader{n}")
            assert answer.query_id
            answers.append(len(answer.citations))
            if done.is_set() and i >= 2:
                return

    errors = _run_threads([ingest_rest, lambda: ask(0), lambda: ask(1)])
    assert errors == [], errors
    assert reports and reports[0].failed == 0 and reports[0].ingested == len(files) - 3
    assert len(answers) >= 6 and all(n > 0 for n in answers)
    grown = psutil.Process().memory_info().rss - rss0
    log.info(
        "questions during ingestion: %d answers, RSS grew %.1f MiB", len(answers), grown / 2**20
    )
    assert grown < MEMORY_BOUND_BYTES, f"RSS grew by {grown / 2**20:.0f} MiB"
    _assert_equal_to_clean(snapshot(fresh_store), clean)


def test_overlapping_jobs_one_after_the_other(
    fresh_store: GraphStore, minilm: TextEmbedder, corpus: Path, clean: GraphSnapshot
) -> None:
    files = _files(corpus)
    first = ingest(fresh_store, minilm, files[:5])
    second = ingest(fresh_store, minilm, files[3:])
    assert first.ingested == 5 and second.ingested == len(files) - 5 and second.skipped == 2
    _assert_equal_to_clean(snapshot(fresh_store), clean)


def test_overlapping_jobs_at_the_same_time_from_two_threads(
    fresh_store: GraphStore, minilm: TextEmbedder, corpus: Path, clean: GraphSnapshot
) -> None:
    files = _files(corpus)
    reports: list[IngestReport] = []
    rss0 = psutil.Process().memory_info().rss

    def job(paths: list[str]) -> None:
        reports.append(ingest(fresh_store, minilm, paths))

    errors = _run_threads([lambda: job(files[:6]), lambda: job(files[2:])])
    assert errors == [], errors
    assert all(r.failed == 0 for r in reports), [r.failures for r in reports]
    grown = psutil.Process().memory_info().rss - rss0
    assert grown < MEMORY_BOUND_BYTES, f"RSS grew by {grown / 2**20:.0f} MiB"
    _assert_equal_to_clean(snapshot(fresh_store), clean)


class _PausingStore:
    """Pauses the first write of document ``doc_id``'s chunks until ``resume`` is set, so a
    second job can start while that document is half written."""


def test_a_job_starting_while_another_writes_does_not_remove_its_documents(
    fresh_store: GraphStore, minilm: TextEmbedder, corpus: Path
) -> None:
    files = _files(corpus)
    paused = threading.Event()
    resume = threading.Event()
    original = fresh_store._execute
    state = {"paused": False}

    def execute(
        text: str, params: dict[str, Any], *, read_only: bool, idempotent: bool = False
    ) -> Any:
        result = original(text, params, read_only=read_only, idempotent=idempotent)
        # after the first documents_begin of job A: that document is now 'ingesting'
        writer = threading.current_thread().name.startswith("kgrag-writer")
        if writer and not read_only and not state["paused"] and "'ingesting'" in text:
            state["paused"] = True
            paused.set()
            resume.wait(timeout=120)
        return result

    original_transaction = fresh_store._execute_transaction

    def execute_transaction(
        statements: Sequence[tuple[str, dict[str, Any]]], *, idempotent: bool
    ) -> None:
        # Neo4j runs a batch's writes as one transaction: pause once the one that began the
        # document has committed (FalkorDB's runs statement by statement, through execute)
        original_transaction(statements, idempotent=idempotent)
        writer = threading.current_thread().name.startswith("kgrag-writer")
        began = any("'ingesting'" in text for text, _ in statements)
        if writer and began and not state["paused"]:
            state["paused"] = True
            paused.set()
            resume.wait(timeout=120)

    fresh_store._execute = execute  # type: ignore[method-assign]
    fresh_store._execute_transaction = execute_transaction  # type: ignore[method-assign]
    reports: list[IngestReport] = []

    def job_a() -> None:
        reports.append(ingest(fresh_store, minilm, files[:1]))

    thread = threading.Thread(target=job_a, daemon=True)
    thread.start()
    assert paused.wait(timeout=120), "job A never began writing"
    try:
        ingest(fresh_store, minilm, files[5:6])  # job B, other files, starts now
    finally:
        resume.set()
    thread.join(timeout=JOIN_TIMEOUT_S)
    assert not thread.is_alive()
    assert reports and reports[0].ingested == 1
    snap = snapshot(fresh_store)
    assert len(snap.documents) == 2 and snap.unfinished() == [], snap.documents
