"""Write-only throughput of the graph writer: documents/s and chunks/s into Neo4j and FalkorDB.

The models are out of the way: ~1,000-token documents made from the MuSiQue passages
(``../shared/data/musique_corpus.json``, then ``wiki_distractors.json``: consecutive passages
joined until MiniLM counts 1,000 tokens; the MuSiQue ones make the first 181, both about 550, and
past them the same passages are regrouped from later starts) go once through the real ingestion
pipeline (chunking, MiniLM vectors, the rule entity extractor, summaries), and the
:class:`~kgrag.ingest.records.DocumentBundle` objects it hands its writer are cached in
``bench/.cache/write_path/``. Each measurement then writes those bundles with
:class:`~kgrag.ingest.writer.GraphWriter` into an empty store: by documents per ``write_many`` call
(batch) and, on Neo4j, by concurrent writer threads (one writer on the embedded engine). Beside the
rates it records where the time goes: the Neo4j server's own CPU (``/proc/PID/stat`` of its
process, in cores), this process's CPU, statements and transactions per document, and how many
transient errors (deadlocks, lost MERGE races) were retried. After each run the graph is checked
for duplicate Entity ids. Prints JSON and merges it into ``bench/results/write_path.json`` under
``--label``; asserts nothing::

    OMP_NUM_THREADS=1 .venv/bin/python bench/write_path.py --label after \
        [--docs 180] [--batches 1,10,50] [--writers 1,2,4] [--engines falkordb-lite,neo4j]

With ``--bulk`` (the default) the same documents then go through the bulk path into the same
Neo4j (``kgrag.graph.bulk_import``: CSV files, ``neo4j-admin database import`` into the stopped
server, restart, migrations), timed end to end and by phase, with the load average.

Neo4j comes from ``KGRAG_BENCH_NEO4J_URI`` (and ``KGRAG_NEO4J_USER`` / ``_PASSWORD``); its pid
from ``--neo4j-pid-file`` (default: scripts/neo4j.sh's ``.neo4j/5.26.0/run/neo4j.pid``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common import (
    CACHE,
    FALKORDB,
    NEO4J,
    RESULTS,
    load_corpus,
    load_distractors,
    machine,
    open_neo4j,
    quiet_models,
)

quiet_models()

DOC_TOKENS = 1_000
#: Passes over the corpora, each in another order (see _document_texts): up to ~4,400 documents.
MAX_PASSES = 8
WRITE_CACHE = CACHE / "write_path"
TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------- the documents
def _document_texts(n_docs: int, count_tokens: Callable[[str], int]) -> list[tuple[str, str]]:
    """(title, text) of ``n_docs`` documents of >= DOC_TOKENS tokens: consecutive passages.

    The two corpora make about 550 such documents. Past them, each further pass takes the same
    passages in another order (shuffled with the pass number as seed): documents with other
    texts, hence other chunks, over the same entity vocabulary, as a real corpus mentions the
    same names again and again. The first pass is the corpora's order, so the cached bundles of
    a smaller run are a prefix of a larger one's."""
    passages = load_corpus() + load_distractors()
    docs: list[tuple[str, str]] = []
    for n_pass in range(MAX_PASSES):
        order = list(passages)
        if n_pass:
            random.Random(n_pass).shuffle(order)  # noqa: S311 (a fixed order, not a secret)
        parts: list[str] = []
        tokens = 0
        for passage in order:
            parts.append(f"{passage['title']}\n\n{passage['text']}")
            tokens += count_tokens(parts[-1])
            if tokens >= DOC_TOKENS:
                docs.append((passage["title"], "\n\n".join(parts)))
                parts, tokens = [], 0
                if len(docs) == n_docs:
                    return docs
    raise SystemExit(f"the corpus makes only {len(docs)} documents of {DOC_TOKENS} tokens")


def bundles(n_docs: int) -> list[Any]:
    """The cached bundles of ``n_docs`` documents, made through the pipeline the first time."""
    from kgrag.ingest.records import DocumentBundle

    cache = WRITE_CACHE / f"bundles_{n_docs}.jsonl"
    for made_before in sorted(WRITE_CACHE.glob("bundles_*.jsonl")):
        if int(made_before.stem.split("_")[1]) >= n_docs:  # the same documents, more of them
            lines = made_before.read_text(encoding="utf-8").splitlines()[:n_docs]
            return [DocumentBundle.model_validate_json(line) for line in lines]
    made = _make_bundles(n_docs)
    if len(made) != n_docs:
        raise SystemExit(f"the pipeline wrote {len(made)} of the {n_docs} documents")
    WRITE_CACHE.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp")
    tmp.write_text("".join(b.model_dump_json() + "\n" for b in made), encoding="utf-8")
    tmp.replace(cache)
    return made


def _make_bundles(n_docs: int) -> list[Any]:
    from kgrag.config import Settings
    from kgrag.graph import open_store
    from kgrag.ingest.entities import RuleEntityExtractor
    from kgrag.ingest.pipeline import IngestOptions, Ingestor
    from kgrag.ingest.records import DocumentBundle
    from kgrag.ingest.writer import GraphWriter
    from kgrag.modalities import factory

    captured: list[DocumentBundle] = []

    class Capture(GraphWriter):
        def write_many(self, bundles: Sequence[DocumentBundle]) -> None:
            captured.extend(bundles)

    class CaptureIngestor(Ingestor):
        def _writer(self) -> GraphWriter:
            return Capture(self.store)

    settings = Settings()
    embedder = factory.text_embedder(settings)
    texts = _document_texts(n_docs, embedder.count_tokens)
    with tempfile.TemporaryDirectory(prefix="kgrag-writepath-") as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for n, (title, text) in enumerate(texts):
            (folder / f"doc_{n:04d}.md").write_text(f"# {title}\n\n{text}\n", encoding="utf-8")
        store = open_store(f"falkordb-lite:///{tmp}/capture.db")
        try:
            t0 = time.perf_counter()
            ingestor = CaptureIngestor(
                store,
                embedder,
                RuleEntityExtractor(),
                options=IngestOptions(chunk_overlap_tokens=settings.chunk_overlap_tokens),
            )
            report = ingestor.ingest_paths([str(folder)])
            print(
                f"made {len(captured)} bundles through the pipeline in "
                f"{time.perf_counter() - t0:.0f} s ({report.failed} failed)",
                file=sys.stderr,
            )
        finally:
            store.close()
    captured.sort(key=lambda b: b.uri)
    return captured


# ---------------------------------------------------------------------------- what is counted
class RetryCounter(logging.Handler):
    """Counts the store's "failed (attempt n of m) ... retrying" warnings, by error type."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        if "retrying" not in record.getMessage():
            return
        kind = str(record.args[3]) if isinstance(record.args, tuple) else "?"
        with self._lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1


class StatementCounter:
    """Counts the statements and transactions a store sends (wrapping its engine calls)."""

    def __init__(self, store: Any) -> None:
        self.statements = 0
        self.transactions = 0
        self._lock = threading.Lock()
        execute = store._execute

        def counted_execute(
            text: str, params: dict[str, Any], *, read_only: bool, **kw: Any
        ) -> Any:
            with self._lock:
                self.statements += 1
                self.transactions += 1
            return execute(text, params, read_only=read_only, **kw)

        store._execute = counted_execute
        from kgrag.graph.store import GraphStore

        # an engine without transactions runs each statement through _execute (counted there)
        if type(store)._execute_transaction is not GraphStore._execute_transaction:
            many = store._execute_transaction

            def counted_many(statements: Sequence[tuple[str, dict[str, Any]]], **kw: Any) -> Any:
                with self._lock:
                    self.statements += len(statements)
                    self.transactions += 1
                return many(statements, **kw)

            store._execute_transaction = counted_many


class StatementProfile:
    """Time per statement and per commit, measured inside the writer's transactions (each
    statement's result is consumed before the next), or per auto-commit statement."""

    def __init__(self, store: Any) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        import neo4j

        driver, database = store._driver, store._database

        def timed(statements: Sequence[tuple[str, dict[str, Any]]], **kw: Any) -> None:
            with driver.session(database=database, default_access_mode=neo4j.WRITE_ACCESS) as s:
                tx = s.begin_transaction()
                for text, params in statements:
                    t0 = time.perf_counter()
                    tx.run(text, params).consume()
                    self._add(_statement_name(store, text), time.perf_counter() - t0)
                t0 = time.perf_counter()
                tx.commit()
                self._add("(commit)", time.perf_counter() - t0)

        store._execute_transaction = timed
        execute = store._execute

        def timed_one(text: str, params: dict[str, Any], *, read_only: bool, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return execute(text, params, read_only=read_only, **kw)
            finally:  # an auto-commit statement: its commit is in its time
                self._add(_statement_name(store, text) + " (+commit)", time.perf_counter() - t0)

        store._execute = timed_one

    def _add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        self.calls[name] = self.calls.get(name, 0) + 1


def _statement_name(store: Any, text: str) -> str:
    from kgrag.graph import cypher

    for name in cypher.names():
        if store.statement(name) == text:
            return name
    return "?"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


# ------------------------------------------------------------------------------- measurements
def _write(store: Any, docs: Sequence[Any], batch: int, writers: int) -> list[BaseException]:
    """Write ``docs`` in ``write_many`` calls of ``batch`` documents from ``writers`` threads
    (document i to thread i mod writers, so concurrent batches share entities)."""
    from kgrag.ingest.writer import GraphWriter

    errors: list[BaseException] = []

    def run(mine: Sequence[Any]) -> None:
        writer = GraphWriter(store)
        try:
            for start in range(0, len(mine), batch):
                writer.write_many(mine[start : start + batch])
        except BaseException as e:
            errors.append(e)

    threads = [
        threading.Thread(target=run, args=(docs[w::writers],), name=f"writer-{w}")
        for w in range(writers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def profile(docs: Sequence[Any], batch: int) -> dict[str, Any]:
    """Where one Neo4j writer's transaction spends its time, by statement (seconds per
    document), the documents written in batches of ``batch``."""
    store = open_neo4j(erase=True)
    prof = StatementProfile(store)
    try:
        t0 = time.perf_counter()
        _write(store, docs, batch, 1)
        wall = time.perf_counter() - t0
    finally:
        store.close()
    per_doc = {k: round(v / len(docs) * 1000, 2) for k, v in prof.seconds.items()}
    return {
        "batch_docs": batch,
        "wall_s": round(wall, 2),
        "ms_per_doc_by_statement": dict(sorted(per_doc.items(), key=lambda kv: -kv[1])),
    }


def measure(
    engine: str, docs: Sequence[Any], batch: int, writers: int, neo4j_pid: int | None
) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="kgrag-writepath-"))
    if engine == NEO4J:
        store = open_neo4j(erase=True)
    else:
        from kgrag.graph import open_store

        store = open_store(f"falkordb-lite:///{tmp}/kg.db")
    counter = StatementCounter(store)
    retries = RetryCounter()
    logging.getLogger("kgrag.graph.retry").addHandler(retries)
    try:
        server0 = _cpu_seconds(neo4j_pid) if neo4j_pid else 0.0
        own0 = time.process_time()
        busy0, total0 = _machine_busy()
        t0 = time.perf_counter()
        errors = _write(store, docs, batch, writers)
        wall = time.perf_counter() - t0
        busy1, total1 = _machine_busy()
        server = _cpu_seconds(neo4j_pid) - server0 if neo4j_pid else None
        own = time.process_time() - own0
        counts = {
            "documents": _count(store, "Document"),
            "chunks": _count(store, "Chunk"),
            "entities": _count(store, "Entity"),
            "entity_ids": _distinct_entity_ids(store),
        }
    finally:
        logging.getLogger("kgrag.graph.retry").removeHandler(retries)
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)
    n_chunks = sum(len(d.chunks) for d in docs)
    return {
        "engine": engine,
        "batch_docs": batch,
        "writers": writers,
        "documents": len(docs),
        "chunks": n_chunks,
        "wall_s": round(wall, 2),
        "docs_per_s": round(len(docs) / wall, 2),
        "chunks_per_s": round(n_chunks / wall, 1),
        "statements_per_doc": round(counter.statements / len(docs), 2),
        "transactions_per_doc": round(counter.transactions / len(docs), 2),
        "retried_transient_errors": retries.counts,
        "neo4j_cpu_cores": round(server / wall, 2) if server is not None else None,
        "neo4j_cpu_ms_per_doc": round(server / len(docs) * 1000, 1) if server is not None else None,
        "client_cpu_ms_per_doc": round(own / len(docs) * 1000, 1),
        "client_cpu_cores": round(own / wall, 2),
        "machine_busy_share": round((busy1 - busy0) / max(1, total1 - total0), 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "errors": [f"{type(e).__name__}: {e}"[:300] for e in errors],
        "stored": counts,
        "duplicate_entities": counts["entities"] - counts["entity_ids"],
    }


def measure_bulk(docs: Sequence[Any]) -> dict[str, Any]:
    """The bulk path into the same (emptied) Neo4j: CSV files, neo4j-admin database import into
    the stopped server, restart, schema migrations (kgrag.graph.bulk_import). The server is
    scripts/neo4j.sh's, with its settings (NEO4J_DIR, ports) from this environment."""
    from kgrag.graph.bulk_import import Neo4jServer, bulk_load, dev_script

    tmp = Path(tempfile.mkdtemp(prefix="kgrag-bulk-"))
    load0 = os.getloadavg()
    try:
        result = bulk_load(
            docs,
            tmp,
            Neo4jServer.dev_script(dev_script()),
            open_neo4j(erase=True),
            lambda: open_neo4j(erase=False),
        )
        store = open_neo4j(erase=False)
        try:
            counts = {"documents": _count(store, "Document"), "chunks": _count(store, "Chunk")}
        finally:
            store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = len(docs)
    return {
        "engine": NEO4J,
        "path": "bulk (neo4j-admin database import)",
        "documents": n,
        "chunks": sum(len(d.chunks) for d in docs),
        "wall_s": round(result.total_seconds, 2),
        "docs_per_s": round(n / result.total_seconds, 2),
        "docs_per_s_excluding_restart": round(
            n / (result.total_seconds - result.restart_seconds), 2
        ),
        "seconds": {
            "csv": round(result.csv_seconds, 2),
            "stop_and_import": round(result.import_seconds, 2),
            "start": round(result.restart_seconds, 2),
            "migrations": round(result.migrate_seconds, 2),
        },
        "load_average_1m_before_after": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "stored": counts,
    }


def _count(store: Any, label: str) -> int:
    rows = store.read("stats_labels")
    return int(sum(r["n"] for r in rows if r["label"] == label))


def _distinct_entity_ids(store: Any) -> int:
    rows = store.read_freeform("MATCH (e:Entity) RETURN count(DISTINCT e.id) AS n")
    return int(rows[0]["n"])


def _neo4j_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        print(f"no Neo4j pid in {pid_file}: its CPU is not sampled", file=sys.stderr)
        return None


def _commit() -> str:
    import kgrag

    where = Path(kgrag.__file__).resolve().parents[1]
    out = subprocess.run(
        ["git", "-C", str(where), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--docs", type=int, default=180)
    ap.add_argument("--batches", default="1,10,50")
    ap.add_argument("--writers", default="1,2,4")
    ap.add_argument("--engines", default=f"{FALKORDB},{NEO4J}")
    ap.add_argument("--label", default="after", help="key of this run in write_path.json")
    ap.add_argument(
        "--neo4j-pid-file",
        type=Path,
        default=Path(__file__).resolve().parents[1] / ".neo4j" / "5.26.0" / "run" / "neo4j.pid",
    )
    ap.add_argument("--prepare-only", action="store_true", help="make the cached bundles only")
    ap.add_argument(
        "--bulk",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also measure the Neo4j bulk path (neo4j-admin import: restarts scripts/neo4j.sh's "
        "server) on the same documents",
    )
    ap.add_argument(
        "--profile-batch",
        type=int,
        default=10,
        help="profile Neo4j statements in batches of this many documents (0: no profile)",
    )
    args = ap.parse_args()
    docs = bundles(args.docs)
    if args.prepare_only:
        return
    batches = [int(b) for b in args.batches.split(",")]
    writer_counts = [int(w) for w in args.writers.split(",")]
    runs = []
    for engine in args.engines.split(","):
        pid = _neo4j_pid(args.neo4j_pid_file) if engine == NEO4J else None
        measure(engine, docs[:20], 10, 1, None)  # warm-up: plans cached, JIT compiled
        for writers in writer_counts if engine == NEO4J else [1]:
            for batch in batches:
                run = measure(engine, docs, batch, writers, pid)
                print(json.dumps(run), flush=True)
                runs.append(run)
    if NEO4J in args.engines.split(",") and args.bulk:
        bulk = measure_bulk(docs)
        print(json.dumps(bulk), flush=True)
        runs.append(bulk)
    statement_profile = None
    if NEO4J in args.engines.split(",") and args.profile_batch:
        statement_profile = profile(docs, args.profile_batch)
        print(json.dumps(statement_profile), flush=True)
    out = RESULTS / "write_path.json"
    existing = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    existing["benchmark"] = "write_path"
    existing.setdefault("runs", {})[args.label] = {
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "kgrag_commit": _commit(),
        "corpus": {
            "documents": len(docs),
            "doc_tokens_at_least": DOC_TOKENS,
            "chunks": sum(len(d.chunks) for d in docs),
            "mentions": sum(len(d.extraction.mentions) for d in docs),
            "entities_distinct": len({e.id for d in docs for e in d.extraction.entities}),
            "relations": sum(len(d.extraction.relations) for d in docs),
        },
        "machine": machine(),
        "results": runs,
        "neo4j_statement_profile": statement_profile,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(existing, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
