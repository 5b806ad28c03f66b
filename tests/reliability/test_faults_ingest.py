"""Faults during ingestion and questions, each followed by the recovery a user would run; the
graph afterwards must equal the graph of a clean run: the same document ids, the same number of
nodes per label and relationships per type, and no Document left unfinished."""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.errors import KgragError, ModelError, StoreError, StoreUnavailableError
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.store import GraphStore
from kgrag.modalities.base import TextEmbedder
from tests.reliability.conftest import ingest, open_text_store
from tests.reliability.support import (
    GraphSnapshot,
    finish,
    read_event,
    server_gone,
    snapshot,
    worker,
)

pytestmark = pytest.mark.reliability


def _kill_server_at(
    store: GraphStore, *, write: int = 0, read: int = 0, writing: str = ""
) -> dict[str, int]:
    """SIGKILL the store's real server just before its ``write``-th write (or ``read``-th read)
    query reaches it; with ``writing``, only writes whose text holds it are counted. Returns
    counters the test can inspect."""
    assert isinstance(store, FalkorDBStore)
    pid = store.server_pid()
    assert pid
    original = store._execute
    seen = {"writes": 0, "reads": 0, "pid": pid, "killed": 0}

    def execute(text: str, params: dict[str, Any], *, read_only: bool, **kw: Any) -> Any:
        key = "reads" if read_only else "writes"
        if read_only or writing in text:
            seen[key] += 1
        if not seen["killed"] and seen[key] == (read if read_only else write):
            os.kill(pid, signal.SIGKILL)
            seen["killed"] = 1
        return original(text, params, read_only=read_only, **kw)

    store._execute = execute  # type: ignore[method-assign]
    return seen


def _assert_equal_to_clean(after: GraphSnapshot, clean: GraphSnapshot) -> None:
    assert after.unfinished() == []
    assert sorted(after.documents) == sorted(clean.documents)
    assert after.hashes == clean.hashes and set(after.hashes.values()) == {1}
    assert after.labels == clean.labels
    assert after.relationships == clean.relationships


def test_server_killed_during_ingestion_then_rerun_equals_clean_run(
    tmp_path: Path, minilm: TextEmbedder, corpus: Path, clean_run: GraphSnapshot
) -> None:
    db = tmp_path / "kg.db"
    store = open_text_store(db, minilm)
    # The second document's chunks: its Document node is written, its status not yet complete
    # (a fixed count of writes depends on how the job batches them; CI once landed between two
    # documents).
    seen = _kill_server_at(store, write=2, writing="MERGE (c:Chunk")
    with pytest.raises(StoreError) as e:
        ingest(store, minilm, [str(corpus)])
    assert isinstance(e.value, StoreUnavailableError)
    assert "Reopen the store" in str(e.value) and "run the job again" in str(e.value)
    assert seen["killed"] and server_gone(seen["pid"])
    store.close()

    store = open_text_store(db, minilm)  # a new server replays the append-only file
    try:
        crashed = snapshot(store)
        assert crashed.unfinished(), "the kill did not land inside a document"
        assert len(crashed.documents) < len(clean_run.documents)
        report = ingest(store, minilm, [str(corpus)])
        assert report.failed == 0, report.failures
        assert set(report.recovered) == set(crashed.unfinished())
        _assert_equal_to_clean(snapshot(store), clean_run)
    finally:
        store.close()


def test_server_killed_during_a_question_then_reopen_answers(
    tmp_path: Path, minilm: TextEmbedder, corpus: Path, clean_run: GraphSnapshot
) -> None:
    db = tmp_path / "kg.db"
    store = open_text_store(db, minilm)
    assert ingest(store, minilm, [str(corpus)]).ingested == len(clean_run.documents)
    agent = KnowledgeAgent(store, minilm)
    question = "Who inspected the Feed Pump FP-2 in London?"
    before = agent.ask(question)
    assert before.citations
    _kill_server_at(store, read=3)
    with pytest.raises(KgragError) as e:
        agent.ask(question)
    message = str(e.value)
    assert "FalkorDB" in message and "Reopen the store" in message, message
    store.close()

    store = open_text_store(db, minilm)
    try:
        again = KnowledgeAgent(store, minilm).ask(question)
        assert [c.node_id for c in again.citations] == [c.node_id for c in before.citations]
        _assert_equal_to_clean(snapshot(store), clean_run)
    finally:
        store.close()


class FailingEmbedder:
    """The real MiniLM, raising a ModelError on its ``fail_on``-th ``embed`` call (1-based)."""

    def __init__(self, inner: TextEmbedder, fail_on: int) -> None:
        self.inner = inner
        self.fail_on = fail_on
        self.calls = 0
        self.batches: list[int] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        self.batches.append(len(texts))
        if self.calls == self.fail_on:
            raise ModelError(f"injected failure of the text model on call {self.calls}")
        return self.inner.embed(texts)


def test_model_failing_mid_job_fails_only_its_batch_and_a_rerun_completes(
    fresh_store: GraphStore, minilm: TextEmbedder, corpus: Path, clean_run: GraphSnapshot
) -> None:
    flaky = FailingEmbedder(minilm, fail_on=2)
    report = ingest(fresh_store, flaky, [str(corpus)])  # type: ignore[arg-type]
    assert flaky.calls > 2, "the job stopped at the failing batch"
    assert 0 < report.failed < len(clean_run.documents)
    assert all("injected failure" in f.reason for f in report.failures), report.failures
    assert report.ingested + report.failed == len(clean_run.documents)
    partial = snapshot(fresh_store)
    assert partial.unfinished() == []  # nothing half-written
    assert len(partial.documents) == report.ingested

    again = ingest(fresh_store, minilm, [str(corpus)])
    assert again.failed == 0 and again.ingested == report.failed
    _assert_equal_to_clean(snapshot(fresh_store), clean_run)


def _limit_file_size(limit: int) -> Any:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_disk_full_during_ingestion_then_rerun_equals_clean_run(
    tmp_path: Path, minilm: TextEmbedder, corpus: Path, clean_run: GraphSnapshot
) -> None:
    """RLIMIT_FSIZE on the ingestion process and so on the server it starts: writing past the
    limit fails (EFBIG, SIGXFSZ) as on a full disk."""
    db = tmp_path / "kg.db"
    job = worker("ingest", str(db), str(corpus), preexec_fn=_limit_file_size(48 * 1024))
    started = read_event(job)
    events = [started]
    while events[-1]["event"] not in {"report", "error"}:
        events.append(read_event(job))
    code, err = finish(job)
    outcome = events[-1]
    assert outcome["event"] == "error", outcome
    # Redis, unlike Python, does not ignore SIGXFSZ: the server dies at the limit, and the store
    # tells why from the size of its files.
    assert outcome["error"] == "StoreError", outcome
    assert "cannot write to disk" in outcome["message"], outcome
    assert "file size limit" in outcome["message"], outcome
    assert code == StoreError.exit_code, err[-2000:]

    store = open_text_store(db, minilm)  # no limit in this process
    try:
        report = ingest(store, minilm, [str(corpus)])
        assert report.failed == 0, report.failures
        _assert_equal_to_clean(snapshot(store), clean_run)
    finally:
        store.close()


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    """A 64 KiB tmpfs (a real full disk: ENOSPC); skips where mounting is not permitted."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {made.stderr.strip()}")

    def grow() -> None:
        subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)

    yield mount, grow
    if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_full_disk_refuses_writes_clearly_and_recovers_once_space_is_freed(
    small_disk: Any, minilm: TextEmbedder, corpus: Path, clean_run: GraphSnapshot
) -> None:
    folder, grow = small_disk
    store = open_text_store(folder / "kg.db", minilm)
    try:
        with pytest.raises(StoreError) as e:
            ingest(store, minilm, [str(corpus)])
        message = str(e.value)
        assert "cannot write to disk" in message and "Free disk space" in message, message
        grow()  # space is freed; Redis retries its append-only file by itself
        report = ingest(store, minilm, [str(corpus)])  # the same store, no reopen
        assert report.failed == 0, report.failures
        _assert_equal_to_clean(snapshot(store), clean_run)
    finally:
        store.close()
    store = open_text_store(folder / "kg.db", minilm)  # and it all survives a restart
    try:
        _assert_equal_to_clean(snapshot(store), clean_run)
    finally:
        store.close()
