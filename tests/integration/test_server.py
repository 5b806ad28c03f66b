"""The HTTP API against a real server: ``kgrag serve`` in a subprocess on a free port of
127.0.0.1, on each engine (the embedded FalkorDB, Neo4j), real embeddings. Ingestion through
POST /ingest and job polling, asking (plain and as server-sent events), trace and audit, an API
key (with the writer and impersonate roles: it names the user who asks, as a gateway would;
tests/security/ attacks the authentication itself), the body limit, paths outside the ingest
roots, and the ACL rule (users read only documents whose acl holds their id or one of their
groups, or public ones)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.auth.principal import Role
from kgrag.server.launch import serve_subprocess
from tests.support.credentials import new_key
from tests.support.engines import Engine

LIMIT = 4096


@dataclass
class Server:
    base: str
    root: Path
    outside: Path
    public_doc: str
    secret_doc: str

    key: str

    def client(self, token: str | None = "") -> httpx.Client:
        token = self.key if token == "" else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=120)


def _wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")


@pytest.fixture(scope="module")
def server(module_engine: Engine) -> Iterator[Server]:
    tmp = module_engine.folder
    root = tmp / "docs"
    (root / "public").mkdir(parents=True)
    (root / "team").mkdir()
    outside = tmp / "outside"
    outside.mkdir()
    (root / "public" / "roster.md").write_text(
        "# Maintenance roster\n\nThe Feed Pump FP-2 is maintained by Grace Hopper, who also "
        "keeps the spare seals.\n"
    )
    (root / "team" / "cooling.md").write_text(
        "# Cooling notes\n\nThe Cooling Fan CF-9 is maintained by Hedy Lamarr. "
        "Its secret code word is heliotrope.\n"
    )
    (outside / "private.md").write_text("# Private\n\nNothing for the server to read.\n")
    (root / "public" / "link.md").symlink_to(outside / "private.md")
    keys_file = tmp / "api-keys.json"
    _, key = new_key(keys_file, "tester", Role.WRITER, Role.IMPERSONATE)
    env = {
        **os.environ,
        "KGRAG_API_KEYS_FILE": str(keys_file),
        "KGRAG_MAX_REQUEST_BYTES": str(LIMIT),
        "KGRAG_DATA_DIR": str(tmp / "data"),
        "OMP_NUM_THREADS": "1",
        **module_engine.env(),  # KGRAG_STORE and the Neo4j credentials
    }
    with serve_subprocess(
        module_engine.uri, env, tmp / "server.log", ["--ingest-root", str(root)]
    ) as up:
        base = up.base
        srv = Server(base, root, outside, "", "", key)
        with srv.client() as c:
            # two jobs queued back to back: the single writer runs them one after the other
            public = c.post("/ingest", json={"paths": ["public/roster.md"]})
            secret = c.post(
                "/ingest", json={"paths": [str(root / "team")], "acl": ["group:team-a"]}
            )
            assert public.status_code == secret.status_code == 202, public.text + secret.text
            jobs = [_wait_job(c, r.json()["id"]) for r in (public, secret)]
        for job in jobs:
            assert job["status"] == "done", job
            assert job["report"]["ingested"] == 1 and job["report"]["failed"] == 0, job
        assert jobs[0]["finished_at"] <= jobs[1]["started_at"]
        srv.public_doc = jobs[0]["report"]["document_ids"][0]
        srv.secret_doc = jobs[1]["report"]["document_ids"][0]
        yield srv


def test_health_and_openapi_are_open_everything_else_needs_a_key(server: Server) -> None:
    with server.client(token=None) as anon:
        assert anon.get("/healthz").json()["status"] == "ok"
        spec = anon.get("/openapi.json").json()
        for path in (
            "/ingest",
            "/jobs/{job_id}",
            "/ask",
            "/ask/stream",
            "/queries/{query_id}/audit",
        ):
            assert path in spec["paths"]
        r = anon.post("/ask", json={"question": "Who maintains the Feed Pump FP-2?"})
        assert r.status_code == 401
        assert r.json()["error"] == "unauthorized" and r.headers["www-authenticate"] == "Bearer"
        assert anon.get("/jobs/job_x").status_code == 401
    with server.client(token="wrong") as bad:
        assert bad.post("/ask", json={"question": "x"}).status_code == 401


def test_oversized_body_is_refused_with_413(server: Server) -> None:
    with server.client() as c:
        r = c.post("/ask", json={"question": "pump " * LIMIT})
        assert r.status_code == 413
        body = r.json()
        assert body["error"] == "request_too_large" and str(LIMIT) in body["detail"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: the streamed body is counted
            yield b'{"question": "'
            for _ in range(10):
                yield b"x" * 1000
            yield b'"}'

        r = c.post("/ask", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"] == "request_too_large"


@pytest.mark.parametrize(
    "path",
    [
        "../outside/private.md",
        "public/../../outside/private.md",
        "/etc/passwd",
        "public/link.md",  # a symlink inside the root to a file outside
        "public",  # a folder holding that symlink
    ],
)
def test_paths_outside_the_ingest_roots_are_refused(server: Server, path: str) -> None:
    with server.client() as c:
        r = c.post("/ingest", json={"paths": [path]})
    assert r.status_code == 403, r.text
    assert r.json()["error"] == "path_outside_roots"


def test_errors_are_json_with_meaningful_statuses(server: Server) -> None:
    with server.client() as c:
        r = c.get("/jobs/job_unknown")
        assert r.status_code == 404 and r.json()["error"] == "not_found"
        r = c.post("/ask", json={"question": ""})
        assert r.status_code == 422 and r.json()["error"] == "invalid_request"
        r = c.post("/ask", json={"question": "x", "unexpected": 1})
        assert r.status_code == 422
        r = c.get("/queries/q_missing/trace")
        assert r.status_code == 404 and "q_missing" in r.json()["detail"]


def test_ask_returns_the_cli_json_and_headers_then_trace_and_audit(server: Server) -> None:
    with server.client() as c:
        r = c.post("/ask", json={"question": "Who maintains the Feed Pump FP-2?", "user": "bob"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert {"query_id", "answer", "citations", "exit_reason", "iterations", "cost"} <= set(body)
        assert "Grace Hopper" in body["answer"]
        assert r.headers["x-kgrag-iterations"] == str(body["iterations"])
        assert r.headers["x-kgrag-exit-reason"] == body["exit_reason"]
        assert float(r.headers["x-kgrag-cost"]) == pytest.approx(body["cost"])
        assert {c["document_id"] for c in body["citations"]} == {server.public_doc}
        qid = body["query_id"]

        trace = c.get(f"/queries/{qid}/trace", params={"user": "bob"}).json()
        assert trace["query"]["id"] == qid and trace["steps"]
        audit = c.get(f"/queries/{qid}/audit", params={"user": "bob"}).json()
        assert audit["query_id"] == qid and audit["question"].startswith("Who maintains")
        assert audit["sources"][0]["document_id"] == server.public_doc
        assert all(s["duration_ms"] is not None for s in audit["steps"])
        page = c.get(f"/queries/{qid}/audit.html", params={"user": "bob"})
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "Grace Hopper" in page.text and "<script" not in page.text
        viewer = c.get(f"/queries/{qid}/trace.html", params={"user": "bob"})
        assert viewer.status_code == 200 and 'id="kgrag-data"' in viewer.text
        # another user does not see bob's query
        assert c.get(f"/queries/{qid}/audit", params={"user": "eve"}).status_code == 404


def test_acl_a_user_reads_only_public_documents_and_those_of_their_groups(server: Server) -> None:
    question = {"question": "Who maintains the Cooling Fan CF-9?"}
    with server.client() as c:
        outsider = c.post("/ask", json={**question, "user": "eve"}).json()
        member = c.post("/ask", json={**question, "user": "ada", "groups": ["team-a"]}).json()
        assert server.secret_doc not in {x["document_id"] for x in outsider["citations"]}
        assert "heliotrope" not in outsider["answer"] and "Hedy" not in outsider["answer"]
        assert server.secret_doc in {x["document_id"] for x in member["citations"]}
        assert "Hedy Lamarr" in member["answer"]
        for qid, user in ((outsider["query_id"], "eve"),):
            for kind in ("trace", "audit", "audit.html", "trace.html"):
                text = c.get(f"/queries/{qid}/{kind}", params={"user": user}).text
                assert server.secret_doc not in text and "heliotrope" not in text
        # the member's query, which holds the secret document, needs the member's groups
        qid = member["query_id"]
        assert c.get(f"/queries/{qid}/audit", params={"user": "ada"}).status_code == 404
        ok = c.get(f"/queries/{qid}/audit", params={"user": "ada", "groups": "team-a"})
        assert ok.status_code == 200 and server.secret_doc in ok.text


def test_ask_stream_sends_plan_steps_answer_complete_in_order(server: Server) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    with (
        server.client() as c,
        c.stream("POST", "/ask/stream", json={"question": "What did Grace Hopper keep?"}) as r,
    ):
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                assert event is not None
                events.append((event, json.loads(line.removeprefix("data: "))))
    names = [e for e, _ in events]
    assert names[0] == "plan", names
    assert names[-2:] == ["answer", "complete"], names
    assert set(names[:-2]) <= {"plan", "step", "evaluation"}, names
    # each iteration: its plan, then one step event per planned step, then its evaluation
    plans = [d for e, d in events if e == "plan"]
    steps = [d for e, d in events if e == "step"]
    assert len(steps) == sum(len(p["plan"]["plan"]) for p in plans)
    for e, d in events:
        if e == "step":
            planned = {
                st["step_id"]
                for p in plans
                if p["iteration"] == d["iteration"]
                for st in p["plan"]["plan"]
            }
            assert d["step_id"] in planned
    assert names.count("evaluation") == len(plans)
    answer, complete = events[-2][1], events[-1][1]
    assert answer["query_id"] == complete["query_id"] and answer["citations"]
    assert {"query_id", "answer", "citations", "exit_reason", "iterations", "cost"} <= set(answer)
    assert (complete["exit_reason"], complete["iterations"]) == (
        answer["exit_reason"],
        answer["iterations"],
    )


def _drawing_png(colour: str, shape: str, seed: int) -> bytes:
    import io
    import random

    from kgrag.demo.shapes import draw_shape

    buffer = io.BytesIO()
    draw_shape(colour, shape, random.Random(seed), size=64).save(buffer, format="PNG")
    return buffer.getvalue()


def test_ask_upload_answers_a_question_with_an_attached_image_and_the_metadata_headers(
    server: Server,
) -> None:
    png = _drawing_png("red", "circle", 5)
    assert len(png) < LIMIT // 2
    with server.client() as c:
        r = c.post(
            "/ask/upload",
            data={"question": "Who maintains the Feed Pump FP-2?", "user": "bob"},
            files=[("files", ("../../etc/drawing.png", png, "image/png"))],
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert "Grace Hopper" in body["answer"]
        assert r.headers["x-kgrag-query-id"] == body["query_id"]
        assert r.headers["x-kgrag-iterations"] == str(body["iterations"]) and body["iterations"]
        assert r.headers["x-kgrag-exit-reason"] == body["exit_reason"]
        assert float(r.headers["x-kgrag-cost"]) == pytest.approx(body["cost"])
        steps = c.get(f"/queries/{body['query_id']}/trace", params={"user": "bob"}).json()["steps"]
        embedded = [s for s in steps if s["type"] == "image_embedding"]
        assert embedded and embedded[0]["status"] == "ok", steps
        # the uploaded name is reduced to its base name
        assert embedded[0]["details"]["attachment"] == "drawing.png"


def test_ask_upload_refuses_bad_and_oversized_files(server: Server) -> None:
    with server.client() as c:
        r = c.post(
            "/ask/upload",
            data={"question": "what is this?"},
            files=[("files", ("notes.png", b"just some text", "image/png"))],
        )
        assert r.status_code == 422, r.text
        assert r.json()["error"] == "attachment" and "notes.png" in r.json()["detail"]
        r = c.post(
            "/ask/upload",
            data={"question": "what is this?"},
            files=[("files", ("big.wav", b"RIFF" + bytes(2 * LIMIT), "audio/wav"))],
        )
        assert r.status_code == 413 and r.json()["error"] == "request_too_large"
        r = c.post("/ask/upload", data={"question": "no files"})
        assert r.status_code == 422 and r.json()["error"] == "invalid_request"


# -- ACL of the streamed and the multipart ask, of sessions, and of traces and audits ---------

SECRET_WORDS = ("heliotrope", "Hedy", "Lamarr")
COOLING = "Who maintains the Cooling Fan CF-9?"


def _sse_raw(c: httpx.Client, body: dict[str, Any]) -> tuple[str, list[tuple[str, Any]]]:
    """The whole event stream as sent, and its (event, data) pairs."""
    with c.stream("POST", "/ask/stream", json=body) as r:
        assert r.status_code == 200, r.read()
        raw = "".join(r.iter_text())
    events, event = [], None
    for line in raw.splitlines():
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: "):
            events.append((event, json.loads(line.removeprefix("data: "))))
    return raw, events


def _secret_chunks(c: httpx.Client, server: Server) -> set[str]:
    """The ids of the private document's cited chunks, as its reader sees them."""
    member = c.post("/ask", json={"question": COOLING, "user": "ada", "groups": ["team-a"]})
    cited = {x["node_id"] for x in member.json()["citations"]}
    assert cited and server.secret_doc in member.text
    return cited


def _assert_nothing_private(text: str, server: Server, chunks: set[str]) -> None:
    for word in (*SECRET_WORDS, server.secret_doc, *chunks):
        assert word not in text, f"{word!r} reached another user"


def test_acl_ask_stream_never_sends_a_private_document_to_another_user(server: Server) -> None:
    with server.client() as c:
        chunks = _secret_chunks(c, server)
        raw, events = _sse_raw(c, {"question": COOLING, "user": "eve"})
        assert [e for e, _ in events][-2:] == ["answer", "complete"], raw[-500:]
        _assert_nothing_private(raw, server, chunks)  # plan, steps, evaluation, answer
        qid = events[-1][1]["query_id"]
        for kind in ("trace", "audit", "trace.html", "audit.html"):
            r = c.get(f"/queries/{qid}/{kind}", params={"user": "eve"})
            assert r.status_code == 200
            _assert_nothing_private(r.text, server, chunks)
        # the same stream for a member carries the document (the test can see a leak)
        raw, events = _sse_raw(c, {"question": COOLING, "user": "ada", "groups": ["team-a"]})
        answer = dict(events)["answer"]
        assert server.secret_doc in {x["document_id"] for x in answer["citations"]}
        assert "Hedy Lamarr" in answer["answer"]


def test_acl_ask_upload_never_returns_a_private_document_to_another_user(server: Server) -> None:
    png = _drawing_png("blue", "square", 7)
    with server.client() as c:
        chunks = _secret_chunks(c, server)

        def upload(**form: str) -> httpx.Response:
            return c.post(
                "/ask/upload",
                data={"question": COOLING, **form},
                files=[("files", ("fan.png", png, "image/png"))],
            )

        r = upload(user="eve")
        assert r.status_code == 200, r.text
        _assert_nothing_private(r.text + json.dumps(dict(r.headers)), server, chunks)
        for kind in ("trace", "audit"):
            page = c.get(f"/queries/{r.json()['query_id']}/{kind}", params={"user": "eve"})
            assert page.status_code == 200
            _assert_nothing_private(page.text, server, chunks)
        member = upload(user="ada", groups="team-a")
        assert member.status_code == 200 and server.secret_doc in member.text


def test_acl_another_users_session_id_carries_nothing_of_their_answers(server: Server) -> None:
    with server.client() as c:
        chunks = _secret_chunks(c, server)
        first = c.post(
            "/ask",
            json={"question": COOLING, "user": "ada", "groups": ["team-a"], "session_id": "s-ada"},
        )
        assert "Hedy Lamarr" in first.json()["answer"]
        for who in ({"user": "eve"}, {}, {"user": "eve", "groups": ["team-b"]}):
            for follow_up in ("Who maintains it?", "What is its secret code word?"):
                raw, _ = _sse_raw(c, {"question": follow_up, "session_id": "s-ada", **who})
                _assert_nothing_private(raw, server, chunks)


def test_acl_trace_and_audit_of_a_query_are_refused_to_other_readers(server: Server) -> None:
    with server.client() as c:
        member = c.post("/ask", json={"question": COOLING, "user": "ada", "groups": ["team-a"]})
        qid = member.json()["query_id"]
        readers: list[dict[str, str]] = [
            {},  # the key's own user, who did not ask
            {"user": "eve"},
            {"user": "eve", "groups": "team-a"},  # the groups alone are not the asker
            {"user": "ada"},  # the asker without the groups the answer was read with
            {"user": "ada", "groups": "team-b"},
        ]
        for params in readers:
            for kind in ("trace", "trace.html", "audit", "audit.html"):
                r = c.get(f"/queries/{qid}/{kind}", params=params)
                assert r.status_code == 404, (params, kind, r.status_code)
                assert r.json()["error"] == "not_found"
                assert server.secret_doc not in r.text and "heliotrope" not in r.text
        ok = c.get(f"/queries/{qid}/trace", params={"user": "ada", "groups": "team-a,team-b"})
        assert ok.status_code == 200 and server.secret_doc in ok.text
