"""The HTTP API fuzzed against its own OpenAPI document (issue 21: one schemathesis request once
crashed the embedded FalkorDB).

``kgrag serve`` runs on 127.0.0.1 on a small embedded store (two Markdown files ingested through
the API, one question asked), once without authentication (the local principal) and once with
authentication on: an API key with the admin and impersonate roles (so every operation, the
query links that name the asker included, can succeed; what each role is refused is
tests/security/test_authn.py). Schemathesis (its CLI, ``st run``, in a subprocess: the one
entry point that runs every phase, the stateful one included) reads the server's
``/openapi.json`` and sends every operation schema-valid and schema-invalid requests, with every
check on, derandomized generation, a fixed seed and one worker:

1. all phases (coverage, fuzzing, stateful) on every operation;
2. the stateful phase alone on ``/ask`` and the query endpoints (see ``_RUNS``).

The test fails on any failed check (a 5xx, a status, content type or header the document does
not declare, a body its schema rejects, a schema-valid request refused, a schema-invalid one
accepted, a 405 without ``Allow``, an operation that ignores the missing key, ...), on any 5xx,
on a store the server had to reopen (``store_reopens`` of ``/healthz``), on a traceback in the
server log, and when fewer than :data:`MIN_REQUESTS` requests were sent. It prints the number of
requests, how many were 5xx, and the statuses seen, per phase and per operation."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis  # the test dependency group pins it: the generated requests depend on it

from kgrag.auth.principal import Role
from kgrag.server.launch import serve_subprocess
from tests.support.credentials import new_key

#: The bearer credential every request carries: the API key, or (without authentication, where
#: it is not checked) a placeholder, which a multipart upload needs all the same: the proof it
#: is not a cross-site form.
LOCAL_TOKEN = "local"
SEED = 21
#: Requests the two runs must send together, at least.
MIN_REQUESTS = 1000
#: A response slower than this fails (``max_response_time``, on with ``--checks all`` at 10 s by
#: default; this machine is shared and loaded, and the first question loads models).
MAX_RESPONSE_S = 30

#: (name, examples per operation, extra ``st run`` options). Schemathesis 4 starts stateful
#: scenarios only at operations it judges "reliable" roots. Its dependency analysis takes the
#: ``session_id`` of POST /ask for a reference to a "Session" resource that no operation creates
#: (it is a conversation id the client chooses), so with POST /ingest in the document every
#: scenario starts at /ingest (then /jobs/{id}). The second run leaves /ingest out, so scenarios
#: start at /ask and follow its links to the trace, the audit and follow-up questions.
_RUNS: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("all-phases", 50, ()),
    ("stateful-ask", 50, ("--phases", "stateful", "--include-path-regex", "^/(ask|queries/)")),
)

#: Per-operation settings. ``positive_data_acceptance`` expects a schema-valid request to be
#: accepted; an upload is schema-valid with any bytes, but the server must refuse (422
#: ``attachment``, naming the file) what is not a decodable image or recording of a known type,
#: which no JSON Schema can express. Only that status is added, only for that operation; every
#: other check stays on for it.
_CONFIG = """
[[operations]]
include-path = "/ask/upload"
checks.positive_data_acceptance.expected-statuses = [
    "2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx",
]
"""


@dataclass
class Server:
    base: str
    tmp: Path
    log: Path
    token: str
    mode: str

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base, headers={"Authorization": f"Bearer {self.token}"}, timeout=300
        )

    def openapi(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.base}/openapi.json", timeout=60).json())

    def health(self) -> dict[str, Any]:
        r = httpx.get(f"{self.base}/healthz", timeout=60)
        assert r.status_code == 200, r.text
        return dict(r.json())


@pytest.fixture(scope="module", params=["local", "api-key"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    mode = str(request.param)
    tmp = tmp_path_factory.mktemp(f"fuzz-{mode}")
    root = tmp / "docs"
    root.mkdir()
    (root / "roster.md").write_text(
        "# Maintenance roster\n\nThe Feed Pump FP-2 is maintained by Grace Hopper.\n"
    )
    (root / "cooling.md").write_text(
        "# Cooling notes\n\nThe Cooling Fan CF-9 is maintained by Hedy Lamarr.\n"
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_API", "KGRAG_JWT"))},
        "KGRAG_DATA_DIR": str(tmp / "data"),
        "OMP_NUM_THREADS": "1",
    }
    token = LOCAL_TOKEN
    if mode == "api-key":
        keys_file = tmp / "api-keys.json"
        _, token = new_key(keys_file, "fuzzer", Role.ADMIN, Role.IMPERSONATE)
        env["KGRAG_API_KEYS_FILE"] = str(keys_file)
    log_path = tmp / "server.log"
    with serve_subprocess(
        f"falkordb-lite:///{tmp}/kg.db", env, log_path, ["--ingest-root", str(root)]
    ) as up:
        srv = Server(up.base, tmp, log_path, token, mode)
        with srv.client() as c:
            job = c.post("/ingest", json={"paths": ["."]}).json()
            deadline = time.monotonic() + 300
            while job["status"] not in ("done", "failed"):
                assert time.monotonic() < deadline, job
                time.sleep(0.3)
                job = c.get(f"/jobs/{job['id']}").json()
            assert job["status"] == "done" and job["report"]["ingested"] == 2, job
            # the first question loads the models: not inside a timed fuzzing request
            first = c.post("/ask", json={"question": "Who maintains the Feed Pump FP-2?"})
            assert first.status_code == 200, first.text
        yield srv


@dataclass
class Run:
    name: str
    returncode: int
    output: str
    #: (phase, method, path template, status or None when no response came)
    requests: list[tuple[str, str, str, int | None]]


def _template(uri: str) -> str:
    path = re.sub(r"^https?://[^/]+", "", uri).split("?", 1)[0]
    path = re.sub(r"^/jobs/.*", "/jobs/{job_id}", path)
    path = re.sub(r"^/documents/.*", "/documents/{document_id}", path)
    return re.sub(r"^/queries/[^/]*/", "/queries/{query_id}/", path)


def _requests(report: Path) -> list[tuple[str, str, str, int | None]]:
    """Every request schemathesis sent, from its NDJSON event report."""
    out = []
    for line in report.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if finished is None:
            continue
        for interaction in finished["recorder"].get("interactions", {}).values():
            request, response = interaction["request"], interaction.get("response")
            out.append(
                (
                    finished["phase"],
                    request["method"],
                    _template(request["uri"]),
                    response["status_code"] if response else None,
                )
            )
    return out


def _fuzz(server: Server, name: str, examples: int, extra: tuple[str, ...]) -> Run:
    config = server.tmp / "schemathesis.toml"
    config.write_text(_CONFIG)
    report = server.tmp / f"{name}.ndjson"
    cmd = [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "run",
        f"{server.base}/openapi.json",
        "--header",
        f"Authorization: Bearer {server.token}",
        "--checks",
        "all",
        "--max-response-time",
        str(MAX_RESPONSE_S),
        "--max-examples",
        str(examples),
        "--generation-deterministic",
        "--seed",  # st prints "not used in the deterministic mode", but it seeds all the same
        str(SEED),
        "--workers",
        "1",
        "--request-timeout",
        "120",
        "--report",
        "ndjson",
        "--report-ndjson-path",
        str(report),
        "--no-color",
        *extra,
    ]
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        cmd, cwd=server.tmp, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    return Run(name, done.returncode, done.stdout + done.stderr, _requests(report))


def test_the_api_survives_fuzzing_and_keeps_its_openapi_promises(server: Server) -> None:
    before = server.health()
    runs = [_fuzz(server, name, examples, extra) for name, examples, extra in _RUNS]
    after = server.health()

    requests = [r for run in runs for r in run.requests]
    fives = sum(1 for *_, status in requests if status is None or status >= 500)
    print(
        f"\n[{server.mode}] schemathesis {schemathesis.__version__} sent {len(requests)} "
        f"requests, {fives} answered 5xx or not at all"
    )
    for run in runs:
        print(f"  run {run.name}: {len(run.requests)} requests, exit code {run.returncode}")
        for phase, count in sorted(Counter(p for p, *_ in run.requests).items()):
            print(f"    phase {phase}: {count}")
    print("statuses seen:", dict(sorted(Counter(s for *_, s in requests).items(), key=str)))
    declared = {(m.upper(), p) for p, item in server.openapi()["paths"].items() for m in item}
    per_operation: dict[tuple[str, str], Counter[int | None]] = {}
    for _, method, path, status in requests:
        key = (method, path) if (method, path) in declared else ("(undeclared method)", "")
        per_operation.setdefault(key, Counter())[status] += 1
    print("per operation (status: count):")
    for (method, path), statuses in sorted(per_operation.items()):
        print(f"  {method} {path}: {dict(sorted(statuses.items(), key=str))}")

    for run in runs:
        assert run.returncode == 0, f"schemathesis run {run.name} failed:\n{run.output[-20000:]}"
    server_errors = [r for r in requests if r[3] is None or r[3] >= 500]
    assert not server_errors, server_errors[:20]
    assert len(requests) >= MIN_REQUESTS, len(requests)
    # the stateful phase followed the links: jobs polled, traces and audits of answers read
    stateful = {(m, p, s) for phase, m, p, s in requests if phase == "stateful"}
    assert ("GET", "/jobs/{job_id}", 200) in stateful, stateful
    for page in ("trace", "trace.html", "audit", "audit.html"):
        assert ("GET", f"/queries/{{query_id}}/{page}", 200) in stateful, (page, stateful)
    assert ("POST", "/ask/stream", 200) in stateful, stateful
    # the store never died under a request: the server did not have to reopen it
    assert before["store_reopens"] == after["store_reopens"] == 0, (before, after)
    log = server.log.read_text()
    assert "Traceback" not in log, log[log.index("Traceback") - 2000 :][:6000]
