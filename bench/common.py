"""What every benchmark script shares: where things go, the data sets, the machine, percentiles.

Benchmarks are scripts run as ``python bench/NAME.py`` (``make bench`` runs them all through
``bench/run.py``); each writes one JSON object to ``bench/results/NAME.json``. Inputs that are
slow to make (embeddings, ingested stores) are cached under ``bench/.cache`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.eval.metrics import percentile

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
CACHE = BENCH / ".cache"
DATA = ROOT.parent / "shared" / "data"
MUSIQUE_CORPUS = DATA / "musique_corpus.json"
MUSIQUE_QUESTIONS = DATA / "musique_dev.json"


def require(path: Path) -> Path:
    """``path`` if it exists, else stop with a message naming it."""
    if not path.is_file():
        raise SystemExit(f"benchmark input missing: {path} (the shared data set)")
    return path


def load_corpus() -> list[dict[str, str]]:
    """MuSiQue passages as ``[{title, text}]``."""
    data: list[dict[str, str]] = json.loads(require(MUSIQUE_CORPUS).read_text(encoding="utf-8"))
    return data


def load_questions() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(require(MUSIQUE_QUESTIONS).read_text(encoding="utf-8"))
    return data


def latency_summary(ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/mean of latencies in milliseconds, rounded for tables."""
    return {
        "p50": round(percentile(ms, 50), 3),
        "p95": round(percentile(ms, 95), 3),
        "mean": round(float(np.mean(ms)) if ms else 0.0, 3),
    }


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """``with stopwatch() as t: ...`` then ``t[0]`` holds the elapsed seconds."""
    out: list[float] = []
    start = time.perf_counter()
    try:
        yield out
    finally:
        out.append(time.perf_counter() - start)


def machine() -> dict[str, Any]:
    """The machine the figures were measured on."""
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = 0.0
    try:
        m = re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text())
        mem_gib = round(int(m.group(1)) / 1024 / 1024, 1) if m else 0.0
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count() or 0,
        "memory_gib": mem_gib,
        "python": platform.python_version(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", ""),
        "load_average": round(os.getloadavg()[0], 2),
    }


def write_result(name: str, payload: dict[str, Any]) -> Path:
    """Write ``bench/results/NAME.json`` with the machine and time added."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    doc: dict[str, Any] = {"benchmark": name, "measured_at": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    doc.update(payload)
    doc["machine"] = machine()
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out


def quiet_models() -> None:
    """One thread for torch and no hub access, as in CI."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# ------------------------------------------------------------------------------------ engines
FALKORDB = "falkordb-lite"
NEO4J = "neo4j"
ENGINES = (FALKORDB, NEO4J)


def neo4j_uri() -> str:
    """The Neo4j server the benchmarks use: ``KGRAG_BENCH_NEO4J_URI`` (``bench/run.py`` starts
    the project's server with scripts/neo4j.sh and sets it); credentials from
    ``KGRAG_NEO4J_USER`` / ``KGRAG_NEO4J_PASSWORD`` as for any kgrag process."""
    uri = os.environ.get("KGRAG_BENCH_NEO4J_URI")
    if not uri:
        raise SystemExit(
            "no Neo4j for the benchmark: run it through bench/run.py (make bench), or set "
            "KGRAG_BENCH_NEO4J_URI, KGRAG_NEO4J_USER and KGRAG_NEO4J_PASSWORD "
            "(see: make -s neo4j)"
        )
    return uri


def open_neo4j(*, erase: bool) -> Any:
    """The benchmark's Neo4j store, migrated; ``erase`` empties it first (Community has one
    database, so every measurement that needs a fresh store starts with this)."""
    from kgrag.config import Settings
    from kgrag.graph import open_store
    from kgrag.graph.neo4j_store import Neo4jStore

    settings = Settings(store=neo4j_uri())
    password = settings.neo4j_password.get_secret_value()
    if erase:
        store = open_store(
            settings.store,
            neo4j_user=settings.neo4j_user,
            neo4j_password=password,
            run_migrations=False,
        )
        assert isinstance(store, Neo4jStore)
        try:
            store.erase()
        finally:
            store.close()
    return open_store(settings.store, neo4j_user=settings.neo4j_user, neo4j_password=password)


def result_name(benchmark: str, engine: str) -> str:
    """``bench/results/`` name of one engine's result: the embedded store keeps the plain name
    (older results read the same), Neo4j's get a suffix: ``retrieval_neo4j``."""
    return benchmark if engine == FALKORDB else f"{benchmark}_{engine}"


if __name__ == "__main__":  # `python bench/common.py erase-neo4j`: bench/run.py's reset step
    import sys

    if sys.argv[1:] != ["erase-neo4j"]:
        raise SystemExit("usage: python bench/common.py erase-neo4j")
    open_neo4j(erase=True).close()
