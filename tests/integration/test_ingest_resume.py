"""A `kgrag ingest` job killed with SIGKILL mid-way and started again ends with exactly the graph
of an uninterrupted run into a fresh store: same document and entity ids, same node and
relationship counts per label and type, no document left unfinished. On both engines; Neo4j
Community has one database, so the resumed graph is kept as data and the database emptied before
the uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kgrag.agent.agent import KnowledgeAgent
from kgrag.modalities.text import default_text_embedder
from tests.integration.ingest_media import KGRAG, REPO, orphans, snapshot
from tests.support.engines import Engine, engine_for

FILES = 30
PEOPLE = (
    "Ada Lovelace",
    "Charles Babbage",
    "Grace Hopper",
    "Alan Turing",
    "Howard Aiken",
    "John von Neumann",
)
PLACES = ("London", "Cambridge", "Princeton", "Manchester", "Harvard University")
MACHINES = ("Analytical Engine", "Harvard Mark I", "Feed Pump FP-2", "Pressure Valve PV-7")


def write_corpus(folder: Path) -> None:
    folder.mkdir()
    for i in range(FILES):
        person = PEOPLE[i % len(PEOPLE)]
        other = PEOPLE[(i * 5 + 1) % len(PEOPLE)]
        place = PLACES[i % len(PLACES)]
        machine = MACHINES[i % len(MACHINES)]
        surname = person.split()[-1]
        sentences = [
            f"Report {i}: {person} travelled to {place} to study the {machine}.",
            f"In {place}, {surname} met {other} and they discussed the {machine} for hours.",
            f"The notes of {other} say that {surname} returned the following week.",
        ]
        body = " ".join(sentences * 6)  # a few chunks per file: each job takes a while
        (folder / f"report_{i:02d}.txt").write_text(body + "\n", encoding="utf-8")


def env_for(engine: Engine) -> dict[str, str]:
    return {
        **os.environ,
        **engine.env(),
        "KGRAG_BATCH_SIZE": "3",  # small batches: documents complete one after another
        "OMP_NUM_THREADS": "1",
    }


def ingest(folder: Path, engine: Engine) -> dict[str, object]:
    done = subprocess.run(
        [*KGRAG, "ingest", str(folder), "--json"],
        env=env_for(engine),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def ingest_and_kill(folder: Path, engine: Engine, after_documents: int) -> int:
    """Start the job, SIGKILL it (and the embedded server it started) once ``after_documents``
    documents are complete; returns how many were reported complete."""
    proc = subprocess.Popen(
        [*KGRAG, "--debug", "ingest", str(folder), "--json"],
        env=env_for(engine),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    complete = 0
    deadline = time.monotonic() + 300
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if "kgrag.ingest.writer" in line and " complete (" in line:
                complete += 1
                if complete >= after_documents:
                    break
            assert time.monotonic() < deadline, "the job did not progress"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    return complete


def graph(engine: Engine) -> dict[str, Any]:
    """Everything compared between the resumed and the uninterrupted graph, as data."""
    related = (
        "MATCH (x:Entity)-[r:RELATED]->(y:Entity) "
        "RETURN x.id AS a, y.id AS b, r.weight AS w ORDER BY a, b"
    )
    mentions = (
        "MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) "
        "RETURN c.id AS c, e.id AS e, m.count AS n ORDER BY c, e"
    )
    names = "MATCH (e:Entity) RETURN e.id AS id, e.name AS name ORDER BY id"
    with engine.open() as store:
        return {
            "snapshot": snapshot(store),
            "related": store.read_freeform(related),
            "mentions": store.read_freeform(mentions),
            "names": store.read_freeform(names),
            "orphans": orphans(store),
        }


def test_killed_job_resumes_to_the_graph_of_an_uninterrupted_run(engine: Engine) -> None:
    tmp_path = engine.folder
    folder = tmp_path / "reports"
    write_corpus(folder)
    resumed_engine = engine_for(engine.name, tmp_path / "resumed")

    seen = ingest_and_kill(folder, resumed_engine, after_documents=8)
    assert seen == 8
    with resumed_engine.open() as store:
        partial = snapshot(store)
    complete = [d for d, status in partial["documents"] if status == "complete"]
    assert 0 < len(complete) < FILES, partial["documents"]

    second = ingest(folder, resumed_engine)
    assert second["failed"] == 0
    assert second["skipped"] == len(complete)
    assert second["ingested"] == FILES - len(complete)
    resumed = graph(resumed_engine)

    fresh_engine = engine_for(engine.name, tmp_path / "fresh")
    fresh_engine.reset()  # Neo4j: the one database, emptied; embedded: a new file
    first_time = ingest(folder, fresh_engine)
    assert (first_time["ingested"], first_time["skipped"]) == (FILES, 0)
    fresh = graph(fresh_engine)

    a, b = resumed["snapshot"], fresh["snapshot"]
    assert a["documents"] == b["documents"]
    assert len(a["documents"]) == FILES
    assert {s for _, s in a["documents"]} == {"complete"}
    assert a["entities"] == b["entities"]
    assert a["labels"] == b["labels"]
    assert a["relationships"] == b["relationships"]
    for query in ("related", "mentions", "names"):
        assert resumed[query] == fresh[query], query
    assert (
        resumed["orphans"]
        == fresh["orphans"]
        == {
            "chunks": 0,
            "images": 0,
            "entities": 0,
            "unfinished": 0,
            "related_zero": 0,
        }
    )


def test_leftovers_of_a_killed_job_are_removed_before_the_next_job(engine: Engine) -> None:
    """What a kill leaves, written with the writer's own statements: a document half written, one
    half deleted, their chunks and entities only they mention, an entity nothing mentions; the
    next job removes them all."""
    tmp_path = engine.folder
    with engine.open() as store:
        for n, status in enumerate(("ingesting", "deleting")):
            doc = f"doc_{status}"
            store.write(
                "documents_begin",
                {
                    "rows": [
                        {
                            "id": doc,
                            "uri": str(tmp_path / f"gone{n}.txt"),
                            "sha256": str(n) * 64,
                            "modality": "text",
                            "mime": "text/plain",
                            "title": "gone",
                            "bytes": 10,
                            "acl": ["*"],
                            "tags": [],
                            "ingested_at": "2026-01-01T00:00:00+00:00",
                            "language": None,
                            "summary": None,
                        }
                    ]
                },
            )
            if status == "deleting":
                store.write("document_mark_deleting", {"id": doc})
            chunk = {"id": f"{doc}:c0", "text": "x", "position": 0, "page": None}
            store.write_rows(
                "chunk_upsert",
                [{**chunk, "start_s": None, "end_s": None, "embedding": [0.1] * 384}],
                params={"document_id": doc},
            )
            entity = {"id": f"zed {status}", "name": "Zed", "name_rank": 1, "type": "PERSON"}
            store.write_rows("entity_upsert", [entity])
            store.write_rows(
                "mention_upsert", [{"chunk_id": f"{doc}:c0", "entity_id": entity["id"], "count": 1}]
            )
        lonely = {"id": "never mentioned", "name": "Never", "name_rank": 1, "type": "OTHER"}
        store.write_rows("entity_upsert", [lonely])
        assert orphans(store)["unfinished"] == 2
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.txt").write_text("Grace Hopper worked at Harvard University.", "utf-8")
    result = ingest(folder, engine)
    assert (result["ingested"], result["failed"]) == (1, 0)
    with engine.open() as store:
        snap = snapshot(store)
        assert len(snap["documents"]) == 1
        assert not {"doc_ingesting", "doc_deleting"} & {d for d, _ in snap["documents"]}
        assert not {"zed ingesting", "zed deleting", "never mentioned"} & set(snap["entities"])
        assert "grace hopper" in snap["entities"]
        assert orphans(store) == {
            "chunks": 0,
            "images": 0,
            "entities": 0,
            "unfinished": 0,
            "related_zero": 0,
        }


#: Another ingestion job, in its own process, caught half-way through a document: it registers
#: its job (store.ingest_job), begins document `doc_running`, says so and waits for stdin.
RUNNING_JOB = """
import json, sys
from kgrag.config import Settings
from kgrag.graph import open_settings_store
store = open_settings_store(Settings())
with store.ingest_job(lambda: []):
    store.write("documents_begin", {"rows": [json.loads(sys.argv[1])]})
    print("running", flush=True)
    sys.stdin.read()
"""


def test_a_job_leaves_the_unfinished_documents_of_a_running_job_alone(engine: Engine) -> None:
    """Two jobs on one store from two processes (`kgrag serve` and `kgrag ingest`, say): the
    second does not take the first's document in progress for a crash's leftovers; once the
    first is killed, the next job removes what it left."""
    doc = {
        "id": "doc_running",
        "uri": str(engine.folder / "running.txt"),
        "sha256": "1" * 64,
        "modality": "text",
        "mime": "text/plain",
        "title": "running",
        "bytes": 10,
        "acl": ["*"],
        "tags": [],
        "ingested_at": "2026-01-01T00:00:00+00:00",
        "language": None,
        "summary": None,
    }
    other = subprocess.Popen(
        [sys.executable, "-c", RUNNING_JOB, json.dumps(doc)],
        env=env_for(engine),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "running"
        first, second = engine.folder / "first", engine.folder / "second"
        for folder, text in (
            (first, "Grace Hopper visited Harvard University."),
            (second, "Alan Turing worked in Manchester."),
        ):
            folder.mkdir()
            (folder / "a.txt").write_text(text, "utf-8")
        with KnowledgeAgent(engine.open(), default_text_embedder()) as agent:  # in-process
            result = agent.ingest([str(first)])
            assert (result.ingested, result.failed) == (1, 0)
            running = [d for d in snapshot(agent.store)["documents"] if d[0] == "doc_running"]
            assert running == [("doc_running", "ingesting")]  # left to the running job
    finally:
        os.killpg(other.pid, signal.SIGKILL)  # the job dies half-way (and an embedded server)
        other.wait(timeout=60)
    with KnowledgeAgent(engine.open(), default_text_embedder()) as agent:
        result = agent.ingest([str(second)])
        assert (result.ingested, result.failed) == (1, 0)
        store = agent.store
        snap = snapshot(store)
        assert "doc_running" not in {d for d, _ in snap["documents"]}  # the dead job's, removed
        assert len(snap["documents"]) == 2
        assert "IngestJob" not in snap["labels"]  # no lease outlives its job
        assert orphans(store)["unfinished"] == 0


def test_jobs_of_one_process_recover_only_when_alone(engine: Engine) -> None:
    """Two jobs at once in one process (the HTTP server's): the first removes a crash's
    leftovers, the second does not; the next job alone does again."""
    calls: list[int] = []

    def recover() -> list[str]:
        calls.append(1)
        return ["left"]

    with engine.open() as store:
        with store.ingest_job(recover) as first, store.ingest_job(recover) as second:
            assert first == ["left"] and second == [] and len(calls) == 1
        with store.ingest_job(recover) as third:
            assert third == ["left"] and len(calls) == 2
        assert "IngestJob" not in snapshot(store)["labels"]
