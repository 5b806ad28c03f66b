"""``kgrag ingest --shard I/N``: N processes split one folder without coordination and, run at
the same time against one store, build exactly the graph one process builds. On Neo4j the
processes share entities (every document names the same people, places and parts), so they
MERGE the same Entity nodes and RELATED relationships concurrently: creation races under the
unique constraints, deadlocks, and the migrations of a fresh database race too.

Also here: the registry of ingestion jobs on Neo4j (several processes or machines), which lets
only a job running alone remove what crashed jobs left unfinished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from kgrag.graph import neo4j_store
from tests.reliability.support import contents, write_corpus
from tests.support.engines import NEO4J, Engine, engine_for

KGRAG = Path(sys.executable).parent / "kgrag"
#: Enough documents that both shards run for a while, each naming the same 15 entities.
CORPUS_FILES = 24


def _start(args: list[str], cwd: Path, engine: Engine) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(KGRAG), "ingest", *args, "--json", "-q"],
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **engine.env()},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _report(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}: {err[-3000:]}"
    return dict(json.loads(out))


@pytest.mark.parametrize("value", ["0/2", "3/2", "1/0", "x"])
def test_a_bad_shard_is_a_usage_error_naming_the_option(value: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(KGRAG), "ingest", str(tmp_path), "--shard", value],
        cwd=tmp_path,
        env={**os.environ, "KGRAG_STORE": f"falkordb-lite:///{tmp_path}/kg.db"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "'--shard'" in done.stderr and value in done.stderr, done.stderr
    assert not (tmp_path / "kg.db").exists()  # refused before any store was opened


def test_two_shards_at_once_build_the_graph_of_one_process(engine: Engine, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, n=CORPUS_FILES, paragraphs=6)

    # The reference: one process, no shards. Neo4j has one database, so its graph is kept as
    # data and the database emptied before the shards run (the embedded stores are two files).
    (tmp_path / "one").mkdir()
    one = Engine(engine.name, tmp_path / "one")
    one.reset()
    started = time.perf_counter()
    single = _report(_start([str(corpus)], tmp_path / "one", one))
    one_s = time.perf_counter() - started
    assert single["ingested"] == CORPUS_FILES and single["shard"] is None
    store = one.open()
    try:
        reference = contents(store)
    finally:
        store.close()
    assert len(reference.nodes["Entity"]) >= 10
    assert sum(1 for r in reference.relationships if r[0] == "RELATED") >= 40

    (tmp_path / "two").mkdir()
    two = Engine(engine.name, tmp_path / "two")
    two.reset()  # on Neo4j: a fresh database, so the two processes also race to migrate it
    started = time.perf_counter()
    procs = [_start([str(corpus), "--shard", f"{i}/2"], tmp_path / "two", two) for i in (1, 2)]
    reports = [_report(p) for p in procs]
    two_s = time.perf_counter() - started

    assert [r["shard"] for r in reports] == ["1/2", "2/2"]
    ingested = [int(str(r["ingested"])) for r in reports]
    assert sum(ingested) == CORPUS_FILES and min(ingested) > 0, reports
    assert [r["other_shards"] for r in reports] == [CORPUS_FILES - n for n in ingested]
    store = two.open()
    try:
        sharded = contents(store)
    finally:
        store.close()
    # contents() refuses two nodes of one id, so a pair related twice is two relationships
    # between the same two nodes (a MERGE race between the processes), not two entity nodes
    related = Counter((a, b) for rel, a, b, _ in sharded.relationships if rel == "RELATED")
    doubled = sorted(pair for pair, n in related.items() if n > 1)
    assert doubled == [], f"{len(doubled)} entity pairs have two RELATED relationships: {doubled}"
    assert sharded == reference, "\n".join(reference.differences(sharded))
    print(
        f"\n{engine.name}: 1 process {one_s:.1f} s, 2 shards at once {two_s:.1f} s "
        f"(jobs {single['seconds']} s vs {[r['seconds'] for r in reports]} s)"
    )


@pytest.mark.neo4j
def test_neo4j_ingestion_jobs_of_other_processes_hold_recovery_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_for(NEO4J, tmp_path)
    engine.reset()
    first, second = engine.open(), engine.open()  # two drivers, as two processes have
    try:
        calls: list[str] = []

        def recover(who: str) -> list[str]:
            calls.append(who)
            return ["left"]

        # a job that finds another live job leaves the unfinished documents to it
        with (
            first.ingest_job(lambda: recover("a")) as a,
            second.ingest_job(lambda: recover("b")) as b,
        ):
            assert a == ["left"] and b == [] and calls == ["a"]
        with second.ingest_job(lambda: recover("c")) as c:  # alone again
            assert c == ["left"] and calls == ["a", "c"]

        # a job waits, before writing, until the job that recovers is done
        recovering, release = threading.Event(), threading.Event()
        order: list[str] = []

        def slow_recover() -> list[str]:
            recovering.set()
            assert release.wait(30)
            order.append("recovered")
            return []

        def job(store: object, recover_fn: object, name: str) -> None:
            with store.ingest_job(recover_fn):  # type: ignore[attr-defined]
                order.append(name)

        ta = threading.Thread(target=job, args=(first, slow_recover, "a writes"))
        ta.start()
        assert recovering.wait(30)

        def b_recovers() -> list[str]:
            order.append("b recovers")
            return recover("b")

        tb = threading.Thread(target=job, args=(second, b_recovers, "b writes"))
        tb.start()
        time.sleep(1.5)
        assert order == []  # b registered, saw a recovering, and waits
        release.set()
        ta.join(30)
        tb.join(30)
        assert order[0] == "recovered"
        assert sorted(o for o in order[1:] if o != "b recovers") == ["a writes", "b writes"]
        # b recovers only if it claims once a is gone (nothing of a's can be in progress then)
        if "b recovers" in order:
            assert order.index("a writes") < order.index("b recovers") < order.index("b writes")

        # a job killed on another machine (its heartbeat stops) holds nothing back once its lease
        # is stale (one on this machine is dead as soon as its process is gone)
        monkeypatch.setattr(neo4j_store, "JOB_LEASE_TTL_S", 1.0)
        first.write("ingest_job_begin", {"id": "killed-job", "host": "another-machine", "pid": 1})
        time.sleep(1.5)
        with second.ingest_job(lambda: recover("d")) as d:
            assert d == ["left"]
        jobs = first.read_freeform("MATCH (j:IngestJob) RETURN j.id AS id")
        assert jobs == []  # the dead lease is removed, and the job's own ended with it
    finally:
        first.close()
        second.close()
