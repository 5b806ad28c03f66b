"""A bounded load on a real ``kgrag serve`` on 127.0.0.1 (the pieces of bench/load_http.py):
concurrent POST /ask while ``kgrag ingest`` adds documents from another process to the same
store, on each engine (the embedded FalkorDB, whose server the two processes share, and Neo4j).
Every request must succeed, the ingestion too, and the server must stay up; the documents must
have been written while questions were in flight (their timestamps), the server's memory (RSS)
must not grow by more than a bound, and the graph must be consistent afterwards
(every document complete and stored once, no chunk id twice).

The request loop is bounded in count and in time and only talks to 127.0.0.1; it goes on until
the ingestion has finished (and at least ``MIN_REQUESTS`` were sent), so the two overlap."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kgrag.server.launch import Served, free_port, wait_healthy
from tests.support.engines import Engine

pytestmark = pytest.mark.reliability

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "load_http.py"

DOCUMENTS = 6  # ingested before the server starts
MORE = 4  # ingested by another process during the load
CONCURRENCY = 4
MIN_REQUESTS = 12
MAX_REQUESTS = 2000
MAX_SECONDS = 240.0
#: How much the server's resident memory may grow over the load (models are loaded before).
RSS_GROWTH_BOUND = 150 * 1024 * 1024


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("load_http", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_load(
    load: ModuleType, base: str, ingest: subprocess.Popen[bytes]
) -> list[tuple[int, datetime, datetime]]:
    """POST /ask, ``CONCURRENCY`` at a time, until the ingestion has exited and at least
    ``MIN_REQUESTS`` were sent; never more than ``MAX_REQUESTS`` nor after ``MAX_SECONDS``.
    Each request as (status, start, end)."""
    done: list[tuple[int, datetime, datetime]] = []
    lock = threading.Lock()
    sent = 0
    stop_at = time.monotonic() + MAX_SECONDS

    def next_number() -> int | None:
        nonlocal sent
        with lock:
            enough = ingest.poll() is not None and sent >= MIN_REQUESTS
            if enough or sent >= MAX_REQUESTS or time.monotonic() > stop_at:
                return None
            sent += 1
            return sent

    def worker() -> None:
        while (n := next_number()) is not None:
            body = {"question": load.QUESTIONS[n % len(load.QUESTIONS)], "user": f"load{n % 4}"}
            start = datetime.now(UTC)
            status, _ = load._post(base + "/ask", body, 120.0)
            with lock:
                done.append((status, start, datetime.now(UTC)))

    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        for future in [pool.submit(worker) for _ in range(CONCURRENCY)]:
            future.result()
    return done


class _RssSampler(threading.Thread):
    """The server's resident set size every 0.25 s (its peak, for the message)."""

    def __init__(self, process: Any) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.peak = process.memory_info().rss
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.25):
            try:
                self.peak = max(self.peak, self.process.memory_info().rss)
            except Exception:
                return


def test_concurrent_asks_while_another_process_ingests(tmp_path: Path, engine: Engine) -> None:
    pytest.importorskip("uvicorn")
    psutil = pytest.importorskip("psutil")
    load = _load_script()
    store = engine.uri

    def env() -> dict[str, str]:  # the engine's store and credentials for a kgrag subprocess
        return {**load._env(), **engine.env()}

    load.write_corpus(tmp_path / "corpus", 0, DOCUMENTS)
    load.write_corpus(tmp_path / "more", DOCUMENTS, MORE)
    subprocess.run(
        [load.KGRAG, "--quiet", "ingest", str(tmp_path / "corpus"), "--store", store, "--json"],
        check=True,
        env=env(),
        stdout=subprocess.DEVNULL,
        cwd=tmp_path,
        timeout=600,
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [load.KGRAG, "serve", "--host", "127.0.0.1", "--port", str(port), "--store", store],
        env=env(),
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    ingest: subprocess.Popen[bytes] | None = None
    try:
        wait_healthy(Served(server, base, tmp_path / "serve.log"), 180)
        for question in load.QUESTIONS:  # load the models, warm every question's path
            assert load._post(base + "/ask", {"question": question}, 120.0)[0] == 200
        process = psutil.Process(server.pid)
        rss_before = process.memory_info().rss
        sampler = _RssSampler(process)
        sampler.start()
        ingest = subprocess.Popen(
            [load.KGRAG, "--quiet", "ingest", str(tmp_path / "more"), "--store", store, "--json"],
            env=env(),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        requests = _run_load(load, base, ingest)
        out, _ = ingest.communicate(timeout=600)
        sampler.stop.set()
        sampler.join()
        rss_after = process.memory_info().rss
        assert server.poll() is None, "kgrag serve died under the load"

        # every request answered, the ingestion done
        statuses = Counter(status for status, _, _ in requests)
        growth = rss_after - rss_before
        print(  # the figures, visible with -s
            f"POST /ask x{len(requests)} at concurrency {CONCURRENCY}: {dict(statuses)}; "
            f"server RSS {rss_before >> 20} -> {rss_after >> 20} MiB "
            f"(peak {sampler.peak >> 20} MiB)"
        )
        assert len(requests) >= MIN_REQUESTS, len(requests)
        assert statuses == {200: len(requests)}, statuses
        assert ingest.returncode == 0
        report = json.loads(out)
        assert report["ingested"] == MORE and report["failed"] == 0, report

        # the server's memory stays bounded over the load
        assert growth < RSS_GROWTH_BOUND, (
            f"kgrag serve grew by {growth >> 20} MiB over {len(requests)} requests "
            f"(bound {RSS_GROWTH_BOUND >> 20} MiB; {rss_before >> 20} -> {rss_after >> 20} MiB)"
        )

        # the graph is consistent, and the new documents were written during the questions
        graph = engine.open()  # embedded: attaches to the server's redis-server
        try:
            docs = graph.read_freeform(
                "MATCH (d:Document) RETURN d.id AS id, d.uri AS uri, d.status AS status, "
                "d.sha256 AS sha256, d.ingested_at AS ingested_at"
            )
            dup_chunks = graph.read_freeform(
                "MATCH (c:Chunk) WITH c.id AS id, count(*) AS n WHERE n > 1 RETURN id, n"
            )
            chunks = graph.read_freeform("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
        finally:
            graph.close()
        assert len(docs) == DOCUMENTS + MORE, docs
        assert {d["status"] for d in docs} == {"complete"}, docs
        assert len({d["sha256"] for d in docs}) == len(docs), "a document is stored twice"
        assert dup_chunks == [] and chunks >= len(docs), (dup_chunks, chunks)
        written = [
            datetime.fromisoformat(d["ingested_at"]) for d in docs if "/more/" in str(d["uri"])
        ]
        assert len(written) == MORE, docs
        for at in written:
            in_flight = [s for s, start, end in requests if start <= at <= end]
            assert in_flight, (
                f"document written at {at} while no question was in flight ({len(requests)} "
                f"questions from {min(r[1] for r in requests)} to {max(r[2] for r in requests)})"
            )
    finally:
        for proc in (ingest, server):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        log.close()
