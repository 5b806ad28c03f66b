"""Write-only throughput of the graph writer: documents/s and chunks/s into Neo4j and FalkorDB.

The models are out of the way: ~1,000-token documents made from the MuSiQue passages
(``../shared/data/musique_corpus.json``, then ``wiki_distractors.json``: consecutive passages
joined until MiniLM counts 1,000 tokens; the MuSiQue ones make the first 181, both about 550, and
past them the same passages are regrouped from later starts) go once through the real ingestion
pipeline (chunking, MiniLM vectors, the rule entity extractor, summaries), and the
:class:`~kgrag.ingest.records.DocumentBundle` objects it hands its writer are cached in
``bench/.cache/write_path/``. With ``--recombine-past N`` the documents past the first N are
recombined from those N's chunks without the models (:func:`recombined`), so 10,000 documents
take a minute to make rather than hours. Each measurement then writes those bundles with
:class:`~kgrag.ingest.writer.GraphWriter` into an empty store, the chunk vector index maintained
and every index ONLINE at the end (``--no-vector-index``: without it, as the runs before
2026-11-26 06:00 were): by documents per ``write_many`` call (batch) and, on Neo4j, by
concurrent writer threads (one writer on the embedded engine). Beside the rates it records
where the time goes: the Neo4j server's own CPU (``/proc/PID/stat`` of its process, in cores),
this process's CPU, statements and transactions per document, and how many transient errors
(deadlocks, lost MERGE races) were retried. After each run the graph is checked for duplicate
Entity ids. Prints JSON and merges it into ``bench/results/write_path.json`` under ``--label``
(after each measurement); asserts nothing::

    OMP_NUM_THREADS=1 .venv/bin/python bench/write_path.py --label after \
        [--docs 180 | --docs 2000,10000 --recombine-past 2000] [--batches 1,10,50] \
        [--writers 1,2,4] [--engines falkordb-lite,neo4j]

With ``--bulk`` (the default) each size first goes through the bulk path into the same Neo4j
(``kgrag.graph.bulk_import.bulk_load``: CSV files written in parallel while the server shuts
down, ``neo4j-admin database import``, start, vector index and migrations until every index is
ONLINE), timed end to end and by stage, with the load average; the graph is then emptied by
importing an empty one (deleting millions of relationships in transactions takes minutes).

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
from itertools import islice
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


def bundles(n_docs: int, recombine_past: int | None = None) -> list[Any]:
    """The cached bundles of ``n_docs`` documents, made through the pipeline the first time;
    with ``recombine_past`` N, the documents past the first N are recombined from those N's
    chunks (:func:`recombined`) instead of going through the models."""
    from kgrag.ingest.records import DocumentBundle

    if recombine_past is not None and n_docs > recombine_past:
        base = bundles(recombine_past)
        return base + recombined(base, n_docs - recombine_past)
    cache = WRITE_CACHE / f"bundles_{n_docs}.jsonl"
    for made_before in sorted(WRITE_CACHE.glob("bundles_*.jsonl")):
        if int(made_before.stem.split("_")[1]) >= n_docs:  # the same documents, more of them
            with made_before.open(encoding="utf-8") as f:
                return [DocumentBundle.model_validate_json(line) for line in islice(f, n_docs)]
    made = _make_bundles(n_docs)
    if len(made) != n_docs:
        raise SystemExit(f"the pipeline wrote {len(made)} of the {n_docs} documents")
    WRITE_CACHE.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(".tmp")
    tmp.write_text("".join(b.model_dump_json() + "\n" for b in made), encoding="utf-8")
    tmp.replace(cache)
    return made


#: How far a recombined chunk's vector is moved from its source's (relative to its unit norm):
#: enough that no two vectors of the index are equal, little enough to keep its neighbours.
RECOMBINED_NOISE = 0.05


def recombined(base: Sequence[Any], n_docs: int) -> list[Any]:
    """``n_docs`` further documents made of the chunks of ``base`` without the models: document
    i takes as many chunks as a random base document has, each drawn at random from all of the
    base's chunks (seeded by i), with its text, half of its entity mentions and half of another
    random chunk's (so that new documents bring entity pairs no base chunk holds, as in a real
    corpus; the text no longer names them all, which the writers do not read), and its vector
    moved by :data:`RECOMBINED_NOISE` and normalised again; relations are the pairs its chunks
    mention together, weighted by how many, as the rule extractor makes them. So the documents,
    chunk and mention counts, the entity vocabulary and the co-occurrence density are those of
    the pipeline's documents, with other chunk ids, vectors and pairs."""
    import hashlib
    import random
    from collections import Counter
    from itertools import combinations

    import numpy as np

    from kgrag.ingest.entities.models import ExtractionResult, Mention, Relation
    from kgrag.ingest.records import ChunkRecord, DocumentBundle, document_id

    pool = [(b, c) for b in base for c in b.chunks]
    mentions_of: dict[str, list[Any]] = {}
    entity_of: dict[str, dict[str, Any]] = {}
    for b in base:
        for m in b.extraction.mentions:
            mentions_of.setdefault(m.chunk_id, []).append(m)
        entity_of[b.id] = {e.id: e for e in b.extraction.entities}
    relations: dict[tuple[str, str, int], Any] = {}  # shared between documents: less memory
    out = []
    for i in range(n_docs):
        rng = random.Random(i)  # noqa: S311 (a fixed draw, not a secret)
        noise = np.random.default_rng(i)
        picked = [pool[rng.randrange(len(pool))] for _ in range(len(rng.choice(base).chunks))]
        texts = [c.text for _, c in picked]
        uri = f"/recombined/doc_{i:05d}.md"
        sha = hashlib.sha256("\n\n".join(texts).encode()).hexdigest()
        doc = document_id(uri, sha)
        vectors = np.array([c.embedding for _, c in picked])
        vectors += noise.standard_normal(vectors.shape) * (
            RECOMBINED_NOISE / vectors.shape[1] ** 0.5
        )
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks, mentions, entities = [], [], {}
        mentioned: dict[str, list[str]] = {}
        for p, ((source, c), vector) in enumerate(zip(picked, vectors, strict=True)):
            cid = f"{doc}:c{p}"
            chunks.append(
                ChunkRecord.model_construct(
                    id=cid, text=c.text, position=p, embedding=tuple(vector.tolist())
                )
            )
            # half of its own chunk's mentions and half of another's: entity pairs that no
            # chunk of the base holds, as new documents of a real corpus bring
            other_source, other = pool[rng.randrange(len(pool))]
            own, others = mentions_of.get(c.id, []), mentions_of.get(other.id, [])
            drawn = {m.entity_id: (m, source) for m in rng.sample(own, (len(own) + 1) // 2)}
            for m in rng.sample(others, len(others) // 2):
                drawn.setdefault(m.entity_id, (m, other_source))
            for entity_id, (m, origin) in drawn.items():
                mentions.append(
                    Mention.model_construct(chunk_id=cid, entity_id=entity_id, count=m.count)
                )
                entities.setdefault(entity_id, entity_of[origin.id][entity_id])
                mentioned.setdefault(cid, []).append(entity_id)
        weights = Counter(p for ids in mentioned.values() for p in combinations(sorted(ids), 2))
        rels = []
        for (a, z), w in sorted(weights.items()):
            key = (a, z, w)
            if key not in relations:
                relations[key] = Relation.model_construct(source_id=a, target_id=z, weight=float(w))
            rels.append(relations[key])
        first = picked[0][0]
        out.append(
            DocumentBundle.model_construct(
                id=doc,
                uri=uri,
                sha256=sha,
                modality=first.modality,
                mime=first.mime,
                title=first.title,
                bytes=sum(len(t.encode()) for t in texts),
                acl=first.acl,
                tags=first.tags,
                language=first.language,
                summary=first.summary,
                segments=False,
                chunks=tuple(chunks),
                images=(),
                tables=(),
                extraction=ExtractionResult.model_construct(
                    entities=tuple(entities.values()),
                    mentions=tuple(mentions),
                    relations=tuple(rels),
                ),
            )
        )
    return out


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
    engine: str,
    docs: Sequence[Any],
    batch: int,
    writers: int,
    neo4j_pid: int | None,
    space: Any = None,
) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="kgrag-writepath-"))
    if engine == NEO4J:
        store = open_neo4j(erase=True)
    else:
        from kgrag.graph import open_store

        store = open_store(f"falkordb-lite:///{tmp}/kg.db")
    if space is not None:  # the vector index is maintained by every write, as in production
        from kgrag.graph.spaces import ensure_space

        ensure_space(store, space)
        store.await_schema([])
    counter = StatementCounter(store)
    retries = RetryCounter()
    logging.getLogger("kgrag.graph.retry").addHandler(retries)
    try:
        server0 = _cpu_seconds(neo4j_pid) if neo4j_pid else 0.0
        own0 = time.process_time()
        busy0, total0 = _machine_busy()
        t0 = time.perf_counter()
        errors = _write(store, docs, batch, writers)
        store.await_schema([])  # queryable: every index ONLINE
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
        "path": "transactional",
        "vector_index": space is not None,
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


def measure_bulk(docs: Sequence[Any], space: Any, workers: int | None = None) -> dict[str, Any]:
    """The bulk path into the same (emptied) Neo4j: CSV files written while the server shuts
    down, neo4j-admin database import, start, vector index and schema migrations populated side
    by side until every index is ONLINE (kgrag.graph.bulk_import.bulk_load), timed end to end and
    by stage, with the load average and this process's CPU. The server is scripts/neo4j.sh's,
    with its settings (NEO4J_DIR, ports) from this environment."""
    from kgrag.graph.bulk_import import Neo4jServer, available_cpus, bulk_load, dev_script

    tmp = Path(tempfile.mkdtemp(prefix="kgrag-bulk-", dir=WRITE_CACHE))
    load0 = os.getloadavg()
    own0 = time.process_time()
    busy0, total0 = _machine_busy()
    try:
        result = bulk_load(
            docs,
            tmp,
            Neo4jServer.dev_script(dev_script()),
            open_neo4j(erase=True),
            lambda: open_neo4j(erase=False, migrate=False),
            [space],
            workers=workers,
        )
        busy1, total1 = _machine_busy()
        own = time.process_time() - own0
        store = open_neo4j(erase=False)
        try:
            counts = {
                "documents": _count(store, "Document"),
                "chunks": _count(store, "Chunk"),
                "entities": _count(store, "Entity"),
            }
            indexes = store.read_freeform(
                "SHOW INDEXES YIELD name, state, populationPercent "
                "RETURN name, state, populationPercent ORDER BY name"
            )
        finally:
            store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = len(docs)
    n_chunks = sum(len(d.chunks) for d in docs)
    wall = result.total_seconds
    return {
        "engine": NEO4J,
        "path": "bulk (neo4j-admin database import)",
        "documents": n,
        "chunks": n_chunks,
        "csv_workers": workers or available_cpus(),
        "wall_s": round(wall, 2),
        "docs_per_s": round(n / wall, 2),
        "chunks_per_s": round(n_chunks / wall, 1),
        "docs_per_hour": round(n / wall * 3600),
        "seconds": {
            "csv_files (shutdown beside)": round(result.csv_seconds, 2),
            "shutdown (from the start)": round(result.stop_seconds, 2),
            "rest of shutdown + neo4j-admin import": round(result.import_seconds, 2),
            "start": round(result.restart_seconds, 2),
            "vector index + migrations until ONLINE": round(result.migrate_seconds, 2),
        },
        "csv_mb": round(result.csv_bytes / 1e6, 1),
        "client_cpu_s": round(own, 2),
        "machine_busy_share": round((busy1 - busy0) / max(1, total1 - total0), 2),
        "load_average_1m_before_after": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "stored": counts,
        "indexes": [f"{r['name']}: {r['state']} {r['populationPercent']:.0f}%" for r in indexes],
    }


def wipe_by_import() -> None:
    """Empty the benchmark's Neo4j by importing an empty graph over it (stop, neo4j-admin
    import, start): seconds, where deleting the millions of RELATED edges of 10,000 documents
    in transactions takes minutes. Not timed."""
    from kgrag.graph.bulk_import import Neo4jServer, dev_script

    server = Neo4jServer.dev_script(dev_script())
    with tempfile.TemporaryDirectory(prefix="kgrag-wipe-", dir=WRITE_CACHE) as tmp:
        header = Path(tmp) / "nodes_Document.csv"
        header.write_text("id:ID(Document)\n", encoding="utf-8")
        server.run(server.stop, "stopping Neo4j")
        try:
            server.run(
                [
                    *server.admin,
                    *("database", "import", "full", "neo4j", "--overwrite-destination=true"),
                    f"--nodes=Document={header}",
                    f"--report-file={Path(tmp) / 'import.report'}",
                ],
                "emptying Neo4j",
            )
        finally:
            server.run(server.start, "starting Neo4j")


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


def _corpus(docs: Sequence[Any]) -> dict[str, Any]:
    return {
        "documents": len(docs),
        "doc_tokens_at_least": DOC_TOKENS,
        "chunks": sum(len(d.chunks) for d in docs),
        "mentions": sum(len(d.extraction.mentions) for d in docs),
        "entities_distinct": len({e.id for d in docs for e in d.extraction.entities}),
        "relations": sum(len(d.extraction.relations) for d in docs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument(
        "--docs", default="180", help="documents, or several sizes (2000,10000): each measured"
    )
    ap.add_argument(
        "--recombine-past",
        type=int,
        default=None,
        help="documents past this many are recombined from their chunks (no models; see "
        "recombined()) rather than made through the pipeline",
    )
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
        "server) on the same documents, before the transactional writes of each size",
    )
    ap.add_argument("--csv-workers", type=int, default=None, help="bulk: CSV shard writers")
    ap.add_argument(
        "--transactional-max-docs",
        type=int,
        default=None,
        help="write transactionally only the sizes up to this many documents (bulk: all)",
    )
    ap.add_argument(
        "--vector-index",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="transactional writes maintain the chunk vector index (as in production); "
        "--no-vector-index measures them without it, as runs before 2026-11-26 06:00 did",
    )
    ap.add_argument(
        "--profile-batch",
        type=int,
        default=10,
        help="profile Neo4j statements in batches of this many documents (0: no profile)",
    )
    args = ap.parse_args()
    sizes = [int(n) for n in args.docs.split(",")]
    everything = bundles(max(sizes), args.recombine_past)
    if args.prepare_only:
        return
    from kgrag.graph.spaces import EmbeddingSpace

    space = EmbeddingSpace(
        name="text",
        model=_text_model(),
        dimensions=len(everything[0].chunks[0].embedding),
    )
    engines = [e for e in args.engines.split(",") if e]
    batches = [int(b) for b in args.batches.split(",")]
    writer_counts = [int(w) for w in args.writers.split(",")]
    out = RESULTS / "write_path.json"
    existing = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    existing["benchmark"] = "write_path"
    record: dict[str, Any] = {
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "kgrag_commit": _commit(),
        "recombined_past": args.recombine_past,
        "corpus": {str(n): _corpus(everything[:n]) for n in sizes},
        "machine": machine(),
        "results": [],
        "neo4j_statement_profile": None,
    }
    existing.setdefault("runs", {})[args.label] = record

    def save(run: dict[str, Any]) -> None:
        print(json.dumps(run), flush=True)
        record["results"].append(run)
        RESULTS.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(existing, indent=2) + "\n", encoding="utf-8")

    space_or_none = space if args.vector_index else None
    for n in sizes:
        docs = everything[:n]
        if NEO4J in engines and args.bulk:
            save(measure_bulk(docs, space, args.csv_workers))
            wipe_by_import()
        if args.transactional_max_docs is not None and n > args.transactional_max_docs:
            continue
        for engine in engines:
            pid = _neo4j_pid(args.neo4j_pid_file) if engine == NEO4J else None
            measure(engine, docs[:20], 10, 1, None, space_or_none)  # warm-up: plans, JIT
            for writers in writer_counts if engine == NEO4J else [1]:
                for batch in batches:
                    save(measure(engine, docs, batch, writers, pid, space_or_none))
    if NEO4J in engines and args.profile_batch:
        record["neo4j_statement_profile"] = profile(everything[: sizes[0]], args.profile_batch)
        print(json.dumps(record["neo4j_statement_profile"]), flush=True)
        out.write_text(json.dumps(existing, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


def _text_model() -> str:
    from kgrag.config import Settings
    from kgrag.modalities import factory

    return str(factory.text_embedder(Settings()).model_name)


if __name__ == "__main__":
    main()
