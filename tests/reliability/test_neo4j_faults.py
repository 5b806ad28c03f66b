"""Neo4j faults, for real, as a user of ``kgrag ingest`` and ``kgrag ask`` meets them: a wrong
password, a server that is not there, and the server killed in the middle of an ingestion job,
restarted, and the same command run again.

These tests stop and start a Neo4j server, so they own one: ``scripts/neo4j.sh`` started on free
ports with its data under the module's temporary folder (one server for the module: it takes
10-30 s to start). The server the rest of the suite uses is never touched."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kgrag.graph import open_store
from kgrag.graph.store import GraphStore
from kgrag.server.launch import free_port
from tests.reliability.support import REPO, GraphContents, contents, write_corpus
from tests.support.engines import wipe_neo4j

pytestmark = [pytest.mark.neo4j, pytest.mark.reliability]

KGRAG = Path(sys.executable).parent / "kgrag"
PASSWORD = "fault-test-password"
#: Long enough that the job still runs when the server is killed (about 20 s of work here).
CORPUS_FILES = 48


@dataclass
class OwnNeo4j:
    """A Neo4j server this module started (scripts/neo4j.sh) and may kill and restart."""

    folder: Path
    bolt: int
    http: int

    @property
    def uri(self) -> str:
        return f"neo4j://127.0.0.1:{self.bolt}"

    def script(self, command: str) -> None:
        env = {
            **os.environ,
            "NEO4J_DIR": str(self.folder),
            "NEO4J_BOLT_PORT": str(self.bolt),
            "NEO4J_HTTP_PORT": str(self.http),
            "NEO4J_PASSWORD": PASSWORD,
            "NEO4J_HEAP": "512m",
            "NEO4J_PAGECACHE": "256m",
        }
        done = subprocess.run(
            ["scripts/neo4j.sh", command],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"neo4j.sh {command}: {done.stderr[-3000:]}"

    def pid(self) -> int:
        return int((self.folder / "run" / "neo4j.pid").read_text().strip())

    def env(self, **overrides: str) -> dict[str, str]:
        """The environment of a ``kgrag`` subprocess pointed at this server."""
        return {
            **os.environ,
            "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1",
            "KGRAG_STORE": self.uri,
            "KGRAG_NEO4J_USER": "neo4j",
            "KGRAG_NEO4J_PASSWORD": PASSWORD,
            **overrides,
        }

    def open(self) -> GraphStore:
        return open_store(self.uri, neo4j_user="neo4j", neo4j_password=PASSWORD)

    def wipe(self) -> None:
        wipe_neo4j(self.uri, "neo4j", PASSWORD)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnNeo4j]:
    own = OwnNeo4j(tmp_path_factory.mktemp("own-neo4j") / "neo4j", free_port(), free_port())
    own.script("start")
    try:
        yield own
    finally:
        own.script("stop")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("neo4j-faults") / "corpus"
    write_corpus(folder, n=CORPUS_FILES, paragraphs=6)
    return folder


def _kgrag(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KGRAG), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.parametrize("command", ["ingest", "ask"])
def test_a_wrong_password_is_one_line_and_exit_4(
    server: OwnNeo4j, corpus: Path, tmp_path: Path, command: str
) -> None:
    args = [str(corpus)] if command == "ingest" else ["Who inspected the Valve V-7?"]
    done = _kgrag(command, *args, env=server.env(KGRAG_NEO4J_PASSWORD="wrong"), cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    line = _one_error_line(done.stderr)
    assert server.uri in line and "KGRAG_NEO4J_PASSWORD" in line and "wrong" not in line


@pytest.mark.parametrize("command", ["ingest", "ask"])
def test_an_unreachable_server_is_one_line_and_exit_4(
    corpus: Path, tmp_path: Path, command: str
) -> None:
    closed = f"neo4j://127.0.0.1:{free_port()}"  # nothing listens there
    args = [str(corpus)] if command == "ingest" else ["Who inspected the Valve V-7?"]
    env = {**os.environ, "KGRAG_STORE": closed, "KGRAG_NEO4J_PASSWORD": PASSWORD}
    started = time.monotonic()
    done = _kgrag(command, *args, env=env, cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    line = _one_error_line(done.stderr)
    assert closed in line and "server is running" in line
    assert time.monotonic() - started < 120  # retried with backoff, then given up


def _complete_documents(store: GraphStore) -> dict[str, int]:
    rows = store.read_freeform(
        "MATCH (d:Document) WHERE d.status = 'complete' RETURN d.id AS id, d.chunk_count AS n"
    )
    return {r["id"]: r["n"] for r in rows}


def test_server_killed_mid_ingestion_then_restarted_and_rerun_equals_clean_run(
    server: OwnNeo4j, corpus: Path, tmp_path: Path
) -> None:
    # The graph of a clean ingestion, kept as data (one database: emptied afterwards).
    server.wipe()
    clean_run = _kgrag("ingest", str(corpus), "-q", env=server.env(), cwd=tmp_path)
    assert clean_run.returncode == 0, clean_run.stderr
    store = server.open()
    try:
        clean: GraphContents = contents(store)
    finally:
        store.close()
    assert len(clean.nodes["Document"]) == CORPUS_FILES
    server.wipe()

    job = subprocess.Popen(
        [str(KGRAG), "ingest", str(corpus), "--json"],
        cwd=tmp_path,
        env=server.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = server.open()
    try:  # wait until some documents are committed, then kill the server under the job
        deadline = time.monotonic() + 300
        committed: dict[str, int] = {}
        while len(committed) < 4:
            assert job.poll() is None, "the job ended before the server was killed"
            assert time.monotonic() < deadline, "no document was committed in 300 s"
            time.sleep(0.2)
            committed = _complete_documents(store)
        os.kill(server.pid(), signal.SIGKILL)
    finally:
        store.close()
    out, err = job.communicate(timeout=300)
    assert job.returncode == 4, err
    assert out == ""  # no report: the job failed
    line = _one_error_line(err)  # --json: no progress bars on stderr
    assert "Neo4j" in line and "unavailable" in line and "run the job again" in line, line

    server.script("start")  # same folder, same ports
    store = server.open()
    try:
        after_crash = _complete_documents(store)
    finally:
        store.close()
    # nothing committed before the kill is lost
    assert {k: after_crash.get(k) for k in committed} == committed
    assert len(after_crash) < CORPUS_FILES, "the kill did not land inside the job"

    rerun = _kgrag("ingest", str(corpus), "--json", "-q", env=server.env(), cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout)
    assert report["ingested"] + report["skipped"] == CORPUS_FILES
    assert report["skipped"] >= len(committed)
    store = server.open()
    try:
        recovered = contents(store)
    finally:
        store.close()
    assert recovered == clean, "\n".join(clean.differences(recovered))
