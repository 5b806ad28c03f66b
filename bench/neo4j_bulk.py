"""A first load of the scale benchmark's vectors into Neo4j through ``neo4j-admin database import``.

What an operator does for a first load of this size, with the product's bulk machinery
(:mod:`kgrag.graph.bulk_import`): the same Document and Chunk columns and ``PART_OF`` edges as
``write_import_files`` writes (one Document per 1,000 chunks, as ``vector_search.load`` groups
them), the same ``neo4j-admin`` arguments and server handling, then, on the started server,
``documents_fill_empty_lists``, kgrag's schema migrations (constraints, the ``chunk_text``
full-text index) and the product's ``chunk_embedding`` vector index (``create_vector_index``:
M 32, efConstruction 200, no quantization), each waited for until ONLINE. The vector index is
created last, alone, so that its population time is its own.

The CSV files are written from the numpy matrix directly (a ``DocumentBundle`` holding 1M
embeddings as Python floats would need over 10 GB), by forked processes, one per core: each
float as ``%.9g``, which reads back as the same float32 (all the index keeps; the transactional
path sends the float32 values widened to float64, so the node property differs from it below
the float32 precision only).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.graph.bulk_import import (
    _CHUNK,
    _DOCUMENT,
    ARRAY_DELIMITER,
    CsvFile,
    ImportFiles,
    Neo4jServer,
    _header,
    _quoted,
    available_cpus,
    csv_row,
    csv_values,
    dev_script,
)
from kgrag.text.search_properties import chunk_search_properties

log = logging.getLogger("bench.neo4j_bulk")

#: Chunks per Document, as ``vector_search.load`` writes them.
PER_DOC = 1000

#: What the forked CSV writers read (set before the fork: nothing is pickled).
_VECTORS: np.ndarray = np.zeros((0, 0), dtype=np.float32)
_TEXTS: Sequence[str] = ()


@dataclass(frozen=True)
class BulkTimes:
    """Seconds of wall time of each stage of one bulk load."""

    csv_s: float
    """Writing the CSV files (the server's shutdown runs beside it)."""
    import_s: float
    """The rest of the shutdown and neo4j-admin database import."""
    restart_s: float
    schema_s: float
    """documents_fill_empty_lists and the migrations (constraints, full-text index) ONLINE."""
    vector_index_s: float
    """The chunk_embedding vector index created over the imported chunks until ONLINE."""
    csv_bytes: int

    @property
    def total_s(self) -> float:
        return self.csv_s + self.import_s + self.restart_s + self.schema_s + self.vector_index_s


def _doc_id(row: int) -> str:
    return f"bench_doc_{row // PER_DOC}"


def _write_part(directory: Path, index: int, start: int, stop: int) -> tuple[int, bool]:
    """Chunk and PART_OF rows ``start:stop`` (no header): returns the bytes written and whether
    a text holds a line break (neo4j-admin must then read multi-line fields)."""
    fmt = ARRAY_DELIMITER.join(["%.9g"] * _VECTORS.shape[1])
    chunk_path = directory / f"nodes_Chunk.{index:03d}.csv"
    part_path = directory / f"relationships_PART_OF.{index:03d}.csv"
    multiline = False
    with (
        chunk_path.open("w", encoding="utf-8", newline="") as chunks,
        part_path.open("w", encoding="utf-8", newline="") as part_of,
    ):
        for row in range(start, stop):
            text = _TEXTS[row]
            multiline = multiline or "\n" in text or "\r" in text
            cid, doc = f'"w{row}"', f'"{_doc_id(row)}"'
            vector = fmt % tuple(_VECTORS[row].tolist())
            fold = chunk_search_properties(text).text_folded
            fold_field = "" if fold is None else _quoted(fold)
            fields = {
                "id": cid,
                "text": _quoted(text),
                "text_folded": fold_field,
                "position": str(row % PER_DOC),
                "document_id": doc,
                "embedding": f'"{vector}"',
            }
            chunks.write(csv_row(_CHUNK, fields) + "\n")  # by column name: no section
            part_of.write(f"{cid},{doc}\n")
    return chunk_path.stat().st_size + part_path.stat().st_size, multiline


def write_files(
    vectors: np.ndarray, texts: Sequence[str], directory: Path, workers: int
) -> ImportFiles:
    """The Document, Chunk and PART_OF files of chunks ``w0`` .. ``w<n-1>`` under ``directory``."""
    global _VECTORS, _TEXTS
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.csv"):
        old.unlink()
    n = len(vectors)
    out = ImportFiles(directory=directory, documents=-(-n // PER_DOC), chunks=n)
    doc_path = directory / "nodes_Document.csv"
    with doc_path.open("w", encoding="utf-8", newline="") as f:
        f.write(_header(_DOCUMENT) + "\n")
        for d in range(out.documents):
            doc = f"bench_doc_{d}"
            values = {
                "id": doc, "uri": f"bench://{doc}", "sha256": doc, "modality": "text",
                "mime": "text/plain", "title": doc, "bytes": 0, "acl": [], "tags": [],
                "ingested_at": "", "language": "en", "summary": "", "status": "complete",
                "chunk_count": min(PER_DOC, n - d * PER_DOC), "image_count": 0,
            }  # fmt: skip
            f.write(csv_values(_DOCUMENT, values, doc) + "\n")
    headers = {
        "Chunk": directory / "nodes_Chunk.csv",
        "PART_OF": directory / "relationships_PART_OF.csv",
    }
    headers["Chunk"].write_text(_header(_CHUNK) + "\n", encoding="utf-8")
    headers["PART_OF"].write_text(":START_ID(Chunk),:END_ID(Document)\n", encoding="utf-8")
    shards = max(1, min(workers, n))
    bounds = [(n * i // shards, n * (i + 1) // shards) for i in range(shards)]
    _VECTORS, _TEXTS = vectors, texts
    try:
        if shards == 1:
            results = [_write_part(directory, 0, *bounds[0])]
        else:
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(shards, mp_context=context) as pool:
                futures = [
                    pool.submit(_write_part, directory, i, a, z) for i, (a, z) in enumerate(bounds)
                ]
                results = [f.result() for f in futures]
    finally:
        _VECTORS, _TEXTS = np.zeros((0, 0), dtype=np.float32), ()
    parts = {
        label: tuple(directory / f"{kind}_{label}.{i:03d}.csv" for i in range(shards))
        for kind, label in (("nodes", "Chunk"), ("relationships", "PART_OF"))
    }
    out.files = [
        CsvFile("nodes", "Document", doc_path),
        CsvFile("nodes", "Chunk", headers["Chunk"], parts["Chunk"]),
        CsvFile("relationships", "PART_OF", headers["PART_OF"], parts["PART_OF"]),
    ]
    out.multiline = [headers["Chunk"], *parts["Chunk"]] if any(m for _, m in results) else []
    return out


def server() -> Neo4jServer:
    """The server of scripts/neo4j.sh with this process's NEO4J_* settings (ports, heap, dir)."""
    return Neo4jServer.dev_script(dev_script())


def server_pid() -> int:
    """The pid scripts/neo4j.sh recorded for the running server (0 when none)."""
    home = os.environ.get("NEO4J_DIR")
    if not home:
        raise SystemExit("--neo4j-bulk needs NEO4J_DIR (the scripts/neo4j.sh server to load)")
    try:
        return int((Path(home) / "run" / "neo4j.pid").read_text().strip())
    except (OSError, ValueError):
        return 0


def restart() -> float:
    """Stop and start the server; the seconds it took."""
    s = server()
    started = time.perf_counter()
    s.run(s.stop, "stopping Neo4j")
    s.run(s.start, "starting Neo4j")
    return time.perf_counter() - started


def bulk_load(
    vectors: np.ndarray,
    texts: Sequence[str],
    directory: Path,
    open_store: Any,
    create_index: Any,
    workers: int | None = None,
) -> BulkTimes:
    """Replace the server's database with chunks ``w0..`` of ``vectors``/``texts`` by
    neo4j-admin import, then build the schema and the vector index on the started server.
    ``open_store(migrate=...)`` opens the benchmark's store; ``create_index(store)`` creates
    the product's vector index on it. The CSV files are removed afterwards."""
    from concurrent.futures import ThreadPoolExecutor

    from kgrag.graph.migrations import migrate

    s = server()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(1) as shutdown:
        stopping = shutdown.submit(s.run, s.stop, "stopping Neo4j")
        try:
            files = write_files(vectors, texts, directory, workers or available_cpus())
        except BaseException:
            stopping.result()
            s.run(s.start, "starting Neo4j again")
            raise
        t1 = time.perf_counter()
        stopping.result()
    csv_bytes = sum(p.stat().st_size for f in files.files for p in (f.path, *f.parts))
    s.run([*s.admin, *files.admin_arguments()], "neo4j-admin database import")
    t3 = time.perf_counter()
    s.run(s.start, "starting Neo4j")
    t4 = time.perf_counter()
    for f in files.files:
        for p in (f.path, *f.parts):
            p.unlink()
    store = open_store(migrate=False)
    try:
        store.write("documents_fill_empty_lists")
        migrate(store, together=True)
        store.await_schema([], timeout_s=7200)
        t5 = time.perf_counter()
        create_index(store)
        store.await_schema([], timeout_s=7200)
        t6 = time.perf_counter()
    finally:
        store.close()
    times = BulkTimes(
        csv_s=t1 - t0,
        import_s=t3 - t1,
        restart_s=t4 - t3,
        schema_s=t5 - t4,
        vector_index_s=t6 - t5,
        csv_bytes=csv_bytes,
    )
    log.info("bulk load of %d vectors: %s (%.0f s)", len(vectors), times, times.total_s)
    return times
