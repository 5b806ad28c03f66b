"""SIGTERM drains a real ``kgrag serve`` (issue 22, item 6), on each engine: once signalled the
server takes no new work (``/readyz`` and a new question or ingestion job answer 503
``shutting_down`` with Retry-After), the answer in flight still completes with 200, the running
ingestion job is interrupted, the process then exits by itself with status 0, and the same job
submitted to the restarted server resumes: every document ends complete, none twice.

What keeps the timing deterministic is a local OpenAI-compatible server whose chat replies wait
for the test: the ingestion job is held in its first document summary and the question in its
first model call, both in flight when the signal arrives."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.server.launch import ServerStartError, serve_subprocess
from tests.integration.test_server import _wait_job
from tests.support.engines import Engine
from tests.support.openai_server import LocalOpenAIServer

FILES = 4
QUESTION = "Who studied the Analytical Engine in London?"
#: Bound on every wait of this test (a stuck server fails it instead of hanging).
WAIT_S = 240.0


class GatedModel:
    """A chat model that holds every reply until :attr:`gate` opens; records what it was asked."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.asked: list[str] = []
        self.summary_asked = threading.Event()
        self.question_asked = threading.Event()

    def __call__(self, body: dict[str, Any]) -> str:
        text = json.dumps(body["messages"])
        self.asked.append(text)
        if "Summarise the document" in text:
            self.summary_asked.set()
        if QUESTION in text:
            self.question_asked.set()
        assert self.gate.wait(WAIT_S), "the test never opened the gate"
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if name == "_LlmVerdict":
            return json.dumps({"decision": "SATISFIED", "reason": "answered"})
        if name == "_LlmChecks":
            return json.dumps({"supported": []})
        if name is not None:  # the plan: let the rule planner plan
            return "not a plan"
        return "Ada Lovelace studied the Analytical Engine in London."


@pytest.fixture
def model() -> Iterator[tuple[LocalOpenAIServer, GatedModel]]:
    gated = GatedModel()
    with LocalOpenAIServer(chat_handler=gated) as server:
        yield server, gated
        gated.gate.set()


def _corpus(root: Path) -> None:
    root.mkdir()
    for i in range(FILES):
        text = (
            f"Report {i}: Ada Lovelace travelled to London to study the Analytical Engine. "
            f"Charles Babbage showed her drawing {i} of the mill and the store.\n"
        )
        (root / f"report_{i}.txt").write_text(text * 4, encoding="utf-8")


def _env(engine: Engine, server: LocalOpenAIServer) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KGRAG_API_KEYS", "KGRAG_JWT", "KGRAG_LLM", "KGRAG_OPENAI"))
    }
    return {
        **env,
        **engine.env(),
        "KGRAG_DATA_DIR": str(engine.folder / "data"),
        "KGRAG_BATCH_SIZE": "2",
        "KGRAG_LLM_MODEL": "gpt-4o-mini",
        "KGRAG_OPENAI_BASE_URL": server.base_url,
        "KGRAG_OPENAI_API_KEY": "test",
        "KGRAG_SHUTDOWN_TIMEOUT_S": "120",
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
    }


def _refused_as_shutting_down(r: httpx.Response) -> None:
    assert r.status_code == 503, r.text
    assert r.json()["error"] == "shutting_down", r.text
    assert int(r.headers["Retry-After"]) >= 1


def test_sigterm_drains_answers_interrupts_the_job_and_a_rerun_resumes_it(
    engine: Engine, model: tuple[LocalOpenAIServer, GatedModel]
) -> None:
    server, gated = model
    root = engine.folder / "reports"
    _corpus(root)
    env = _env(engine, server)
    log = engine.folder / "serve.log"
    args = ["--ingest-root", str(root)]
    with (
        serve_subprocess(engine.uri, env, log, args) as up,
        httpx.Client(base_url=up.base, timeout=WAIT_S) as c,
        ThreadPoolExecutor(max_workers=1) as pool,
    ):
        job = c.post("/ingest", json={"paths": [str(root)]})
        assert job.status_code == 202, job.text
        job_id = job.json()["id"]
        assert gated.summary_asked.wait(WAIT_S), "the job never reached its first summary"
        in_flight: Future[httpx.Response] = pool.submit(c.post, "/ask", json={"question": QUESTION})
        assert gated.question_asked.wait(WAIT_S), "the question never reached the model"

        up.proc.send_signal(signal.SIGTERM)
        while (ready := c.get("/readyz")).status_code == 200:  # the drain starts at once
            assert up.proc.poll() is None
            time.sleep(0.05)
        _refused_as_shutting_down(ready)
        _refused_as_shutting_down(c.get("/healthz"))
        _refused_as_shutting_down(c.post("/ask", json={"question": "Who is Ada?"}))
        _refused_as_shutting_down(c.post("/ingest", json={"paths": [str(root)]}))
        assert c.get("/livez").status_code == 200  # alive all along
        assert not in_flight.done()

        gated.gate.set()
        answered = in_flight.result(timeout=WAIT_S)
        assert answered.status_code == 200, answered.text
        assert answered.json()["query_id"]
        assert up.proc.wait(timeout=WAIT_S) == 0  # it stopped by itself, cleanly
    said = log.read_text()
    assert f"ingest job {job_id} interrupted" in said, said[-3000:]
    assert "drained in" in said, said[-3000:]

    with engine.open() as store:
        stored = store.read_freeform("MATCH (d:Document) RETURN d.status AS status")
    complete = sum(1 for r in stored if r["status"] == "complete")
    assert complete < FILES, "the job was not interrupted before its end"

    try:
        with (
            serve_subprocess(engine.uri, env, engine.folder / "again.log", args) as up,
            httpx.Client(base_url=up.base, timeout=WAIT_S) as c,
        ):
            again = c.post("/ingest", json={"paths": [str(root)]})
            assert again.status_code == 202, again.text
            done = _wait_job(c, again.json()["id"], timeout=WAIT_S)
    except ServerStartError as e:
        raise AssertionError(str(e)) from e
    assert done["status"] == "done", done
    report = done["report"]
    assert report["failed"] == 0, report
    # resumed: what the first run completed is skipped as unchanged, the rest is ingested
    unchanged = [s for s in report["skips"] if s["kind"] == "unchanged"]
    assert (len(unchanged), report["ingested"]) == (complete, FILES - complete), report
    with engine.open() as store:
        assert store.read("document_unfinished") == []
        docs = store.read_freeform("MATCH (d:Document) RETURN d.uri AS uri, d.status AS status")
    assert sorted(Path(r["uri"]).name for r in docs) == [f"report_{i}.txt" for i in range(FILES)]
    assert {r["status"] for r in docs} == {"complete"}
