"""The bounds of the HTTP API on a real uvicorn server on 127.0.0.1 (in this process, over an
agent whose questions and ingestions wait until the test lets them go), on each engine (the
embedded FalkorDB, Neo4j: the agent's questions read the engine's store, its ingestions register
a job in it): requests beyond the concurrency bound and jobs beyond the queue bound are refused
at once with a clear error and Retry-After, never queued; and a store that stops answering gives
503 with Retry-After and is used again once it answers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.agent.answer import Answer
from kgrag.config import Settings
from kgrag.errors import StoreUnavailableError
from kgrag.graph.store import GraphStore
from kgrag.ingest.pipeline import IngestReport
from kgrag.server.app import create_app
from kgrag.server.launch import free_port
from tests.integration.test_server import _wait_job
from tests.support.engines import Engine


class SwitchedStore:
    """The engine's real store behind a switch: while ``down`` its reads fail as a lost
    connection does (StoreUnavailableError), otherwise they run on the engine. Reads are
    counted. A real outage of each engine (the embedded redis-server killed, the Neo4j server
    process killed and restarted) under ``kgrag serve`` is in test_server_recovery.py; here the
    app is given an agent it does not own, which is only ever probed, never reopened."""

    def __init__(self, store: GraphStore) -> None:
        self.real = store
        self.uri = store.uri
        self.down = False
        self.reads = 0

    def read(self, name: str, params: Any = None) -> list[dict[str, Any]]:
        self.reads += 1
        if self.down:
            raise StoreUnavailableError(f"lost the connection to {self.uri}. Reopen the store")
        return self.real.read(name, params)

    def close(self) -> None:
        self.real.close()


class BlockingAgent:
    """Questions (a read of the engine's store) and ingestions (a job registered in it) that
    wait for the test's go."""

    def __init__(self, store: GraphStore) -> None:
        self.store = SwitchedStore(store)
        self.go_ask = threading.Event()
        self.go_ingest = threading.Event()
        self.asking = threading.Semaphore(0)
        self.ingesting = threading.Semaphore(0)

    def ask(self, question: str, **_: Any) -> Answer:
        self.store.read("embedding_space_list")
        self.asking.release()
        assert self.go_ask.wait(60)
        return Answer(
            query_id="q_stub",
            answer=f"echo {question}",
            citations=(),
            exit_reason="sufficient",
            iterations=1,
            mode="extractive",
        )

    async def aask(self, question: str, **kwargs: Any) -> Answer:
        """As the real agent's: the run works in a worker thread while the request awaits it."""
        return await asyncio.to_thread(self.ask, question, **kwargs)

    def ingest(self, paths: Sequence[str], acl: Sequence[str], **_: Any) -> IngestReport:
        # registered as an ingestion job in the store (Neo4j: an IngestJob node) while it waits
        with self.store.real.ingest_job(list):
            self.ingesting.release()
            assert self.go_ingest.wait(60)
        return IngestReport(ingested=len(paths))


def _until(condition: Callable[[], bool], what: str, bound_s: float = 30) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``bound_s`` seconds."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, f"not seen within {bound_s} s: {what}"
        time.sleep(0.02)


@contextmanager
def running(app: Any) -> Iterator[str]:
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@pytest.fixture
def agent(engine: Engine) -> Iterator[BlockingAgent]:
    found = BlockingAgent(engine.open())
    yield found
    found.store.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nSome text.\n")
    return folder


def test_requests_over_the_concurrency_bound_get_503_with_retry_after(
    root: Path, agent: BlockingAgent
) -> None:
    pytest.importorskip("uvicorn")
    app = create_app(
        Settings(ingest_roots=(root,)),
        agent=agent,  # type: ignore[arg-type]
        max_concurrent_requests=2,
    )
    results: list[httpx.Response] = []

    def ask(base: str, n: int) -> None:
        results.append(httpx.post(f"{base}/ask", json={"question": f"q{n}"}, timeout=60))

    with running(app) as base:
        held = [threading.Thread(target=ask, args=(base, n)) for n in range(2)]
        for t in held:
            t.start()
        for _ in held:  # both are inside the agent: the bound is reached
            assert agent.asking.acquire(timeout=30)
        over = httpx.post(f"{base}/ask", json={"question": "one too many"}, timeout=10)
        assert over.status_code == 503, over.text
        assert over.json()["error"] == "server_busy"
        assert "2 requests" in over.json()["detail"]
        assert over.headers["retry-after"] == "1"
        # refused at once: the refused question never reached the agent
        assert not agent.asking.acquire(timeout=0.5)
        # the health check is not counted
        assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
        agent.go_ask.set()
        for t in held:
            t.join(60)
        assert [r.status_code for r in results] == [200, 200], [r.text for r in results]
        after = httpx.post(f"{base}/ask", json={"question": "now"}, timeout=60)
        assert after.status_code == 200 and after.json()["answer"] == "echo now"


def test_ingest_jobs_over_the_queue_bound_get_429_with_retry_after(
    root: Path, agent: BlockingAgent
) -> None:
    pytest.importorskip("uvicorn")
    app = create_app(
        Settings(ingest_roots=(root,)),
        agent=agent,  # type: ignore[arg-type]
        max_queued_jobs=1,
    )
    with running(app) as base, httpx.Client(base_url=base, timeout=30) as c:
        first = c.post("/ingest", json={"paths": ["a.md"]})
        assert first.status_code == 202, first.text
        assert agent.ingesting.acquire(timeout=30)  # running: it no longer waits
        second = c.post("/ingest", json={"paths": ["a.md"]})
        assert second.status_code == 202 and second.json()["status"] == "queued"
        third = c.post("/ingest", json={"paths": ["a.md"]})
        assert third.status_code == 429, third.text
        assert third.json()["error"] == "ingest_queue_full"
        assert "1 ingestion jobs already wait" in third.json()["detail"]
        assert int(third.headers["retry-after"]) >= 1
        agent.go_ingest.set()
        for r in (first, second):
            job = _wait_job(c, r.json()["id"], timeout=30)
            assert job["status"] == "done" and job["attempts"] == 1, job
        again = c.post("/ingest", json={"paths": ["a.md"]})
        assert again.status_code == 202
        assert _wait_job(c, again.json()["id"], timeout=30)["status"] == "done"


def test_an_unavailable_store_gives_503_with_retry_after_until_it_answers_again(
    root: Path, agent: BlockingAgent
) -> None:
    """A given agent's store is not reopened (the app does not own it) but probed until it
    answers again, as a remote server that restarts."""
    pytest.importorskip("uvicorn")
    agent.go_ask.set()
    app = create_app(Settings(ingest_roots=(root,)), agent=agent)  # type: ignore[arg-type]
    with running(app) as base, httpx.Client(base_url=base, timeout=30) as c:
        assert c.get("/healthz").json()["status"] == "ok"
        agent.store.down = True
        r = c.post("/ask", json={"question": "q"})
        assert r.status_code == 503, r.text
        body = r.json()
        assert body["error"] == "store_unavailable" and "Reopen the store" not in body["detail"]
        assert agent.store.uri not in body["detail"]  # the cause stays in the server log
        assert int(r.headers["retry-after"]) >= 1
        h = c.get("/healthz")
        assert h.status_code == 503 and h.json()["error"] == "store_unavailable"
        assert int(h.headers["retry-after"]) >= 1
        # the recovery's first probe failed: it waits out its backoff (0.5 s, then 1 s, ...)
        probed = agent.store.reads
        _until(lambda: agent.store.reads > probed, "the recovery probing the store")
        reads = agent.store.reads
        # while recovering, requests are answered 503 without touching the store; only the
        # recovery probes it, with backoff, not once per request
        for _ in range(20):
            assert c.post("/ask", json={"question": "q"}).status_code == 503
        assert agent.store.reads - reads <= 4, agent.store.reads - reads
        agent.store.down = False
        _until(lambda: c.get("/healthz").status_code == 200, "the store used again")
        assert c.post("/ask", json={"question": "back"}).json()["answer"] == "echo back"
        assert c.get("/healthz").json()["store_reopens"] == 0
