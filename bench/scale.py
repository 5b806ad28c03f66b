"""Vector search at scale (``make bench-scale``, not in CI): 100k, 300k and 1M real vectors.

The texts are what ``vector_search.py`` cuts, from both corpora (``musique_corpus.json`` and the
``wiki_distractors.json`` passages): distinct windows of 8, 10, 12, 16 and 20 words (stride 2) and
whole sentences, shuffled with a fixed seed: about 1.23M texts, of which the first 400 are held
out as queries and the next 1M indexed. Sizes are nested prefixes. The embeddings
(all-MiniLM-L6-v2 on ONNX Runtime, ``KGRAG_TEXT_BACKEND=onnx``) are cached in ``.npy`` shards of
10k under ``bench/.cache/vector``, each written atomically (temporary file, then rename), so an
interrupted run (``--prepare`` is the long part: about an hour for 1M here) resumes at the first
missing shard, and a full disk stops it with an error naming the shard, losing none stored.

For each size and engine, the vectors are written with ``write_rows('chunk_upsert', ...)`` into
a fresh store whose vector index exists first (as ``ensure_space`` does), then the 200 queries
run the product's ``vector_chunks`` statement with k=10: recall@10 against exact numpy search,
p50/p95 latency, load (= index build) time, the engine process's RSS and the store's disk size.
The embedded engine is FalkorDB (falkordblite) with the product's HNSW settings; Neo4j is the
server named by ``KGRAG_BENCH_NEO4J_URI`` (its RSS from ``--neo4j-pid``, its disk from
``--neo4j-data``). On Neo4j each row also gives the server's own time for the bare index call
(the driver's round trip is the rest), and recall and latency when the index is asked for 10,
50, 100 and 200 candidates (``queryNodes``' count is also its search width; the product asks
200). ``--reuse`` measures the Neo4j store a run left, as it stands (e.g. after a server
restart), and adds that row to the result file. ``--neo4j-bulk`` loads Neo4j from empty at each
size by ``neo4j-admin`` import instead (``neo4j_bulk.py``: the vector index built after the
import, its population timed alone), as an operator would for a first load of this size.

    python bench/scale.py --prepare --sizes 1000000            # embed only (resumable)
    python bench/scale.py --sizes 100000,300000,1000000 --engines falkordb-lite,neo4j
    python bench/scale.py --sizes 300000 --engines neo4j --reuse "after a server restart"
    python bench/scale.py --neo4j-bulk --restart --sizes 1000000 --out scale_neo4j_bulk
    python bench/scale.py --plot --out scale_1m       # the plot of all PLOTTED result files
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    ENGINES,
    FALKORDB,
    NEO4J,
    RESULTS,
    ROOT,
    ShardCache,
    ShardWriteError,
    latency_summary,
    load_corpus,
    load_distractors,
    open_neo4j,
    quiet_models,
    stopwatch,
    write_result,
)
from vector_search import (
    HELD_OUT_WINDOWS,
    SEED,
    SHARD,
    VEC_CACHE,
    HnswConfig,
    K,
    create_engine_index,
    exact_topk,
    load,
    measure,
    open_engine_store,
    pool_cache,
    pool_vectors,
    query_vectors,
    text_pool,
)

log = logging.getLogger("bench.scale")

#: (words, stride, offset): five window lengths over both corpora give about 1.23M texts.
SCALE_WINDOWS = ((8, 2, 0), (10, 2, 1), (12, 2, 0), (16, 2, 1), (20, 2, 0))
#: The product's HNSW settings (kgrag/graph/falkordb_store.py, cypher/schema/vector_index.cypher).
PRODUCT_HNSW = HnswConfig(32, 200, 200)
#: Candidate counts asked of Neo4j's index (its search width too); vector_chunks asks 200.
NEO4J_WIDTHS = (10, 50, 100, 200)
NEO4J_WIDTH_QUERY = (
    "CALL db.index.vector.queryNodes('chunk_embedding', $width, $vector) YIELD node, score "
    "RETURN node.id AS id ORDER BY score DESC LIMIT $k"
)


def scale_pool() -> list[str]:
    """The shuffled pool of windows and sentences of both corpora."""
    passages = load_corpus() + load_distractors()
    return text_pool(passages, SCALE_WINDOWS)


def rss_bytes(pid: int) -> int:
    """Resident set size of process ``pid`` (``VmRSS``), 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (a file or a folder)."""
    if path.is_file():
        return path.stat().st_blocks * 512
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def _redis(store: Any) -> Any:
    """The redis client of an embedded FalkorDB store."""
    return store._connection.connection


def engine_footprint(
    store: Any, engine: str, db_dir: Path, neo4j_pid: int, neo4j_data: str
) -> dict[str, Any]:
    """RSS of the engine process and the store's size on disk (the embedded one after a save)."""
    if engine == NEO4J:
        return {
            "rss_bytes": rss_bytes(neo4j_pid) if neo4j_pid else 0,
            "disk_bytes": disk_bytes(Path(neo4j_data)) if neo4j_data else 0,
        }
    client = _redis(store)
    pid = int(client.info("server")["process_id"])
    with stopwatch() as t:  # a snapshot (the benchmark's store runs without the append-only file)
        save_snapshot(client)
    return {"rss_bytes": rss_bytes(pid), "disk_bytes": disk_bytes(db_dir), "save_s": round(t[0], 1)}


def save_snapshot(client: Any, poll_s: float = 0.5) -> None:
    """A snapshot by ``BGSAVE``, waited for without a socket timeout: a blocking ``SAVE`` of
    300k vectors outlasted the client's read timeout under load and lost the run."""
    client.bgsave()  # the child is forked before the reply
    while client.info("persistence")["rdb_bgsave_in_progress"]:
        time.sleep(poll_s)
    if client.info("persistence")["rdb_last_bgsave_status"] != "ok":
        raise SystemExit("the embedded store's snapshot failed (BGSAVE)")


def wait_for_vectors(cache: ShardCache, total: int, poll_s: float = 30.0) -> None:
    """Block until a ``--prepare`` run elsewhere has cached the first ``total`` vectors."""
    while (done := cache.complete(total)) < total:
        log.info("waiting for the embeddings: %d of %d cached", done, total)
        time.sleep(poll_s)


def neo4j_widths(
    store: Any, queries: np.ndarray, truth: np.ndarray, widths: Sequence[int] = NEO4J_WIDTHS
) -> list[dict[str, Any]]:
    """Recall@10, latency and the server's own time of the bare index call on Neo4j when it
    is asked for each of ``widths`` candidates (the best 10 kept)."""
    import neo4j

    out: list[dict[str, Any]] = []
    for width in widths:
        recalls: list[float] = []
        ms: list[float] = []
        server_ms: list[float] = []
        for q, exact in zip(queries, truth, strict=True):
            params = {"width": width, "k": K, "vector": q.tolist()}
            started = time.perf_counter()
            records, summary, _ = store._driver.execute_query(
                NEO4J_WIDTH_QUERY, params, routing_=neo4j.RoutingControl.READ
            )
            ms.append((time.perf_counter() - started) * 1000)
            server_ms.append(
                float(summary.result_available_after or 0)
                + float(summary.result_consumed_after or 0)
            )
            got = {int(r["id"][1:]) for r in records}
            recalls.append(len(got & set(exact.tolist())) / K)
        out.append(
            {
                "candidates": width,
                "recall_at_10": round(float(np.mean(recalls)), 4),
                "latency_ms": latency_summary(ms),
                "server_ms": latency_summary(server_ms),
            }
        )
    return out


def measure_row(
    store: Any,
    engine: str,
    size: int,
    queries: np.ndarray,
    truth: np.ndarray,
    db_dir: Path,
    neo4j_pid: int,
    neo4j_data: str,
    widths: Sequence[int] = NEO4J_WIDTHS,
) -> dict[str, Any]:
    """One engine measured at the ``size`` its store holds: recall, latency, memory, disk."""
    recalls, ms, bare_ms = measure(store, queries, truth, engine)
    footprint = engine_footprint(store, engine, db_dir, neo4j_pid, neo4j_data)
    row: dict[str, Any] = {
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "recall_at_10_min": round(float(np.min(recalls)), 2),
        "latency_ms": latency_summary(ms),
        "index_only_latency_ms": latency_summary(bare_ms),
        **footprint,
        "rss_bytes_per_vector": round(footprint["rss_bytes"] / size),
        "disk_bytes_per_vector": round(footprint["disk_bytes"] / size),
    }
    if engine == NEO4J and widths:
        row["neo4j_candidates"] = neo4j_widths(store, queries, truth, widths)
    row["load_average"] = round(os.getloadavg()[0], 2)
    return row


def chunk_count(store: Any) -> int:
    """The number of Chunk nodes in the benchmark's Neo4j store."""
    rows = store._execute("MATCH (c:Chunk) RETURN count(c) AS n", {}, read_only=True)
    return int(rows[0]["n"])


def previous_result(out: str) -> dict[str, Any]:
    """``bench/results/<out>.json`` without what write_result adds (it is written again)."""
    path = RESULTS / f"{out}.json"
    if not path.is_file():
        raise SystemExit(f"no {path} to add to: run the sizes first")
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    for key in ("benchmark", "measured_at", "machine"):
        doc.pop(key, None)
    return doc


def reuse(
    size: int,
    n_queries: int,
    neo4j_pid: int,
    neo4j_data: str,
    out: str,
    state: str,
    widths: Sequence[int] = NEO4J_WIDTHS,
) -> dict[str, Any]:
    """Measure the Neo4j store a run left (holding the pool's first ``size`` texts) as it
    stands, and add the row, labelled ``state``, to ``bench/results/<out>.json``."""
    pool = scale_pool()
    cache = pool_cache(pool, SCALE_WINDOWS)
    queries, _kinds, _ = query_vectors(pool, n_queries, SCALE_WINDOWS)
    parts: list[np.ndarray] = []
    for index in range(-(-(HELD_OUT_WINDOWS + size) // SHARD)):
        if (part := cache.get(index, SHARD)) is None:
            raise SystemExit(f"--reuse needs the first {size} vectors cached (run --prepare)")
        parts.append(part)
    base = np.concatenate(parts)[HELD_OUT_WINDOWS : HELD_OUT_WINDOWS + size]
    truth, _ = exact_topk(np.ascontiguousarray(base), queries)
    doc = previous_result(out)
    store = open_neo4j(erase=False)
    try:
        if (held := chunk_count(store)) != size:
            raise SystemExit(f"the Neo4j store holds {held} chunks, not {size}")
        row = measure_row(store, NEO4J, size, queries, truth, Path(), neo4j_pid, neo4j_data, widths)
    finally:
        store.close()
    doc["runs"].append({"engine": NEO4J, "size": size, "state": state, **row})
    write_result(out, doc)
    return doc


def run(
    sizes: Sequence[int],
    engines: Sequence[str],
    n_queries: int,
    neo4j_pid: int = 0,
    neo4j_data: str = "",
    out: str = "scale",
    wait: bool = False,
    resume: bool = False,
    widths: Sequence[int] = NEO4J_WIDTHS,
) -> dict[str, Any]:
    """Grow one store per engine through ``sizes`` (nested prefixes of the pool) and measure
    each at each size. The load time at a size is the total to reach it. The result file is
    rewritten after every row, so a run stopped at 1M keeps the smaller sizes. ``resume``
    (Neo4j only) grows the store a run left from the size it holds, which ``out`` must have
    measured, adding to that row's load time."""
    sizes = sorted(sizes)
    pool = scale_pool()
    if HELD_OUT_WINDOWS + sizes[-1] > len(pool):
        raise SystemExit(
            f"the corpora give {len(pool)} texts; at most {len(pool) - HELD_OUT_WINDOWS}"
        )
    cache = pool_cache(pool, SCALE_WINDOWS)
    if wait:
        wait_for_vectors(cache, HELD_OUT_WINDOWS + SHARD)
    queries, _kinds, n_questions = query_vectors(pool, n_queries, SCALE_WINDOWS)
    texts = pool[HELD_OUT_WINDOWS : HELD_OUT_WINDOWS + sizes[-1]]
    db_dir = VEC_CACHE / "scale-db"
    result: dict[str, Any] = {
        "embedder": "sentence-transformers/all-MiniLM-L6-v2 on ONNX Runtime",
        "texts": (
            "distinct 8/10/12/16/20-word windows (stride 2) and sentences of musique_corpus.json "
            f"and wiki_distractors.json, shuffled (seed {SEED}); {len(pool)} in the pool"
        ),
        "k": K,
        "hnsw": {
            "M": PRODUCT_HNSW.m,
            "efConstruction": PRODUCT_HNSW.ef_construction,
            "efRuntime": PRODUCT_HNSW.ef_runtime,
        },
        "queries": {
            "count": len(queries),
            "questions": n_questions,
            "held_out_windows": len(queries) - n_questions,
        },
        "method": (
            "one store per engine grown through the sizes with write_rows('chunk_upsert') in "
            "batches of 1000 (index created first); load_s is the total to reach the size"
        ),
        "embedding_seconds_this_run": 0.0,
        "exact": [],
        "runs": [],
    }
    stores: dict[str, Any] = {}
    load_s = dict.fromkeys(engines, 0.0)
    total = HELD_OUT_WINDOWS + sizes[-1]
    matrix = np.zeros((total, queries.shape[1]), dtype=np.float32)
    have = 0  # rows of ``matrix`` filled from the cache
    loaded = 0  # rows (after the held-out ones) in the stores
    try:
        if resume:
            if list(engines) != [NEO4J]:
                raise SystemExit("--resume grows a Neo4j store only: --engines neo4j")
            stores[NEO4J] = open_neo4j(erase=False)
            loaded = chunk_count(stores[NEO4J])
            result = previous_result(out)
            before = [
                r["load_s"]
                for r in result["runs"]
                if r["engine"] == NEO4J and r["size"] == loaded and "load_s" in r
            ]
            if not before:
                raise SystemExit(f"{out}.json has no Neo4j row at {loaded}, the size it holds")
            load_s[NEO4J] = before[0]
            log.info("resuming at %d chunks (%.1f s to load them)", loaded, before[0])
        for engine in engines if not resume else ():
            stores[engine] = open_engine_store(engine, db_dir, "scale")
            create_engine_index(stores[engine], engine, PRODUCT_HNSW, queries.shape[1])
        # Grow shard by shard (so loading overlaps a --prepare run), measuring at each size.
        steps = sorted({*range(SHARD, sizes[-1], SHARD), *sizes} - set(range(loaded + 1)))
        for target in steps:
            while have < HELD_OUT_WINDOWS + target:
                index, rows = have // SHARD, min(SHARD, len(pool) - have)
                if wait:
                    wait_for_vectors(cache, have + rows)
                part = cache.get(index, rows)
                if part is None:  # not cached: embed it here
                    part, embed_s = pool_vectors(pool, have + rows, SCALE_WINDOWS)
                    part = part[have:]
                    result["embedding_seconds_this_run"] += round(embed_s, 1)
                end = min(have + rows, total)
                matrix[have:end] = part[: end - have]
                have = end
            base = matrix[HELD_OUT_WINDOWS : HELD_OUT_WINDOWS + target]
            for engine, store in stores.items():
                with stopwatch() as t:
                    load(store, base, texts[:target], first=loaded)
                    if engine == NEO4J:  # Neo4j fills its index in the background
                        store.await_schema([], timeout_s=7200)
                load_s[engine] += t[0]
            loaded = target
            log.info("loaded %d: %s", target, {e: round(v, 1) for e, v in load_s.items()})
            if target not in sizes:
                continue
            truth, exact_ms = exact_topk(np.ascontiguousarray(base), queries)
            result["exact"].append({"size": target, "latency_ms": latency_summary(exact_ms)})
            for engine, store in stores.items():
                row = measure_row(
                    store, engine, target, queries, truth, db_dir, neo4j_pid, neo4j_data, widths
                )
                row = {
                    "engine": engine,
                    "size": target,
                    "load_s": round(load_s[engine], 1),
                    "load_rows_per_s": round(target / load_s[engine], 1),
                    **row,
                }
                result["runs"].append(row)
                log.info("%s", json.dumps(row))
                write_result(out, result)
    finally:
        for store in stores.values():
            store.close()
        shutil.rmtree(db_dir, ignore_errors=True)
    return result


def cached_matrix(pool: Sequence[str], total: int) -> np.ndarray:
    """The first ``total`` cached embeddings of ``pool`` (all must be cached: ``--prepare``)."""
    cache = pool_cache(pool, SCALE_WINDOWS)
    parts: list[np.ndarray] = []
    for index in range(-(-total // SHARD)):
        if (part := cache.get(index, min(SHARD, len(pool) - index * SHARD))) is None:
            raise SystemExit(f"the first {total} vectors are not all cached: run --prepare")
        parts.append(part)
    return np.concatenate(parts)[:total]


def run_bulk(
    sizes: Sequence[int],
    n_queries: int,
    out: str,
    restart: bool,
    widths: Sequence[int] = NEO4J_WIDTHS,
) -> dict[str, Any]:
    """Neo4j loaded from empty at each of ``sizes`` by neo4j-admin import (bench/neo4j_bulk.py),
    its vector index built after the import, measured as loaded and (``restart``) after a
    server restart. Rows are added to ``bench/results/<out>.json`` (created when missing)."""
    import neo4j_bulk

    sizes = sorted(sizes)
    pool = scale_pool()
    queries, _kinds, n_questions = query_vectors(pool, n_queries, SCALE_WINDOWS)
    matrix = cached_matrix(pool, HELD_OUT_WINDOWS + sizes[-1])
    texts = pool[HELD_OUT_WINDOWS : HELD_OUT_WINDOWS + sizes[-1]]
    data = Path(os.environ["NEO4J_DIR"]) / "data"
    path = RESULTS / f"{out}.json"
    doc = previous_result(out) if path.is_file() else {"exact": [], "runs": []}
    doc["bulk_method"] = (
        "each size loaded into an emptied database by neo4j-admin database import full of CSV "
        "files written from the cached vectors (bench/neo4j_bulk.py, kgrag.graph.bulk_import's "
        "columns and arguments), then the schema migrations and the product's chunk_embedding "
        "index created and awaited ONLINE; load_s is CSV + import + restart + schema + vector "
        "index"
    )
    doc["queries"] = {"count": len(queries), "questions": n_questions}
    for size in sizes:
        base = np.ascontiguousarray(matrix[HELD_OUT_WINDOWS : HELD_OUT_WINDOWS + size])
        times = neo4j_bulk.bulk_load(
            base,
            texts[:size],
            VEC_CACHE / "neo4j-import",
            lambda migrate: open_neo4j(erase=False, migrate=migrate),
            lambda store: create_engine_index(store, NEO4J, PRODUCT_HNSW, queries.shape[1]),
        )
        if (held := chunk_count_of(size)) != size:
            raise SystemExit(f"the import left {held} chunks, not {size}")
        truth, exact_ms = exact_topk(base, queries)
        doc["exact"] = [e for e in doc["exact"] if e["size"] != size]
        doc["exact"].append({"size": size, "latency_ms": latency_summary(exact_ms)})
        states = ["bulk import, as loaded"] + (
            ["bulk import, after a server restart"] if restart else []
        )
        for state in states:
            restart_s = 0.0
            if state != states[0]:
                restart_s = neo4j_bulk.restart()
            store = open_neo4j(erase=False, migrate=False)
            try:
                row = measure_row(
                    store,
                    NEO4J,
                    size,
                    queries,
                    truth,
                    Path(),
                    neo4j_bulk.server_pid(),
                    str(data),
                    widths,
                )
            finally:
                store.close()
            extra: dict[str, Any] = {}
            if state == states[0]:
                extra = {
                    "load_s": round(times.total_s, 1),
                    "load_rows_per_s": round(size / times.total_s, 1),
                    "bulk_stages_s": {
                        "csv": round(times.csv_s, 1),
                        "import": round(times.import_s, 1),
                        "restart": round(times.restart_s, 1),
                        "schema": round(times.schema_s, 1),
                        "vector_index": round(times.vector_index_s, 1),
                    },
                    "csv_bytes": times.csv_bytes,
                }
            else:
                extra = {"restart_s": round(restart_s, 1)}
            full = {"engine": NEO4J, "size": size, "state": state, **extra, **row}
            doc["runs"].append(full)
            log.info("%s", json.dumps(full))
            write_result(out, doc)
    return doc


def chunk_count_of(size: int) -> int:
    """The Chunk count of the benchmark's Neo4j store (``size`` only names the expectation)."""
    store = open_neo4j(erase=False, migrate=False)
    try:
        return chunk_count(store)
    finally:
        store.close()


#: Result files drawn together (those that exist): the embedded engine's run to 1M, Neo4j's
#: transactional runs and its bulk-loaded ones (--neo4j-bulk).
PLOTTED = ("scale_1m", "scale_neo4j", "scale_neo4j_bulk")


#: The lines drawn: (legend, engine, state of the rows, colour); other states are points.
SERIES = (
    (FALKORDB, FALKORDB, None, "tab:blue"),
    (NEO4J, NEO4J, None, "tab:red"),
    ("neo4j, bulk import", NEO4J, "bulk import, as loaded", "tab:purple"),
)


def plotted_results(out: str) -> dict[str, Any]:
    """The runs of result ``out``, or of all PLOTTED files when it is one of them, as one
    document; rows measured again in another state (``--reuse``) are drawn as points."""
    runs: list[dict[str, Any]] = []
    exact: dict[int, Any] = {}
    for name in PLOTTED if out in PLOTTED else (out,):
        path = RESULTS / f"{name}.json"
        if path.is_file():
            doc = json.loads(path.read_text(encoding="utf-8"))
            runs += doc["runs"]
            exact.update({e["size"]: e for e in doc.get("exact", [])})
    return {"runs": runs, "exact": [exact[size] for size in sorted(exact)]}


def plot(doc: dict[str, Any], path: Path) -> Path:
    """Recall, latency, load time and memory per vector against size, one line per engine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4), dpi=100)
    panels = (
        (axes[0][0], "recall@10 vs exact", lambda r: r["recall_at_10"], None),
        (axes[0][1], "vector_chunks latency (ms)", lambda r: r["latency_ms"]["p50"], "p95"),
        (axes[1][0], "load + index build (s)", lambda r: r["load_s"], None),
        (axes[1][1], "engine RSS per vector (bytes)", lambda r: r["rss_bytes_per_vector"], None),
    )
    for ax, title, value, second in panels:
        for name, engine, state, color in SERIES:
            runs = sorted(
                (r for r in doc["runs"] if r["engine"] == engine and r.get("state") == state),
                key=lambda r: r["size"],
            )
            if not runs:
                continue
            sizes = [r["size"] for r in runs]
            ax.plot(
                sizes,
                [value(r) for r in runs],
                "o-",
                color=color,
                label=f"{name} p50" if second else name,
            )
            if second:
                ax.plot(
                    sizes,
                    [r["latency_ms"][second] for r in runs],
                    "o--",
                    color=color,
                    label=f"{name} p95",
                )
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("vectors (MiniLM, 384-d)")
        ax.legend(fontsize=6)
    drawn = {state for _, _, state, _ in SERIES}
    for r in doc["runs"]:  # a store measured again (after a restart): a point of its own
        if r.get("state") not in drawn:
            axes[0][1].plot(
                [r["size"]],
                [r["latency_ms"]["p50"]],
                "s",
                color="tab:orange" if "bulk" not in r["state"] else "tab:purple",
                label=f"{r['engine']} p50, {r['state']}",
            )
            axes[0][1].legend(fontsize=6)
    axes[0][0].axhline(0.95, color="grey", lw=0.8, ls=":")
    axes[0][1].axhline(20, color="grey", lw=0.8, ls=":")
    axes[0][1].set_yscale("log")
    axes[1][1].set_yscale("log")
    fig.suptitle(
        f"Vector search at scale (load average {max(r['load_average'] for r in doc['runs']):.0f} "
        "on 2 cores during the run)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def table(doc: dict[str, Any]) -> str:
    """The result as a Markdown table for BENCHMARKS.md (a ``--reuse`` row names its state)."""
    exact = {e["size"]: f"{e['latency_ms']['p50']:.1f}" for e in doc["exact"]}
    lines = [
        "| vectors | engine | recall@10 (min) | p50 ms | p95 ms | index call p50 ms "
        "| exact numpy p50 ms | load + build s (rows/s) | RSS MiB (B/vector) "
        "| disk MiB (B/vector) | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(doc["runs"], key=lambda r: (r["size"], r["engine"], r.get("state", ""))):
        engine = f"{r['engine']} ({r['state']})" if "state" in r else r["engine"]
        load_s = f"{r['load_s']:,.0f} ({r['load_rows_per_s']:.0f})" if "load_s" in r else "-"
        lines.append(
            f"| {r['size']:,} | {engine} "
            f"| {r['recall_at_10']:.4f} ({r['recall_at_10_min']:.1f}) "
            f"| {r['latency_ms']['p50']:.1f} | {r['latency_ms']['p95']:.1f} "
            f"| {r['index_only_latency_ms']['p50']:.1f} | {exact.get(r['size'], '-')} "
            f"| {load_s} "
            f"| {r['rss_bytes'] / 2**20:,.0f} ({r['rss_bytes_per_vector']:,}) "
            f"| {r['disk_bytes'] / 2**20:,.0f} ({r['disk_bytes_per_vector']:,}) "
            f"| {r['load_average']:.0f} |"
        )
    return "\n".join(lines)


def _exit_on_sigterm() -> None:
    """SIGTERM (a ``kill``, a CI timeout) raises SystemExit in the main thread, so that the
    ``finally`` of :func:`run` closes the stores: the embedded store's redis-server stops with
    the script instead of being left running (Python's default for SIGTERM is to die at once)."""

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--engines", default=FALKORDB, help=f"comma-separated, of {', '.join(ENGINES)}"
    )
    parser.add_argument("--neo4j-pid", type=int, default=0, help="the Neo4j server's process id")
    parser.add_argument("--neo4j-data", default="", help="the Neo4j server's data folder")
    parser.add_argument("--out", default="scale")
    parser.add_argument(
        "--neo4j-widths",
        default=",".join(map(str, NEO4J_WIDTHS)),
        help="candidate counts to measure Neo4j's bare index call at ('' for none)",
    )
    parser.add_argument(
        "--wait",
        action="store_true",
        help="wait for a --prepare run to cache each size's vectors instead of embedding them",
    )
    parser.add_argument(
        "--prepare", action="store_true", help="only embed and cache the vectors, then stop"
    )
    parser.add_argument(
        "--plot",
        action="store_true",
        help="only draw docs/bench/scale_vectors.png and print the table from --out (with "
        f"--out {PLOTTED[0]}: from {', '.join(PLOTTED)})",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="grow the Neo4j store a run left from the size it holds (measured in --out)",
    )
    parser.add_argument(
        "--reuse",
        metavar="STATE",
        default="",
        help="measure the Neo4j store a run left (at --sizes, one size) as it stands, e.g. "
        "'after a server restart', and add the row to --out",
    )
    parser.add_argument(
        "--neo4j-bulk",
        action="store_true",
        help="load Neo4j (NEO4J_DIR's scripts/neo4j.sh server) from empty at each size by "
        "neo4j-admin import, the vector index built after; rows added to --out",
    )
    parser.add_argument(
        "--restart",
        action="store_true",
        help="with --neo4j-bulk: also measure each size after a server restart",
    )
    args = parser.parse_args(argv)
    if args.plot:
        doc = plotted_results(args.out)
        print(plot(doc, ROOT / "docs" / "bench" / "scale_vectors.png"))
        print(table(doc))
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    _exit_on_sigterm()
    quiet_models()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    widths = [int(w) for w in args.neo4j_widths.split(",") if w]
    if args.prepare:
        pool = scale_pool()
        cache = pool_cache(pool, SCALE_WINDOWS)
        total = HELD_OUT_WINDOWS + max(sizes)
        log.info("%s: %d of %d texts cached", cache.folder, cache.complete(total), total)
        started = time.perf_counter()
        try:
            _, spent = pool_vectors(pool, total, SCALE_WINDOWS)
        except ShardWriteError as exc:
            raise SystemExit(f"bench-scale: {exc}") from exc
        log.info(
            "all %d cached (%.0f s embedding, %.0f s in all)",
            total,
            spent,
            time.perf_counter() - started,
        )
        return
    if args.neo4j_bulk:
        run_bulk(sizes, args.queries, args.out, args.restart, widths)
        print(RESULTS / f"{args.out}.json")
        return
    if args.reuse:
        if len(sizes) != 1:
            parser.error("--reuse measures one size")
        reuse(
            sizes[0],
            args.queries,
            args.neo4j_pid,
            args.neo4j_data,
            args.out,
            args.reuse,
            widths,
        )
        print(RESULTS / f"{args.out}.json")
        return
    engines = [e for e in args.engines.split(",") if e]
    if unknown := set(engines) - set(ENGINES):
        parser.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    result = run(
        sizes,
        engines,
        args.queries,
        args.neo4j_pid,
        args.neo4j_data,
        args.out,
        args.wait,
        args.resume,
        widths,
    )
    print(write_result(args.out, result))
    try:
        print(plot(plotted_results(args.out), ROOT / "docs" / "bench" / "scale_vectors.png"))
    except ImportError:
        log.warning("matplotlib is missing (pip install --group bench): no plot")


if __name__ == "__main__":
    main()
