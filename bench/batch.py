"""Batch ingestion: the serial job against the same job on a local Ray, on a slice of MuSiQue.

The first ``--passages`` MuSiQue passages (``../shared/data/musique_corpus.json``) are written
as text files (title, blank line, text), then ingested from the folder into a fresh embedded
store twice: ``kgrag ingest`` serially, and with ``--ray`` on a local Ray sized to the machine
(started inside the measured job, as the CLI does). Both graphs are compared by their canonical
dump (kgrag.graph.dump). Prints and writes ``bench/results/batch.json``; asserts nothing::

    OMP_NUM_THREADS=1 .venv/bin/python bench/batch.py [--passages 300]

"Ray overhead" is the Ray wall time minus the serial wall time; ``ray_start_s`` is the part
spent in ``ray.init`` (measured apart, on a second local Ray, after the job).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import load_corpus, write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")


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
        "stage_seconds": report.stage_seconds,
    }, graph


def ray_start_seconds() -> float:
    import ray

    ray.shutdown()
    started = time.perf_counter()
    ray.init(log_to_driver=False, include_dashboard=False)
    seconds = time.perf_counter() - started
    ray.shutdown()
    return round(seconds, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=300)
    args = parser.parse_args()
    from kgrag.graph.dump import differences

    work = Path(tempfile.mkdtemp(prefix="kgrag-batch-"))
    try:
        files = write_passages(work / "corpus", args.passages)
        serial, serial_graph = run(work / "corpus", work, ray=False)
        on_ray, ray_graph = run(work / "corpus", work, ray=True)
        out = {
            "corpus": f"first {files} MuSiQue passages, one text file each",
            "cpus": os.cpu_count(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
            "serial": serial,
            "ray_local": on_ray,
            "ray_overhead_s": round(on_ray["wall_s"] - serial["wall_s"], 2),
            "ray_start_s": ray_start_seconds(),
            "same_graph": differences(serial_graph, ray_graph) == [],
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.write(str(write_result("batch", out)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
