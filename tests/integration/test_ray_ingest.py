"""Ingestion on Ray (kgrag.ingest.ray_job) gives the graph of the serial job, on both engines.

The graph identity is checked on both engines, the kill and the bad files on the embedded one.
One local Ray (2 CPUs) serves the whole module: the in-process jobs use it, and the ``kgrag
ingest --ray`` subprocesses join it through ``RAY_ADDRESS`` (as under ``ray job submit``), so
Ray starts once. Graphs are compared by their canonical dump (kgrag.graph.dump): labels and
types with counts, every node and relationship key, a digest of every property, vectors within
1e-4.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from kgrag.agent.agent import KnowledgeAgent
from kgrag.demo.corpus import make_corpus
from kgrag.graph.dump import GraphDump, differences, dump
from kgrag.ingest.pipeline import IngestReport, ProgressCallback, ProgressEvent
from tests.integration.ingest_media import KGRAG, REPO, drawing
from tests.support.engines import FALKORDB, Engine, engine_for

REPORTS = 12
PEOPLE = ("Ada Lovelace", "Charles Babbage", "Grace Hopper", "Alan Turing")
PLACES = ("London", "Cambridge", "Princeton", "Manchester")


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A local Ray with 2 CPUs for the module; its address for subprocesses."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def demo_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo") / "corpus"
    folder.mkdir()
    make_corpus(folder)
    return folder


def ingest_dump(
    engine: Engine,
    data_dir: Path,
    paths: list[str],
    ray_job: bool,
    progress: ProgressCallback | None = None,
    **settings: object,
) -> tuple[IngestReport, GraphDump]:
    agent = KnowledgeAgent.open(engine.settings(data_dir=data_dir, **settings))
    try:
        report = agent.ingest(paths, progress=progress, ray=ray_job or None)
        return report, dump(agent.store)
    finally:
        agent.store.close()


def test_ray_job_builds_the_graph_of_the_serial_job_on_the_demo_corpus(
    engine: Engine, ray_address: str, demo_corpus: Path
) -> None:
    data = engine.folder / "data"  # the same image folder: image URIs are part of the graph
    serial, serial_graph = ingest_dump(engine, data, [str(demo_corpus)], ray_job=False)
    ray_engine = engine_for(engine.name, engine.folder / "ray")
    ray_engine.reset()  # Neo4j: the one database, emptied; embedded: a new file
    events: list[ProgressEvent] = []
    on_ray, ray_graph = ingest_dump(
        ray_engine, data, [str(demo_corpus)], ray_job=True, progress=events.append
    )

    assert serial.failed == on_ray.failed == 0, (serial.failures, on_ray.failures)
    assert serial.ingested == on_ray.ingested == len(list(demo_corpus.iterdir()))
    assert sorted(serial.document_ids) == sorted(on_ray.document_ids)
    # every modality of the demo went through the actors (Whisper, CLIP, MiniLM)
    assert {"Segment", "Image", "Chunk", "Entity"} <= serial_graph.labels.keys()
    assert on_ray.stage_seconds["transcribe"] > 0 and on_ray.stage_seconds["embed_image"] > 0
    # progress: files parsed, documents and passages written (the last event of each stage)
    last = {e.stage: (e.done, e.total) for e in events}
    files = len(list(demo_corpus.iterdir()))
    assert last["parse"] == last["write"] == (files, files)
    passages = serial_graph.labels["Chunk"]  # segments are chunks too
    assert last["passages"] == (passages, passages)
    assert differences(serial_graph, ray_graph) == []
    assert serial_graph.digest == ray_graph.digest


#: The MuSiQue passages of the shared data (one text file each); the slice test needs them.
MUSIQUE = REPO.parent / "shared" / "data" / "musique_corpus.json"
MUSIQUE_PASSAGES = 30


def test_ray_job_with_two_writers_builds_the_serial_graph_of_a_musique_slice(
    engine: Engine, ray_address: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """30 MuSiQue passages in batches of ~5: on Neo4j two writer threads of the Ray job write
    batches side by side (shared entities, MERGE races, deadlocks retried); the embedded engine
    keeps one writer. Either way the graph is the serial job's."""
    folder = tmp_path / "musique"
    folder.mkdir()
    for n, passage in enumerate(json.loads(MUSIQUE.read_text("utf-8"))[:MUSIQUE_PASSAGES]):
        text = f"{passage['title']}\n\n{passage['text']}\n"
        (folder / f"p{n:03d}.txt").write_text(text, encoding="utf-8")
    data = engine.folder / "data"
    serial, serial_graph = ingest_dump(engine, data, [str(folder)], False, batch_size=5)
    ray_engine = engine_for(engine.name, engine.folder / "ray")
    ray_engine.reset()
    with caplog.at_level(logging.INFO, logger="kgrag.ingest.writer"):
        on_ray, ray_graph = ingest_dump(
            ray_engine, data, [str(folder)], True, batch_size=5, writers=2
        )

    assert serial.failed == on_ray.failed == 0, on_ray.failures
    assert serial.ingested == on_ray.ingested == MUSIQUE_PASSAGES
    assert serial_graph.labels["Entity"] > 100 and serial_graph.types["RELATED"] > 100
    writer_threads = {r.threadName for r in caplog.records if " complete (" in r.getMessage()}
    assert len(writer_threads) == (2 if engine.is_neo4j else 1), writer_threads
    assert differences(serial_graph, ray_graph) == []


def write_reports(folder: Path) -> None:
    folder.mkdir()
    for i in range(REPORTS):
        person, other = PEOPLE[i % 4], PEOPLE[(i * 3 + 1) % 4]
        place = PLACES[i % 4]
        text = (
            f"Report {i}: {person} travelled to {place}. In {place}, {person.split()[-1]} met "
            f"{other} and they discussed the engine for hours. "
        )
        (folder / f"report_{i:02d}.txt").write_text(text * 8 + "\n", encoding="utf-8")
    png = drawing(folder / "picture.png", "red", "circle").read_bytes()
    (folder / "picture.png").write_bytes(png[: len(png) // 3])  # a corrupt picture
    (folder / "garbled.txt").write_bytes(bytes(range(0x80, 0x100)) + bytes(range(1, 32)) * 8)


def cli(engine: Engine, address: str, folder: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        **engine.env(),
        "KGRAG_DATA_DIR": str(engine.folder / "data"),
        "KGRAG_BATCH_SIZE": "2",  # small batches: documents complete one after another
        "RAY_ADDRESS": address,  # as `ray job submit` sets it
    }
    return subprocess.Popen(
        [*KGRAG, "--debug", "ingest", str(folder), "--ray", "--json"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_killed_ray_job_resumes_to_the_serial_graph_and_bad_files_fail_alone(
    tmp_path: Path, ray_address: str
) -> None:
    """On the embedded engine only (CI time): the resume is the serial job's own recovery and
    writer, which test_ingest_resume.py checks on both engines."""
    engine = engine_for(FALKORDB, tmp_path)
    folder = engine.folder / "reports"
    write_reports(folder)
    resumed = engine_for(engine.name, engine.folder / "resumed")
    resumed.reset()

    proc = cli(resumed, ray_address, folder)  # SIGKILLed once 3 documents are complete
    complete, deadline = 0, time.monotonic() + 300
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            if "kgrag.ingest.writer" in line and " complete (" in line:
                complete += 1
                if complete == 3:
                    break
            assert time.monotonic() < deadline, "the job did not progress"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert complete == 3

    proc = cli(resumed, ray_address, folder)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err[-3000:]  # some files failed
    report = json.loads(out)
    failed = {Path(f["path"]).name: f["reason"] for f in report["failures"]}
    assert set(failed) == {"picture.png", "garbled.txt"}, failed
    assert "legible" in failed["garbled.txt"] and "image" in failed["picture.png"]
    assert 3 <= report["skipped"] < REPORTS  # those complete before the kill: unchanged
    assert report["ingested"] + report["skipped"] == REPORTS
    with resumed.open() as store:
        resumed_graph = dump(store)

    fresh = engine_for(engine.name, engine.folder / "fresh")
    fresh.reset()
    serial, fresh_graph = ingest_dump(
        fresh, engine.folder / "data", [str(folder)], ray_job=False, batch_size=2
    )
    assert serial.ingested == REPORTS and serial.failed == 2
    assert resumed_graph.labels["Document"] == REPORTS
    assert differences(fresh_graph, resumed_graph) == []
