"""Batch ingestion in one run: the serial job against the same job on a local Ray, Ray's own
overhead, the write-only ceiling of each engine, and the scaling model those figures give.

1. The first ``--passages`` MuSiQue passages (``../shared/data/musique_corpus.json``) are
   written as text files (title, blank line, text) and ingested from the folder into a fresh
   embedded store twice: ``kgrag ingest`` serially, and with ``--ray`` on a local Ray sized to
   the machine (started inside the measured job, as the CLI does). Both graphs are compared by
   their canonical dump (kgrag.graph.dump).
2. Ray's overhead: ``ray.init`` of a fresh local Ray, the round trip of an empty task, and the
   cost per batch of an empty Ray Data ``map_batches`` on an actor pool.
3. The write-only ceiling (``bench/write_path.py``'s cached ~1,000-token documents, the models
   out of the way): 10 documents per transaction, 1 writer on the embedded store, 1 and 2
   writers on Neo4j (``KGRAG_BENCH_NEO4J_URI``; ``make bench-batch`` starts scripts/neo4j.sh's).
4. The scaling model, from those figures (see :func:`scaling_model` for its assumptions).

Prints and writes ``bench/results/batch.json``; asserts nothing::

    OMP_NUM_THREADS=1 .venv/bin/python bench/batch.py [--passages 200] [--write-docs 60]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import FALKORDB, NEO4J, load_corpus, write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")

#: Assumed text-model rate of one GPU (MiniLM-L6, chunks of up to 256 tokens, batches of 256,
#: fp16 on a T4-class GPU): not measured here (no GPU); stated so the model can be redone.
GPU_CHUNKS_PER_S = 2000.0


def write_passages(folder: Path, count: int) -> int:
    folder.mkdir(parents=True)
    for n, passage in enumerate(load_corpus()[:count]):
        text = f"{passage['title']}\n\n{passage['text']}\n"
        (folder / f"p{n:05d}.txt").write_text(text, encoding="utf-8")
    return len(list(folder.iterdir()))


def run(folder: Path, work: Path, ray: bool) -> tuple[dict[str, Any], Any]:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings
    from kgrag.graph.dump import dump

    name = "ray" if ray else "serial"
    settings = Settings(store=f"falkordb-lite:///{work / name}/kg.db", data_dir=work / "data")
    agent = KnowledgeAgent.open(settings)
    try:
        load0 = os.getloadavg()[0]
        started = time.perf_counter()
        report = agent.ingest([str(folder)], ray=ray or None)
        wall = time.perf_counter() - started
        passages = sum(1 for _ in agent.store.read_freeform("MATCH (c:Chunk) RETURN c.id AS id"))
        graph = dump(agent.store)
    finally:
        agent.store.close()
    return {
        "files": report.ingested,
        "failed": report.failed,
        "passages": passages,
        "wall_s": round(wall, 2),
        "passages_per_s": round(passages / wall, 2),
        "files_per_s": round(report.ingested / wall, 2),
        "inference_s": report.inference_seconds,
        "stage_seconds": report.stage_seconds,
        "load_average_1m_before_after": [round(load0, 2), round(os.getloadavg()[0], 2)],
    }, graph


def ray_overhead(tasks: int = 50) -> dict[str, Any]:
    """On the Ray the job left running: an empty task's round trip, and an empty map_batches
    stage on an actor pool per batch; then ``ray.init`` of a fresh local Ray."""
    import ray
    import ray.data

    @ray.remote(num_cpus=0.5)
    def noop() -> None:
        return None

    ray.get(noop.remote())  # a worker up
    started = time.perf_counter()
    for _ in range(tasks):
        ray.get(noop.remote())
    task_s = (time.perf_counter() - started) / tasks

    class Same:
        def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
            return batch

    started = time.perf_counter()
    rows = ray.data.range(tasks).map_batches(
        Same,
        batch_size=1,
        compute=ray.data.ActorPoolStrategy(min_size=1, max_size=1),
        num_cpus=0.5,
    )
    count = sum(1 for _ in rows.iter_rows())
    stage_s = time.perf_counter() - started
    ray.shutdown()
    started = time.perf_counter()
    ray.init(log_to_driver=False, include_dashboard=False)
    init_s = time.perf_counter() - started
    ray.shutdown()
    return {
        "ray_init_s": round(init_s, 2),
        "empty_task_round_trip_ms": round(task_s * 1000, 1),
        "empty_actor_stage_s": round(stage_s, 2),
        "empty_actor_stage_ms_per_batch": round(stage_s / max(1, count) * 1000, 1),
    }


def write_ceilings(n_docs: int) -> list[dict[str, Any]]:
    """bench/write_path.py's measurement: 10 documents per transaction, 1 writer on each
    engine, 2 on Neo4j (when KGRAG_BENCH_NEO4J_URI names one)."""
    from write_path import _neo4j_pid, bundles, measure

    docs = bundles(n_docs)
    runs = [measure(FALKORDB, docs, 10, 1, None)]
    if os.environ.get("KGRAG_BENCH_NEO4J_URI"):
        pid_file = Path(os.environ.get("NEO4J_DIR", Path(__file__).parents[1] / ".neo4j/5.26.0"))
        pid = _neo4j_pid(pid_file / "run" / "neo4j.pid")
        measure(NEO4J, docs[:20], 10, 1, None)  # warm-up: plans cached, JIT compiled
        runs += [measure(NEO4J, docs, 10, w, pid) for w in (1, 2)]
    else:
        print("no KGRAG_BENCH_NEO4J_URI: the Neo4j ceiling is not measured", file=sys.stderr)
    return runs


#: What the scaling model assumes (written into the result beside its figures).
ASSUMPTIONS = (
    "A CPU worker is one core running the models at the serial job's model-only rate (chunks "
    "per second of inference time, MiniLM; no recordings or images). A chunk of a ~1,000-token "
    "document costs the text model what a MuSiQue passage costs (passages ~130 tokens, document "
    "chunks up to 256: optimistic by up to 2x for long documents). A GPU embeds "
    f"{GPU_CHUNKS_PER_S:.0f} chunks/s (assumed, not measured: no GPU here). The job's driver "
    "(entity extraction, summaries: one process) and Neo4j are the ceilings that do not grow "
    "with workers; Neo4j's ceiling is given as measured on this shared machine and as its CPU "
    "per document allows on a dedicated 8-core server (writers enough to keep it busy)."
)


def scaling_model(serial: dict[str, Any], ceilings: list[dict[str, Any]]) -> dict[str, Any]:
    """How many inference workers one Neo4j takes, and what N GPU machines would ingest
    (:data:`ASSUMPTIONS`)."""
    chunks = serial["passages"]
    per_worker = chunks / max(serial["inference_s"], 1e-9)
    entities = serial["stage_seconds"].get("entities", 0.0) + serial["stage_seconds"].get(
        "summaries", 0.0
    )
    driver = chunks / entities if entities else None
    neo = [c for c in ceilings if c["engine"] == NEO4J]
    best = max(neo, key=lambda c: c["chunks_per_s"]) if neo else None
    out: dict[str, Any] = {
        "assumptions": ASSUMPTIONS,
        "inference_chunks_per_s_per_cpu_worker": round(per_worker, 1),
        "driver_entities_chunks_per_s": round(driver, 1) if driver else None,
        "gpu_chunks_per_s_assumed": GPU_CHUNKS_PER_S,
    }
    if best is None:
        return out
    chunks_per_doc = best["chunks"] / best["documents"]
    measured = best["chunks_per_s"]
    dedicated = 8 * 1000 / best["neo4j_cpu_ms_per_doc"] * chunks_per_doc  # chunks/s, 8 cores
    out |= {
        "neo4j_ceiling_chunks_per_s_measured": measured,
        "neo4j_ceiling_docs_per_s_measured": best["docs_per_s"],
        "neo4j_cpu_ms_per_doc": best["neo4j_cpu_ms_per_doc"],
        "neo4j_ceiling_docs_per_s_dedicated_8_cores": round(dedicated / chunks_per_doc, 1),
        "chunks_per_1000_token_doc": round(chunks_per_doc, 2),
        "cpu_workers_to_saturate_neo4j_measured": round(measured / per_worker, 1),
        "cpu_workers_to_saturate_neo4j_dedicated": round(dedicated / per_worker, 1),
        "gpus_to_saturate_neo4j_dedicated": round(dedicated / GPU_CHUNKS_PER_S, 2),
    }
    per_hour = {}
    for machines in (1, 4, 16):
        inference = machines * GPU_CHUNKS_PER_S  # one GPU per machine
        rate = min(inference, dedicated, driver or inference)
        per_hour[f"{machines}_gpu_machines_docs_per_hour"] = int(rate / chunks_per_doc * 3600)
    out["docs_per_hour_one_neo4j"] = per_hour
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=200)
    parser.add_argument("--write-docs", type=int, default=60)
    args = parser.parse_args()
    from kgrag.graph.dump import differences

    work = Path(tempfile.mkdtemp(prefix="kgrag-batch-"))
    load0 = os.getloadavg()
    try:
        files = write_passages(work / "corpus", args.passages)
        serial, serial_graph = run(work / "corpus", work, ray=False)
        print(json.dumps({"serial": serial}), file=sys.stderr, flush=True)
        on_ray, ray_graph = run(work / "corpus", work, ray=True)
        print(json.dumps({"ray_local": on_ray}), file=sys.stderr, flush=True)
        overhead = ray_overhead()
        print(json.dumps({"ray": overhead}), file=sys.stderr, flush=True)
        ceilings = write_ceilings(args.write_docs)
        out = {
            "corpus": f"first {files} MuSiQue passages, one text file each",
            "cpus": os.cpu_count(),
            "load_average_at_start_1_5_15": [round(x, 2) for x in load0],
            "load_average_at_end_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "serial": serial,
            "ray_local": on_ray,
            "ray_overhead_s": round(on_ray["wall_s"] - serial["wall_s"], 2),
            "ray": overhead,
            "same_graph": differences(serial_graph, ray_graph) == [],
            "write_only_ceilings": ceilings,
            "scaling_model": scaling_model(serial, ceilings),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(str(write_result("batch", out)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
