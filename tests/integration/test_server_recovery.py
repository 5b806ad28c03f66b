"""A real ``kgrag serve`` on 127.0.0.1 whose embedded FalkorDB server is killed (SIGKILL of the
child redis-server, as tests/reliability/test_faults_ingest.py does in process): the API answers
503 with Retry-After meanwhile, never 500, ``/healthz`` says so, the server reopens the store by
itself (a new redis-server replays the append-only file) and answers again without a restart;
an ingestion job the kill interrupted runs again, and the graph ends with every document once
and complete.

The same on Neo4j (the tests named ``test_neo4j_*``): the suite's Neo4j server process is
SIGKILLed under ``kgrag serve`` and started again with scripts/neo4j.sh; the API answers 503 with
Retry-After while it is down and answers again once it is back, its Bolt driver having
reconnected (nothing is reopened), and an interrupted job ends with every document once. The
fault differs per engine (a child process of kgrag's, a server of its own), so the two halves are
separate tests rather than one parametrized over ``engine``."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.graph import open_store
from kgrag.graph.embedded_lease import running_server_pid
from kgrag.graph.store import GraphStore
from kgrag.server.launch import Served, ServerStartError, free_port, wait_healthy
from tests.integration.test_server import _wait_job
from tests.reliability.support import kill_and_wait, snapshot, write_corpus
from tests.support.engines import NEO4J, Engine, engine_for
from tests.support.neo4j_control import LocalNeo4j, local_neo4j

pytestmark = pytest.mark.reliability

QUESTION = "Who inspected the Feed Pump FP-2?"
#: What the server logs when a failure starts a recovery of the store (kgrag.server.recovery).
_RECOVERING = "recovering it"


@dataclass
class Serve:
    proc: subprocess.Popen[bytes]
    base: str
    db: Path
    root: Path
    log: Path
    ingested: list[str] = field(default_factory=list)  # files ingested so far

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=120)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def start_serve(
    tmp: Path, root: Path, env: dict[str, str] | None = None, store: str | None = None
) -> Serve:
    """``kgrag serve`` on a free port of 127.0.0.1 over ``store`` (default: the embedded
    ``tmp/kg.db``); waits for /healthz."""
    port = free_port()
    log = tmp / "serve.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kgrag.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--store",
            store or f"falkordb-lite:///{tmp}/kg.db",
            "--ingest-root",
            str(root),
        ],
        env={
            **os.environ,
            "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1",
            "KGRAG_DATA_DIR": str(tmp / "data"),
            **(env or {}),
        },
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    srv = Serve(proc, f"http://127.0.0.1:{port}", tmp / "kg.db", root, log)
    try:
        wait_healthy(Served(proc, srv.base, log), 180)
    except ServerStartError:
        stop_serve(srv)
        raise
    return srv


def _until(condition: Callable[[], bool], what: str, bound_s: float = 120) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``bound_s`` seconds."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, f"not seen within {bound_s} s: {what}"
        time.sleep(0.05)


def _passages_written(c: httpx.Client) -> float:
    """The server's ``kgrag_ingest_passages_total``: passages its ingestion jobs wrote so far
    (counted after each written batch)."""
    page = c.get("/metrics")
    assert page.status_code == 200, page.text
    for line in page.text.splitlines():
        if line.startswith("kgrag_ingest_passages_total "):
            return float(line.split()[1])
    return 0.0


def _answered(statuses: Counter[int], lock: threading.Lock) -> int:
    with lock:
        return statuses[200]


def _refused(statuses: Counter[int], lock: threading.Lock) -> int:
    with lock:
        return statuses[503]


def stop_serve(srv: Serve) -> None:
    srv.proc.terminate()
    try:
        srv.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        srv.proc.kill()
        srv.proc.wait()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Embedded only: these tests kill the redis-server kgrag itself started for the store and
    expect the server to reopen it (a new redis-server); Neo4j's counterpart is below."""
    root = tmp_path / "docs"
    write_corpus(root / "first", n=2, paragraphs=2)
    # many small embedding batches: the job writes documents one after the other for seconds
    srv = start_serve(tmp_path, root, env={"KGRAG_BATCH_SIZE": "4"})
    try:
        yield srv
    finally:
        stop_serve(srv)


def _kill_store_server(srv: Serve) -> int:
    pid = running_server_pid(srv.db)
    assert pid, "no embedded redis-server runs for the store"
    kill_and_wait(pid)
    return pid


def _assert_retry_later(r: httpx.Response) -> None:
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["error"] == "store_unavailable", body
    assert "Reopen the store" not in body["detail"], body  # nothing an HTTP client can do
    assert "reconnecting" in body["detail"], body
    assert int(r.headers["retry-after"]) >= 1


def _graph_check(db: Path | GraphStore, expected_files: int) -> None:
    """Every document once (by content hash) and complete; no chunk id twice. Given a path, the
    test process attaches to the server's embedded redis-server and leaves it running."""
    store = open_store(f"falkordb-lite:///{db}") if isinstance(db, Path) else db
    try:
        snap = snapshot(store)
        dup_chunks = store.read_freeform(
            "MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN id, n"
        )
    finally:
        store.close()
    assert snap.unfinished() == [], snap.documents
    assert len(snap.documents) == expected_files, snap.documents
    assert set(snap.hashes.values()) == {1}, snap.hashes
    assert dup_chunks == []


def test_killed_store_server_is_reopened_and_requests_succeed_again(serve: Serve) -> None:
    with serve.client() as c:
        job = _wait_job(c, c.post("/ingest", json={"paths": ["first"]}).json()["id"])
        assert job["status"] == "done" and job["report"]["ingested"] == 2, job
        before = c.post("/ask", json={"question": QUESTION})
        assert before.status_code == 200, before.text
        assert c.get("/healthz").json()["store_reopens"] == 0

        old_pid = _kill_store_server(serve)
        # the first touch of the dead store fails and starts the recovery: a clear 503
        _assert_retry_later(c.get("/healthz"))

        # questions in flight meanwhile get 503 with Retry-After (never a 500), then answers
        statuses: Counter[int] = Counter()
        deadline = time.monotonic() + 120
        answered: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            r = c.post("/ask", json={"question": QUESTION})
            statuses[r.status_code] += 1
            if r.status_code == 200:
                answered = r.json()
                break
            _assert_retry_later(r)
            time.sleep(min(float(r.headers["retry-after"]), 2.0))
        assert answered is not None, f"no answer after the kill: {statuses}\n{serve.log_tail()}"
        assert {x["document_id"] for x in answered["citations"]} == {
            x["document_id"] for x in before.json()["citations"]
        }
        health = c.get("/healthz")
        assert health.status_code == 200 and health.json()["store_reopens"] == 1, health.text
        new_pid = running_server_pid(serve.db)
        assert new_pid and new_pid != old_pid
        # a trace written before the kill is still there (the append-only file was replayed)
        trace = c.get(f"/queries/{before.json()['query_id']}/trace")
        assert trace.status_code == 200, trace.text
    assert serve.proc.poll() is None, "kgrag serve was restarted or died"
    _graph_check(serve.db, expected_files=2)


def test_concurrent_requests_during_the_kill_get_503_or_200_never_500(serve: Serve) -> None:
    statuses: Counter[int] = Counter()
    bad: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def asker() -> None:
        with serve.client() as c:
            while not stop.is_set():
                r = c.post("/ask", json={"question": QUESTION})
                with lock:
                    statuses[r.status_code] += 1
                    if r.status_code == 503:
                        try:
                            _assert_retry_later(r)
                        except AssertionError as e:
                            bad.append(str(e))
                    elif r.status_code != 200:
                        bad.append(r.text)
                time.sleep(0.05)

    threads = [threading.Thread(target=asker) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        _until(lambda: _answered(statuses, lock) >= 3, "three answers before the kill")
        _kill_store_server(serve)
        with serve.client() as c:  # until the store answers again
            _until(lambda: c.get("/healthz").status_code == 200, "the store answering again")
        recovered = _answered(statuses, lock)
        _until(lambda: _answered(statuses, lock) >= recovered + 3, "answers after the recovery")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=150)
    assert not bad, bad[:3]
    assert statuses[200] > 0 and set(statuses) <= {200, 503}, statuses
    with serve.client() as c:
        assert c.get("/healthz").json()["store_reopens"] == 1


def test_ingestion_job_interrupted_by_the_kill_runs_again_without_duplicates(
    serve: Serve,
) -> None:
    files = 48  # about 150 chunks: seconds of embedding even on an idle machine
    write_corpus(serve.root / "many", n=files, paragraphs=12)
    with serve.client() as c:
        first = _wait_job(c, c.post("/ingest", json={"paths": ["first"]}).json()["id"])
        assert first["status"] == "done", first
        submitted = c.post("/ingest", json={"paths": ["many"]})
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        written = _passages_written(c)
        # inside the job: it has written its first batch (of 12) and embeds the next ones
        _until(lambda: _passages_written(c) > written, "the job's first written batch")
        running = c.get(f"/jobs/{job_id}").json()
        assert running["status"] == "running", "the job ended before the kill; make it longer"
        _kill_store_server(serve)
        job = _wait_job(c, job_id, timeout=400)
        assert job["status"] == "done", (job, serve.log_tail())
        assert job["attempts"] == 2, job
        report = job["report"]
        assert report["failed"] == 0, report
        # what the first attempt finished is skipped, what it left undone is written now
        assert report["ingested"] + report["skipped"] == files, report
        assert report["ingested"] > 0, f"the kill landed after the job's writes: {report}"
        assert c.get("/healthz").json()["store_reopens"] == 1
        r = c.post("/ask", json={"question": "What wear did the Boiler B-1 show?"})
        assert r.status_code == 200 and r.json()["citations"], r.text
    _graph_check(serve.db, expected_files=2 + files)


# -- Neo4j: the server process stopped under a running kgrag serve, then started again ---------
#
# The same faults on Neo4j: its java process is SIGKILLed (the suite's own server, found through
# scripts/neo4j.sh's folder) while ``kgrag serve`` runs on it, and started again with
# scripts/neo4j.sh after a while. Unlike the embedded engine nothing is reopened: the Bolt driver
# reconnects by itself once the server answers, so the server only probes it (store_reopens stays
# 0) and counts the outage in ``store_failures``. Every test leaves Neo4j running.


@dataclass
class Neo4jServe:
    serve: Serve
    neo4j: LocalNeo4j
    engine: Engine


@pytest.fixture
def neo4j_serve(tmp_path: Path) -> Iterator[Neo4jServe]:
    engine = engine_for(NEO4J, tmp_path)
    local = local_neo4j(engine.uri, engine.env()["KGRAG_NEO4J_PASSWORD"])
    local.start()  # running already, unless an earlier test could not start it again
    engine.reset()
    root = tmp_path / "docs"
    write_corpus(root / "first", n=2, paragraphs=2)
    env = {"KGRAG_BATCH_SIZE": "4", **engine.env()}
    srv = start_serve(tmp_path, root, env=env, store=engine.uri)
    try:
        yield Neo4jServe(srv, local, engine)
    finally:
        stop_serve(srv)
        local.start()  # the rest of the suite needs it, whatever happened here


@pytest.mark.neo4j
def test_neo4j_stopped_under_serve_gives_503_then_answers_after_its_restart(
    neo4j_serve: Neo4jServe,
) -> None:
    serve, neo4j = neo4j_serve.serve, neo4j_serve.neo4j
    statuses: Counter[int] = Counter()
    bad: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def asker() -> None:  # questions in flight all along: before, during and after the outage
        with serve.client() as c:
            while not stop.is_set():
                r = c.post("/ask", json={"question": QUESTION})
                with lock:
                    statuses[r.status_code] += 1
                    if r.status_code == 503:
                        try:
                            _assert_retry_later(r)
                        except AssertionError as e:
                            bad.append(str(e))
                    elif r.status_code != 200:
                        bad.append(f"{r.status_code}: {r.text}")
                time.sleep(0.1)

    with serve.client() as c:
        job = _wait_job(c, c.post("/ingest", json={"paths": ["first"]}).json()["id"])
        assert job["status"] == "done" and job["report"]["ingested"] == 2, job
        before = c.post("/ask", json={"question": QUESTION})
        assert before.status_code == 200, before.text
        qid = before.json()["query_id"]
        health = c.get("/healthz").json()
        assert health["store_reopens"] == 0 and health["store_failures"] == 0, health

        threads = [threading.Thread(target=asker) for _ in range(2)]
        for t in threads:
            t.start()
        try:
            _until(lambda: _answered(statuses, lock) >= 2, "answers before the kill")
            neo4j.kill()
            # Neo4j stays down until the test starts it again: every request that needs the
            # store gets 503 with Retry-After, /healthz says the store is down
            _assert_retry_later(c.get("/healthz"))
            for _ in range(3):
                _assert_retry_later(c.post("/ask", json={"question": QUESTION}))
                _assert_retry_later(c.get(f"/queries/{qid}/trace"))
            # the questions in flight are refused too, while it stays down
            _until(lambda: _refused(statuses, lock) >= 3, "questions in flight refused")
            # jobs are accepted meanwhile (they wait for the store), the API itself is up
            assert c.get("/openapi.json").status_code == 200
            _assert_retry_later(c.get("/healthz"))
            with lock:
                assert statuses[503] > 0, statuses

            neo4j.start()
            deadline = time.monotonic() + 120
            while (h := c.get("/healthz")).status_code != 200:
                _assert_retry_later(h)
                assert time.monotonic() < deadline, f"no answer after the restart: {h.text}"
                time.sleep(0.5)
            recovered = _answered(statuses, lock)
            _until(lambda: _answered(statuses, lock) >= recovered + 2, "answers after the recovery")
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=150)
        assert not bad, bad[:3]
        assert statuses[200] > 0 and statuses[503] > 0 and set(statuses) <= {200, 503}, statuses

        after = c.post("/ask", json={"question": QUESTION})
        assert after.status_code == 200, after.text
        assert {x["document_id"] for x in after.json()["citations"]} == {
            x["document_id"] for x in before.json()["citations"]
        }
        # the driver reconnected: nothing was reopened, one outage was recovered from
        health = c.get("/healthz").json()
        assert health["store_reopens"] == 0 and health["store_failures"] == 1, health
        # a trace committed before the kill survived it (Neo4j's transaction log)
        trace = c.get(f"/queries/{qid}/trace")
        assert trace.status_code == 200 and trace.json()["query"]["id"] == qid, trace.text
    assert serve.proc.poll() is None, "kgrag serve was restarted or died"
    _graph_check(neo4j_serve.engine.open(), expected_files=2)


@pytest.mark.neo4j
def test_neo4j_ingestion_job_interrupted_by_the_stop_ends_with_every_document_once(
    neo4j_serve: Neo4jServe,
) -> None:
    serve, neo4j = neo4j_serve.serve, neo4j_serve.neo4j
    files = 48  # about 150 chunks: seconds of embedding even on an idle machine
    write_corpus(serve.root / "many", n=files, paragraphs=12)
    with serve.client() as c:
        first = _wait_job(c, c.post("/ingest", json={"paths": ["first"]}).json()["id"])
        assert first["status"] == "done", first
        submitted = c.post("/ingest", json={"paths": ["many"]})
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        written = _passages_written(c)
        # inside the job: it has written its first batch (of 12) and embeds the next ones
        _until(lambda: _passages_written(c) > written, "the job's first written batch")
        running = c.get(f"/jobs/{job_id}").json()
        assert running["status"] == "running", "the job ended before the kill; make it longer"
        recoveries = serve.log.read_text(errors="replace").count(_RECOVERING)
        neo4j.kill()
        # down until the job's next write fails: nothing else touches the store here, so the
        # recovery the server logs is the job's, which now waits for the store
        _until(
            lambda: serve.log.read_text(errors="replace").count(_RECOVERING) > recoveries,
            "the job's write failing and the server recovering the store",
        )
        assert c.get(f"/jobs/{job_id}").json()["status"] == "running"
        _assert_retry_later(c.get("/healthz"))
        neo4j.start()
        job = _wait_job(c, job_id, timeout=400)
        assert job["status"] == "done", (job, serve.log_tail())
        assert job["attempts"] == 2, job
        report = job["report"]
        assert report["failed"] == 0, report
        # what the first attempt finished is skipped, what it left undone is written now
        assert report["ingested"] + report["skipped"] == files, report
        assert report["ingested"] > 0, f"the kill landed after the job's writes: {report}"
        health = c.get("/healthz").json()
        assert health["store_reopens"] == 0 and health["store_failures"] == 1, health
        r = c.post("/ask", json={"question": "What wear did the Boiler B-1 show?"})
        assert r.status_code == 200 and r.json()["citations"], r.text
    _graph_check(neo4j_serve.engine.open(), expected_files=2 + files)
