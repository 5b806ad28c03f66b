"""What every benchmark script shares: where things go, the data sets, the machine, percentiles.

Benchmarks are scripts run as ``python bench/NAME.py`` (``make bench`` runs them all through
``bench/run.py``); each writes one JSON object to ``bench/results/NAME.json``. Inputs that are
slow to make (embeddings, ingested stores) are cached under ``bench/.cache`` (git-ignored).
"""

from __future__ import annotations

import io
import json
import os
import platform
import re
import shutil
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
#: 6,118 Wikipedia passages of 2WikiMultiHopQA (no title shared with MuSiQue): distractors.
DISTRACTORS = DATA / "wiki_distractors.json"


def require(path: Path) -> Path:
    """``path`` if it exists, else stop with a message naming it."""
    if not path.is_file():
        raise SystemExit(f"benchmark input missing: {path} (the shared data set)")
    return path


def load_corpus() -> list[dict[str, str]]:
    """MuSiQue passages as ``[{title, text}]``."""
    data: list[dict[str, str]] = json.loads(require(MUSIQUE_CORPUS).read_text(encoding="utf-8"))
    return data


def load_distractors() -> list[dict[str, str]]:
    """The distractor passages as ``[{title, text}]``, in the file's order."""
    data: list[dict[str, str]] = json.loads(require(DISTRACTORS).read_text(encoding="utf-8"))
    return data


def load_questions() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(require(MUSIQUE_QUESTIONS).read_text(encoding="utf-8"))
    return data


class ShardWriteError(RuntimeError):
    """A shard could not be written (disk full, read-only folder): what was stored stays."""


class ShardCache:
    """Rows of a float32 matrix cached as ``.npy`` shards of ``shard`` rows in ``folder``.

    A shard is written to a temporary file in the same folder and renamed into place, so a
    process killed mid-write (or a full disk) never leaves a shard that reads as complete; an
    interrupted run resumes at the first shard that is missing. A shard that does not read back
    with the expected row count is made again.
    """

    def __init__(self, folder: Path, shard: int) -> None:
        self.folder = folder
        self.shard = shard

    def path(self, index: int) -> Path:
        return self.folder / f"shard-{index:04d}.npy"

    def get(self, index: int, rows: int) -> np.ndarray | None:
        """Shard ``index`` if it is complete (``rows`` rows), else ``None``."""
        path = self.path(index)
        if not path.is_file():
            return None
        try:
            part = np.load(path)
        except (OSError, ValueError, EOFError):
            return None
        return part if part.shape[0] == rows else None

    def put(self, index: int, part: np.ndarray) -> None:
        """Store shard ``index`` atomically; :class:`ShardWriteError` names the shard and the
        cause, and leaves every other shard as it was."""
        path = self.path(index)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            buffer = io.BytesIO()  # numpy writing to a file hides the errno of a short write
            np.save(buffer, part)
            with tmp.open("wb") as out:
                out.write(buffer.getbuffer())
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            try:
                free = f"; {shutil.disk_usage(self.folder).free // 2**20} MiB free there"
            except OSError:
                free = ""
            raise ShardWriteError(
                f"cannot write vector shard {path} ({part.nbytes // 2**20} MiB): "
                f"{exc.strerror or exc}{free}. The shards already written are kept; "
                "rerun to resume once there is room"
            ) from exc

    def discard_partials(self) -> int:
        """Remove temporary files left by a writer that was killed; returns how many."""
        stale = list(self.folder.glob(".shard-*.partial")) if self.folder.is_dir() else []
        for path in stale:
            path.unlink(missing_ok=True)
        return len(stale)

    def complete(self, total: int) -> int:
        """How many of the first ``total`` rows are cached in complete leading shards."""
        done = 0
        for start in range(0, total, self.shard):
            rows = min(self.shard, total - start)
            if not self.path(start // self.shard).is_file():
                break
            done += rows
        return done


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


def open_neo4j(*, erase: bool, migrate: bool = True) -> Any:
    """The benchmark's Neo4j store, migrated (unless ``migrate`` is False); ``erase`` empties it
    first (Community has one database, so every measurement that needs a fresh store starts
    with this)."""
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
    return open_store(
        settings.store,
        neo4j_user=settings.neo4j_user,
        neo4j_password=password,
        run_migrations=migrate,
    )


def result_name(benchmark: str, engine: str) -> str:
    """``bench/results/`` name of one engine's result: the embedded store keeps the plain name
    (older results read the same), Neo4j's get a suffix: ``retrieval_neo4j``."""
    return benchmark if engine == FALKORDB else f"{benchmark}_{engine}"


if __name__ == "__main__":  # `python bench/common.py erase-neo4j`: bench/run.py's reset step
    import sys

    if sys.argv[1:] != ["erase-neo4j"]:
        raise SystemExit("usage: python bench/common.py erase-neo4j")
    open_neo4j(erase=True).close()
