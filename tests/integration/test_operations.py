"""Running kgrag as a service (issue 22), on each engine: the Prometheus metrics after real
ingests and asks (parsed with prometheus-client's own parser), the role that guards them, the
probes, the request id and the JSON access log, trace retention (the store returns to its node
and relationship counts, evidence untouched) and the erasure of one user's questions. The app
runs in-process (TestClient) over a real store and the real text model, with real API keys."""

from __future__ import annotations

import io
import json
import logging
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner, Result

from kgrag import metrics
from kgrag.agent.agent import KnowledgeAgent
from kgrag.auth.principal import Role
from kgrag.cli import app as cli_app
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore
from kgrag.logs import JsonFormatter
from kgrag.modalities.text import default_text_embedder
from kgrag.retention import prune_traces
from kgrag.server.app import create_app
from kgrag.server.launch import free_port
from tests.integration.test_server_limits import running
from tests.support.credentials import bearer, new_key
from tests.support.engines import Engine

#: Trace labels; everything else (documents, chunks, entities...) is evidence or bookkeeping.
TRACE_LABELS = {"Query", "Plan", "Step", "Answer", "Session"}
Sample = tuple[str, frozenset[tuple[str, str]]]


@dataclass
class Ops:
    engine: Engine
    store: GraphStore
    app: FastAPI
    client: TestClient
    root: Path
    admin: dict[str, str]
    reader: dict[str, str]
    scraper: dict[str, str]
    gateway: dict[str, str]


@pytest.fixture(scope="module")
def ops(module_engine: Engine) -> Iterator[Ops]:
    folder = module_engine.folder
    root = folder / "docs"
    root.mkdir()
    (root / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program for Charles Babbage's "
        "Analytical Engine in 1843.\n",
        encoding="utf-8",
    )
    (root / "grace.md").write_text(
        "# Grace Hopper\n\nGrace Hopper built the first compiler, the A-0 System, in 1952.\n",
        encoding="utf-8",
    )
    keys = folder / "keys.json"
    admin = new_key(keys, "root", Role.ADMIN)[1]
    reader = new_key(keys, "carol", Role.READER)[1]
    scraper = new_key(keys, "prometheus", Role.METRICS)[1]
    gateway = new_key(keys, "gateway", Role.WRITER, Role.IMPERSONATE)[1]
    settings = module_engine.settings(api_keys_file=keys, ingest_roots=(root,))
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as agent:
        app = create_app(settings, agent=agent)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield Ops(
                module_engine,
                store,
                app,
                client,
                root,
                bearer(admin),
                bearer(reader),
                bearer(scraper),
                bearer(gateway),
            )


def _scrape(ops: Ops) -> dict[Sample, float]:
    r = ops.client.get("/metrics", headers=ops.scraper)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def _sum(samples: dict[Sample, float], name: str, **labels: str) -> float:
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


def _ingest(ops: Ops, paths: list[str]) -> dict[str, object]:
    r = ops.client.post("/ingest", json={"paths": paths}, headers=ops.gateway)
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    for _ in range(600):
        job = ops.client.get(f"/jobs/{job_id}", headers=ops.gateway).json()
        if job["status"] in ("done", "failed"):
            assert job["status"] == "done", job
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish")


def _ask(ops: Ops, question: str, user: str, session: str | None = None) -> str:
    body = {"question": question, "user": user, "session_id": session}
    r = ops.client.post("/ask", json=body, headers=ops.gateway)
    assert r.status_code == 200, r.text
    return str(r.json()["query_id"])


def _counts(store: GraphStore) -> tuple[dict[str, int], dict[str, int]]:
    nodes = {r["label"]: int(r["n"]) for r in store.read("stats_labels") if int(r["n"])}
    rels = {r["type"]: int(r["n"]) for r in store.read("stats_relationships") if int(r["n"])}
    return nodes, rels


def _evidence(store: GraphStore) -> dict[str, int]:
    return {k: v for k, v in _counts(store)[0].items() if k not in TRACE_LABELS}


def test_probes_are_open_and_metrics_need_the_metrics_role(ops: Ops) -> None:
    c = ops.client
    assert c.get("/livez").json()["status"] == "alive"
    ready = c.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ok"
    assert c.get("/metrics").status_code == 401  # authentication is on: never public
    refused = c.get("/metrics", headers=ops.reader)
    assert refused.status_code == 403 and "metrics role" in refused.json()["detail"]
    assert c.get("/metrics", headers=ops.admin).status_code == 200  # an admin has it too
    assert c.get("/metrics", headers=ops.scraper).status_code == 200
    # the metrics-only key reads nothing else
    assert c.post("/ask", json={"question": "x"}, headers=ops.scraper).status_code == 403


def test_a_scrape_shows_the_real_ingests_and_asks(ops: Ops) -> None:
    before = _scrape(ops)
    _ingest(ops, ["ada.md", "grace.md"])
    _ask(ops, "Who wrote the first program?", "alice")
    _ask(ops, "Who built the first compiler?", "alice")
    after = _scrape(ops)

    def delta(name: str, **labels: str) -> float:
        return _sum(after, name, **labels) - _sum(before, name, **labels)

    assert delta("kgrag_ingest_jobs_total") == 1
    assert delta("kgrag_ingest_files_total", outcome="ingested") == 2
    assert delta("kgrag_ingest_files_total", outcome="failed") == 0
    assert delta("kgrag_ingest_passages_total") >= 2
    assert delta("kgrag_ingest_stage_seconds_total", stage="embed_text") > 0
    assert delta("kgrag_ask_seconds_count", planner="rule") == 2
    assert delta("kgrag_ask_seconds_sum") > 0
    assert delta("kgrag_step_seconds_count", type="vector_search", status="ok") >= 2
    assert delta("kgrag_http_requests_total", method="POST", route="/ask", status="200") == 2
    assert delta("kgrag_http_requests_total", method="POST", route="/ingest", status="202") == 1
    # a job is polled by its route's template, never by its raw path
    assert delta("kgrag_http_requests_total", route="/jobs/{job_id}", status="200") >= 1
    assert _sum(after, "kgrag_model_load_seconds", kind="text") > 0
    assert ("kgrag_ingest_jobs_queued", frozenset()) in after
    assert not [n for n, ls in after if dict(ls).get("route", "/").count("/ingest/")]


def test_the_json_access_log_leads_from_a_request_to_its_trace(ops: Ops) -> None:
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    handler.setFormatter(JsonFormatter())
    access = logging.getLogger("kgrag.access")
    access.addHandler(handler)
    old_level = access.level
    access.setLevel(logging.INFO)
    question = "Which engine did Ada Lovelace program?"
    try:
        r = ops.client.post(
            "/ask",
            json={"question": question, "user": "alice"},
            headers={**ops.gateway, "X-Request-Id": "ops-test.1"},
        )
        bad = ops.client.get("/livez", headers={"X-Request-Id": "no spaces\tor tabs"})
        job = ops.client.post("/ingest", json={"paths": ["ada.md"]}, headers=ops.gateway)
    finally:
        access.removeHandler(handler)
        access.setLevel(old_level)
    assert r.status_code == 200 and r.headers["x-request-id"] == "ops-test.1"
    assert len(bad.headers["x-request-id"]) == 32  # a new id instead of the unusable one
    records = [json.loads(line) for line in lines.getvalue().splitlines()]
    ask = next(x for x in records if x.get("request_id") == "ops-test.1")
    assert ask["route"] == "/ask" and ask["status"] == 200 and ask["method"] == "POST"
    assert ask["query_id"] == r.headers["x-kgrag-query-id"]
    assert ask["principal"].startswith("key:") and ask["latency_ms"] > 0
    assert {"time", "level", "logger", "message"} <= set(ask)
    ingest = next(x for x in records if x.get("route") == "/ingest")
    assert ingest["job_id"] == job.json()["id"] and ingest["status"] == 202
    text = lines.getvalue()
    assert "Lovelace" not in text and "Bearer" not in text  # no question, no credential
    # the trace named by the log line is there, for its reader
    trace = ops.client.get(f"/queries/{ask['query_id']}/trace", headers=ops.admin)
    assert trace.status_code == 200


def test_pruning_returns_the_store_to_its_counts_and_keeps_the_evidence(ops: Ops) -> None:
    store = ops.store
    prune_traces(store, older_than_days=0)  # what the earlier tests asked
    base = _counts(store)
    evidence = _evidence(store)
    assert not TRACE_LABELS & set(base[0])
    _ask(ops, "Who wrote the first program?", "dave", session="talk")
    _ask(ops, "When was that?", "dave", session="talk")
    _ask(ops, "Who built the first compiler?", "erin")
    grown = _counts(store)
    assert grown[0]["Query"] == 3 and grown[0]["Session"] == 1 and grown[0]["Step"] > 3
    # nothing is older than 30 days: a prune removes nothing
    assert prune_traces(store, older_than_days=30).queries == 0
    assert _counts(store) == grown
    # the newest question of each session is kept ("talk", and those asked outside one)
    kept = prune_traces(store, older_than_days=0, keep_last=1)
    assert kept.queries == 1 and _counts(store)[0]["Query"] == 2
    # the command line removes the rest
    result = CliRunner().invoke(
        cli_app,
        ["traces", "prune", "--older-than", "0", "--store", ops.engine.uri, "--json"],
        env=ops.engine.env(),
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["queries"] == 2 and report["nodes"] >= 8
    assert _counts(store) == base
    assert _evidence(store) == evidence


def test_a_pruned_question_is_left_nowhere_in_the_embedded_store_files(ops: Ops) -> None:
    """The prune rewrites the append-only log (it held every write since its last rewrite),
    and FalkorDB's own log of recent queries (a stream in the snapshot, with their parameters)
    is not kept, so the question's words are in no file of the store once its trace is gone."""
    if ops.engine.is_neo4j:
        pytest.skip("the embedded store's files; Neo4j reuses the records it freed")
    store = ops.store
    prune_traces(store, older_than_days=0)
    question = "Did Ada Lovelace ever meet a quokka named Zebediah?"
    _ask(ops, question, "dave")
    files = [ops.engine.folder / "kg.db", *(ops.engine.folder / "appendonlydir").iterdir()]

    def holding() -> list[str]:
        store.snapshot()  # type: ignore[attr-defined]
        return [f.name for f in files if f.is_file() and b"Zebediah" in f.read_bytes()]

    assert holding(), "the question was never written: the test shows nothing"
    assert prune_traces(store, older_than_days=0).queries == 1
    files = [ops.engine.folder / "kg.db", *(ops.engine.folder / "appendonlydir").iterdir()]
    assert holding() == []


def test_forgetting_a_user_erases_their_questions_and_nothing_of_others(ops: Ops) -> None:
    store = ops.store
    prune_traces(store, older_than_days=0)
    evidence = _evidence(store)
    mine = [
        _ask(ops, "Who wrote the first program?", "alice", session="shared"),
        _ask(ops, "Who built the first compiler?", "alice", session="own"),
    ]
    theirs = [_ask(ops, "When was the first compiler built?", "bob", session="shared")]
    their_traces = [read_trace(store, q, OPERATOR) for q in theirs]

    path = "/users/alice/questions"
    assert ops.client.delete(path, headers=ops.reader).status_code == 403
    assert ops.client.delete(path, headers=ops.gateway).status_code == 403  # not an admin
    r = ops.client.delete(path, headers=ops.admin)
    assert r.status_code == 200, r.text
    assert r.json()["queries"] == 2 and r.json()["sessions"] == 1  # "own"; "shared" has bob
    for q in mine:
        assert store.read("trace_read_query", {"id": q}) == []
        assert ops.client.get(f"/queries/{q}/trace", headers=ops.admin).status_code == 404
    assert [read_trace(store, q, OPERATOR) for q in theirs] == their_traces
    turns = store.read(
        "session_turns", {"session_id": "shared", "user": "bob", "groups": [], "k": 9}
    )
    assert [t["query_id"] for t in turns] == [theirs[0]]
    assert ops.client.delete(path, headers=ops.admin).json()["queries"] == 0  # idempotent

    result = CliRunner().invoke(
        cli_app,
        ["forget", "--user", "bob", "--store", ops.engine.uri, "--json"],
        env=ops.engine.env(),
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["queries"] == 1
    assert not TRACE_LABELS & set(_counts(store)[0])
    assert _evidence(store) == evidence
    bad = CliRunner().invoke(cli_app, ["forget", "--user", " ", "--store", ops.engine.uri])
    assert bad.exit_code == 2 and "--user" in bad.output


#: Hostile user names in ``DELETE /users/{user}/questions`` (already URL-encoded) and the error
#: each gets: no route (an empty name, a slash) or an invalid name.
HOSTILE_USERS = [
    ("", "not_found"),  # /users//questions
    ("%20", "invalid_request"),
    ("%20alice", "invalid_request"),
    ("alice%20", "invalid_request"),
    ("a" * 5000, "invalid_request"),
    ("alice%00", "invalid_request"),
    ("ali%0Ace", "invalid_request"),
    ("%1B%5B2J", "invalid_request"),
    ("alice%2Fbob", "not_found"),
    ("alice%2F..%2Fbob", "not_found"),
    ("%2F", "not_found"),
]


def test_erasing_a_hostile_user_name_is_a_clear_4xx_and_removes_nothing(ops: Ops) -> None:
    store = ops.store
    prune_traces(store, older_than_days=0)
    asked = [
        _ask(ops, "Who wrote the first program?", "alice", session="s1"),
        _ask(ops, "Who built the first compiler?", "alice/bob", session="s2"),
        _ask(ops, "When was the first compiler built?", "bob", session="s3"),
    ]
    before = _counts(store)
    traces = [read_trace(store, q, OPERATOR) for q in asked]
    for user, error in HOSTILE_USERS:
        r = ops.client.delete(f"/users/{user}/questions", headers=ops.admin)
        assert 400 <= r.status_code < 500, (user[:40], r.status_code, r.text[:300])
        assert r.json()["error"] == error, (user[:40], r.text[:300])
    assert _counts(store) == before
    assert [read_trace(store, q, OPERATOR) for q in asked] == traces


def test_a_cli_batch_job_writes_its_metrics_as_a_textfile(ops: Ops, tmp_path: Path) -> None:
    (ops.root / "turing.md").write_text(
        "# Alan Turing\n\nAlan Turing described the universal machine in 1936.\n", encoding="utf-8"
    )
    ingested = {"outcome": "ingested"}
    before = metrics.REGISTRY.get_sample_value("kgrag_ingest_files_total", ingested) or 0.0
    target = tmp_path / "textfile" / "kgrag.prom"
    result = CliRunner().invoke(
        cli_app,
        [
            "--metrics-file",
            str(target),
            "ingest",
            str(ops.root / "turing.md"),
            "--store",
            ops.engine.uri,
            "-q",
        ],
        env=ops.engine.env(),
    )
    assert result.exit_code == 0, result.output
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(target.read_text())
        for s in family.samples
    }
    assert samples[("kgrag_ingest_files_total", frozenset(ingested.items()))] == before + 1
    assert _sum(samples, "kgrag_ingest_passages_total") >= 1
    assert [p.name for p in target.parent.iterdir()] == ["kgrag.prom"]  # no temporary left


def _said(result: Result) -> str:
    """What a CLI command said: its output, or the error main() would print (CliRunner calls
    the app, not main())."""
    return result.output + str(result.exception or "")


def _answer(store: GraphStore, question: str) -> tuple[str, list[str]]:
    """The answer and citations of ``question`` on ``store`` (left open: not a ``with``, whose
    exit would close the store)."""
    a = KnowledgeAgent(store, default_text_embedder()).ask(question, admin=True)
    return a.answer, [c.node_id for c in a.citations]


def test_a_backup_taken_while_serving_restores_the_same_graph_and_answers(
    ops: Ops, tmp_path: Path
) -> None:
    runner = CliRunner()
    target = tmp_path / "backups" / "kg.rdb"
    taken = runner.invoke(cli_app, ["db", "backup", str(target), "--json"], env=ops.engine.env())
    if ops.engine.is_neo4j:  # Neo4j has its own tool, named in the refusal
        assert taken.exit_code != 0 and "neo4j-admin database dump" in _said(taken)
        return
    assert taken.exit_code == 0, taken.output
    question = "Who built the first compiler?"
    graph = _counts(ops.store), _evidence(ops.store)
    # the served store goes on changing after the snapshot; the backup does not
    _ask(ops, question, "frank")
    assert _counts(ops.store) != graph[0]
    in_use = runner.invoke(cli_app, ["db", "restore", str(target)], env=ops.engine.env())
    assert in_use.exit_code != 0 and "in use" in _said(in_use)
    not_a_backup = runner.invoke(
        cli_app, ["db", "restore", str(ops.root / "ada.md")], env=ops.engine.env()
    )
    assert not_a_backup.exit_code != 0 and "ada.md is not a backup" in _said(not_a_backup)

    restored_db = tmp_path / "restored" / "kg.db"
    other = {"KGRAG_STORE": f"falkordb-lite:///{restored_db}"}
    done = runner.invoke(cli_app, ["db", "restore", str(target), "--json"], env=other)
    assert done.exit_code == 0, done.output
    restored = Engine(ops.engine.name, restored_db.parent).open()
    try:
        assert (_counts(restored), _evidence(restored)) == graph
        assert _answer(restored, question) == _answer(ops.store, question)
    finally:
        restored.close()


def test_a_real_prometheus_scrapes_the_metrics(ops: Ops, tmp_path: Path) -> None:
    """Debian's Prometheus (scripts/setup.sh installs it) scrapes the served app once with the
    scraper's key; its query API then has the ask latency and ``up`` 1."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is not installed: run scripts/setup.sh"
    _ask(ops, "Who wrote the first program?", "alice")
    token = tmp_path / "token"
    token.write_text(ops.scraper["Authorization"].removeprefix("Bearer "), encoding="utf-8")
    with running(ops.app) as base:
        target = base.removeprefix("http://")
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: kgrag\n"
            f"    authorization: {{credentials_file: {token}}}\n"
            f"    static_configs: [{{targets: ['{target}']}}]\n",
            encoding="utf-8",
        )
        web = f"127.0.0.1:{free_port()}"
        log = (tmp_path / "prometheus.log").open("w")
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address={web}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            found: list[dict[str, object]] = []
            deadline = time.monotonic() + 90
            while not found:
                assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
                assert time.monotonic() < deadline, "Prometheus scraped nothing in 90 s"
                time.sleep(0.5)
                try:
                    r = httpx.get(
                        f"http://{web}/api/v1/query",
                        params={"query": 'sum(kgrag_ask_seconds_count{job="kgrag"})'},
                    )
                except httpx.TransportError:
                    continue
                if r.status_code == 200:
                    found = r.json()["data"]["result"]
            assert float(found[0]["value"][1]) >= 1  # type: ignore[index]
            up = httpx.get(f"http://{web}/api/v1/query", params={"query": 'up{job="kgrag"}'})
            assert up.json()["data"]["result"][0]["value"][1] == "1"
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.close()
