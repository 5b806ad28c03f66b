"""Vector search on the embedded store: recall@10 against exact search, and latency.

The vectors are real all-MiniLM-L6-v2 embeddings of short texts cut from the MuSiQue corpus:
sliding windows of 12 and 16 words (stride 2) and whole sentences, de-duplicated and shuffled with
a fixed seed. Embedding 100k whole passages would take about an hour here; windows of a dozen
words embed at several hundred a second, and are cached in ``bench/.cache/vector`` as ``.npy``
shards so reruns are fast. Sizes are nested prefixes of one shuffled pool (1k in 10k in 100k).

Queries (200 by default) are real embeddings too, none of them in the indexed set: the 50
MuSiQue dev questions, their decomposition sub-questions, and held-out windows.

For each size and HNSW setting (M, efConstruction, efRuntime) the vectors are written as Chunk
nodes with ``GraphStore.write_rows('chunk_upsert', ...)`` into a fresh graph whose vector index
was created first (as ``ensure_space`` does), and each query runs the statement the product runs
(``vector_chunks``: index call, Document join, ACL filter) with k=10. Recall@10 is measured against
the exact top-10 by normalised dot product in numpy, whose own per-query latency is reported as
the reference.

On Neo4j (``--engines falkordb-lite,neo4j``) the index is the product's own (M 32,
efConstruction 200, no quantization, searched at least 200 wide: cypher/schema/vector_index.cypher
and cypher/vector_chunks.cypher), in the benchmark's Neo4j emptied first; the HNSW configs and the
sweep apply to FalkorDB only, whose index settings are module constants. Each run row names its
engine.

    python bench/vector_search.py --sizes 1000,10000,100000 --configs 32:200:200,16:200:100
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    CACHE,
    ENGINES,
    FALKORDB,
    NEO4J,
    ShardCache,
    latency_summary,
    load_corpus,
    load_questions,
    open_neo4j,
    quiet_models,
    stopwatch,
    write_result,
)

log = logging.getLogger("bench.vector_search")

WINDOWS = ((12, 2, 0), (16, 2, 1))  # (words, stride, offset)
SEED = 7
SHARD = 10_000
K = 10
HELD_OUT_WINDOWS = 400  # the pool's first texts, never indexed; queries take what they need
VEC_CACHE = CACHE / "vector"


@dataclass(frozen=True)
class HnswConfig:
    m: int
    ef_construction: int
    ef_runtime: int

    @classmethod
    def parse(cls, text: str) -> HnswConfig:
        m, efc, efr = (int(x) for x in text.split(":"))
        return cls(m, efc, efr)

    def label(self) -> str:
        return f"M={self.m} efC={self.ef_construction} efR={self.ef_runtime}"


# ----------------------------------------------------------------------------------- the texts


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 5]


def text_pool(
    passages: Sequence[dict[str, str]] | None = None,
    windows: Sequence[tuple[int, int, int]] = WINDOWS,
) -> list[str]:
    """Every distinct window and sentence of ``passages`` (the MuSiQue corpus by default),
    shuffled with a fixed seed. ``windows`` holds (words, stride, offset) triples."""
    seen: set[str] = set()
    pool: list[str] = []
    for passage in load_corpus() if passages is None else passages:
        words = passage["text"].split()
        candidates: list[str] = []
        for size, stride, offset in windows:
            last = max(len(words) - size, 0)
            candidates += [" ".join(words[i : i + size]) for i in range(offset, last + 1, stride)]
        candidates += _sentences(passage["text"])
        for text in candidates:
            if text and text not in seen:
                seen.add(text)
                pool.append(text)
    random.Random(SEED).shuffle(pool)  # noqa: S311 - a fixed, reproducible order
    return pool


def question_texts() -> list[str]:
    """The dev questions and their sub-questions (with the ``#1`` placeholders dropped)."""
    out: list[str] = []
    for q in load_questions():
        out.append(q["question"])
        for sub in q.get("question_decomposition", []):
            text = re.sub(r"#\d+", "", sub.get("question", "")).strip()
            if len(text.split()) >= 3:
                out.append(text)
    return list(dict.fromkeys(out))


def _embed(texts: Sequence[str]) -> np.ndarray:
    from kgrag.config import Settings
    from kgrag.modalities import factory

    embedder = factory.text_embedder(Settings())
    out = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
    step = 1024
    started = time.perf_counter()
    for start in range(0, len(texts), step):
        out[start : start + step] = np.asarray(
            embedder.embed(list(texts[start : start + step])), dtype=np.float32
        )
    log.info(
        "embedded %d texts in %.1f s (%.0f/s)",
        len(texts),
        time.perf_counter() - started,
        len(texts) / max(time.perf_counter() - started, 1e-9),
    )
    return out


def pool_cache(
    pool: Sequence[str], windows: Sequence[tuple[int, int, int]] = WINDOWS
) -> ShardCache:
    """The shard cache of ``pool``'s embeddings, keyed by how the pool was made."""
    key = hashlib.sha256(json.dumps([windows, SEED, len(pool), pool[:50]]).encode()).hexdigest()
    return ShardCache(VEC_CACHE / f"pool-{key[:12]}", SHARD)


def pool_vectors(
    pool: Sequence[str], count: int, windows: Sequence[tuple[int, int, int]] = WINDOWS
) -> tuple[np.ndarray, float]:
    """Embeddings of ``pool[:count]``, from ``.npy`` shards cached by the pool's content; a
    missing shard is embedded and stored (atomically) before the next one, so an interrupted
    run resumes at the first missing shard.

    Returns the matrix and the seconds spent embedding now (0 when all came from the cache).
    """
    cache = pool_cache(pool, windows)
    cache.discard_partials()
    parts: list[np.ndarray] = []
    spent = 0.0
    for shard in range(0, count, SHARD):
        texts = pool[shard : shard + SHARD]
        part = cache.get(shard // SHARD, len(texts))
        if part is None:
            with stopwatch() as t:
                part = _embed(texts)
            spent += t[0]
            cache.put(shard // SHARD, part)
            log.info("shard %d stored (%d of %d texts)", shard // SHARD, shard + len(texts), count)
        parts.append(part)
    return np.concatenate(parts)[:count], spent


def query_vectors(
    pool: Sequence[str], count: int, windows: Sequence[tuple[int, int, int]] = WINDOWS
) -> tuple[np.ndarray, list[str], int]:
    """``count`` query embeddings: questions and sub-questions, then held-out windows."""
    questions = question_texts()[:count]
    path = (
        VEC_CACHE / f"questions-{hashlib.sha256(''.join(questions).encode()).hexdigest()[:12]}.npy"
    )
    if path.is_file():
        q = np.load(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        q = _embed(questions)
        np.save(path, q)
    rest = count - len(questions)
    if rest > HELD_OUT_WINDOWS:
        raise SystemExit(f"at most {len(questions) + HELD_OUT_WINDOWS} queries")
    held, _ = pool_vectors(pool, HELD_OUT_WINDOWS, windows)
    kinds = ["question"] * len(questions) + ["window"] * rest
    return np.concatenate([q, held[:rest]]), kinds, len(questions)


# ------------------------------------------------------------------------------------ the store


def open_bench_store(path: Path, graph: str) -> Any:
    """A FalkorDB store for the benchmark: the product's backend and migrations, with the
    append-only file off (persistence cost belongs to the ingestion benchmark)."""
    from redislite.falkordb_client import FalkorDB

    from kgrag.graph.falkordb_store import FalkorDBStore
    from kgrag.graph.migrations import migrate

    path.parent.mkdir(parents=True, exist_ok=True)
    db = FalkorDB(str(path), serverconfig={"appendonly": "no", "save": ""})
    store = FalkorDBStore(f"falkordb-lite://{path}", db.select_graph(graph), db, server=db)
    migrate(store)
    return store


def create_index(store: Any, config: HnswConfig, dimensions: int) -> None:
    """The store's own ``create_vector_index`` with the HNSW settings under test."""
    import kgrag.graph.falkordb_store as backend
    from kgrag.graph.schema import VECTOR_INDEXES

    saved = (backend.HNSW_M, backend.HNSW_EF_CONSTRUCTION, backend.HNSW_EF_RUNTIME)
    backend.HNSW_M, backend.HNSW_EF_CONSTRUCTION, backend.HNSW_EF_RUNTIME = (
        config.m,
        config.ef_construction,
        config.ef_runtime,
    )
    try:
        store.create_vector_index(VECTOR_INDEXES["chunk_embedding"], dimensions)
    finally:
        backend.HNSW_M, backend.HNSW_EF_CONSTRUCTION, backend.HNSW_EF_RUNTIME = saved


def load(
    store: Any, vectors: np.ndarray, texts: Sequence[str], per_doc: int = 1000, first: int = 0
) -> None:
    """Write the vectors from ``first`` on as Chunk nodes (id ``w<row>``), ``per_doc`` to a
    Document, in UNWIND batches; ``first`` > 0 grows a store that holds the rows before it."""
    for start in range(first, len(vectors), per_doc):
        doc = f"bench_doc_{start // per_doc}"
        store.write(
            "documents_begin",
            {
                "rows": [
                    {
                        "id": doc,
                        "uri": f"bench://{doc}",
                        "sha256": doc,
                        "modality": "text",
                        "mime": "text/plain",
                        "title": doc,
                        "bytes": 0,
                        "acl": [],
                        "tags": [],
                        "ingested_at": "",
                        "language": "en",
                        "summary": "",
                    }
                ]
            },
        )
        rows = [
            {
                "id": f"w{i}",
                "text": texts[i],
                "position": i - start,
                "page": None,
                "start_s": None,
                "end_s": None,
                "embedding": vectors[i].tolist(),
            }
            for i in range(start, min(start + per_doc, len(vectors)))
        ]
        store.write_rows("chunk_upsert", rows, params={"document_id": doc})
        store.write(
            "documents_complete",
            {"rows": [{"id": doc, "chunk_count": len(rows), "image_count": 0}]},
        )


def exact_topk(base: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Exact top-K ids per query, and the per-query latency (ms) of doing it one at a time."""
    ids = np.zeros((len(queries), K), dtype=np.int64)
    ms: list[float] = []
    for i, q in enumerate(queries):
        started = time.perf_counter()
        scores = base @ q  # unit vectors: the dot product is the cosine similarity
        top = np.argpartition(-scores, K)[:K]
        top = top[np.argsort(-scores[top])]
        ms.append((time.perf_counter() - started) * 1000)
        ids[i] = top
    return ids, ms


#: The bare index call per engine (no Document join, no ACL), for the index-only latency. On Neo4j
#: it searches as wide as vector_chunks does (200) and keeps 10.
BARE_INDEX_CALL = {
    FALKORDB: (
        "CALL db.idx.vector.queryNodes('Chunk', 'embedding', $k, vecf32($vector)) YIELD node "
        "RETURN node.id AS id"
    ),
    NEO4J: (
        "CALL db.index.vector.queryNodes('chunk_embedding', 200, $vector) YIELD node, score "
        "RETURN node.id AS id ORDER BY score DESC LIMIT $k"
    ),
}


def open_engine_store(engine: str, db_dir: Path, graph: str) -> Any:
    """A fresh store of ``engine`` for one measurement."""
    if engine == NEO4J:
        return open_neo4j(erase=True)
    shutil.rmtree(db_dir, ignore_errors=True)
    return open_bench_store(db_dir / "vec.db", graph)


def create_engine_index(store: Any, engine: str, config: HnswConfig, dimensions: int) -> None:
    if engine == NEO4J:
        from kgrag.graph.schema import VECTOR_INDEXES

        store.create_vector_index(VECTOR_INDEXES["chunk_embedding"], dimensions)
    else:
        create_index(store, config, dimensions)


def bare_read(store: Any, engine: str, params: dict[str, Any]) -> None:
    if engine == NEO4J:
        # The driver's read path itself: read_freeform would add an EXPLAIN round trip.
        store._execute(BARE_INDEX_CALL[NEO4J], params, read_only=True)
    else:
        store.read_freeform(BARE_INDEX_CALL[FALKORDB], params)


def measure(
    store: Any, queries: np.ndarray, exact: np.ndarray, engine: str = FALKORDB
) -> tuple[list[float], list[float], list[float]]:
    """Per query: recall@10 and latency (ms) of ``vector_chunks``, and of the bare index call."""
    params = {"k": K, "admin": True, "principals": []}
    for q in queries[:10]:  # warm-up
        store.read("vector_chunks", {**params, "vector": q.tolist()})
    recalls: list[float] = []
    ms: list[float] = []
    bare_ms: list[float] = []
    for q, truth in zip(queries, exact, strict=True):
        vector = q.tolist()
        started = time.perf_counter()
        rows = store.read("vector_chunks", {**params, "vector": vector})
        ms.append((time.perf_counter() - started) * 1000)
        got = {int(r["id"][1:]) for r in rows}
        recalls.append(len(got & set(truth.tolist())) / K)
        started = time.perf_counter()
        bare_read(store, engine, {"k": K, "vector": vector})
        bare_ms.append((time.perf_counter() - started) * 1000)
    return recalls, ms, bare_ms


def run(
    sizes: Sequence[int],
    configs: Sequence[HnswConfig],
    n_queries: int,
    sweep: dict[int, list[HnswConfig]] | None = None,
    engines: Sequence[str] = (FALKORDB,),
) -> dict[str, Any]:
    """Measure every config at every size, plus the ``sweep`` configs at their sizes, on
    FalkorDB; the product's index at every size on Neo4j."""
    plan: dict[int, list[HnswConfig]] = {size: list(configs) for size in sizes}
    for size, extra in (sweep or {}).items():
        plan.setdefault(size, [])
        plan[size] += [c for c in extra if c not in plan[size]]
    sizes = sorted(plan)
    pool = text_pool()
    largest = max(sizes)
    if HELD_OUT_WINDOWS + largest > len(pool):
        raise SystemExit(
            f"the corpus gives {len(pool)} texts; at most {len(pool) - HELD_OUT_WINDOWS}"
        )
    all_vectors, embed_s = pool_vectors(pool, HELD_OUT_WINDOWS + largest)
    base_all = all_vectors[HELD_OUT_WINDOWS:]
    base_texts = pool[HELD_OUT_WINDOWS : HELD_OUT_WINDOWS + largest]
    queries, _kinds, n_questions = query_vectors(pool, n_queries)
    db_dir = VEC_CACHE / "db"
    runs: list[dict[str, Any]] = []
    exact_rows: list[dict[str, Any]] = []
    for size in sorted(sizes):
        base = np.ascontiguousarray(base_all[:size])
        truth, exact_ms = exact_topk(base, queries)
        exact_rows.append({"size": size, "latency_ms": latency_summary(exact_ms)})
        log.info("size %d: exact p50 %.2f ms", size, exact_rows[-1]["latency_ms"]["p50"])
        measured = [(FALKORDB, c) for c in plan[size] if FALKORDB in engines]
        if NEO4J in engines:
            measured.append((NEO4J, HnswConfig(32, 200, 200)))
        for engine, config in measured:
            graph = f"vec_{size}_{config.m}_{config.ef_construction}_{config.ef_runtime}"
            store = open_engine_store(engine, db_dir, graph)
            try:
                create_engine_index(store, engine, config, base.shape[1])
                with stopwatch() as t:
                    load(store, base, base_texts)
                    if engine == NEO4J:  # Neo4j fills a new index in the background
                        store.await_schema([], timeout_s=3600)
                recalls, ms, bare_ms = measure(store, queries, truth, engine)
            finally:
                store.close()
            shutil.rmtree(db_dir, ignore_errors=True)
            row: dict[str, Any] = {
                "engine": engine,
                "size": size,
                "M": config.m,
                "efConstruction": config.ef_construction,
                "efRuntime": config.ef_runtime,
                "load_s": round(t[0], 1),
                "load_rows_per_s": round(size / t[0], 1),
                "recall_at_10": round(float(np.mean(recalls)), 4),
                "recall_at_10_min": round(float(np.min(recalls)), 2),
                "latency_ms": latency_summary(ms),
                "index_only_latency_ms": latency_summary(bare_ms),
            }
            runs.append(row)
            log.info(
                "%s size %d %s: load %.1f s, recall@10 %.4f, p50 %.2f ms, p95 %.2f ms",
                engine,
                size,
                config.label(),
                row["load_s"],
                row["recall_at_10"],
                row["latency_ms"]["p50"],
                row["latency_ms"]["p95"],
            )
    return {
        "embedder": "sentence-transformers/all-MiniLM-L6-v2",
        "dimensions": int(base_all.shape[1]),
        "texts": (
            "distinct 12- and 16-word windows (stride 2) and sentences of musique_corpus.json, "
            f"shuffled (seed {SEED}); {len(pool)} in the pool"
        ),
        "k": K,
        "queries": {
            "count": len(queries),
            "questions": n_questions,
            "held_out_windows": len(queries) - n_questions,
        },
        "embedding_seconds_this_run": round(embed_s, 1),
        "exact": exact_rows,
        "runs": runs,
        "not_measured": (
            "1M vectors: the corpus gives about 125k distinct windows, and embedding 1M texts on "
            "this CPU would take over an hour; 1M x 384 float32 (1.5 GB) plus the HNSW graph "
            "would fit in 24 GiB of memory."
        ),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument(
        "--configs",
        default="32:200:200",
        help="HNSW settings M:efConstruction:efRuntime, comma-separated",
    )
    parser.add_argument(
        "--sweep",
        default="",
        help="more settings at one size, e.g. 10000=16:200:100,64:200:200",
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--engines", default=FALKORDB, help=f"comma-separated, of {', '.join(ENGINES)}"
    )
    parser.add_argument("--out", default="vector_search")
    parser.add_argument(
        "--prepare", action="store_true", help="only embed and cache the vectors, then stop"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    quiet_models()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    configs = [HnswConfig.parse(c) for c in args.configs.split(",") if c]
    if args.prepare:
        pool_vectors(text_pool(), HELD_OUT_WINDOWS + max(sizes))
        return
    sweep: dict[int, list[HnswConfig]] = {}
    if args.sweep:
        size_text, _, config_text = args.sweep.partition("=")
        sweep[int(size_text)] = [HnswConfig.parse(c) for c in config_text.split(",") if c]
    engines = [e for e in args.engines.split(",") if e]
    if unknown := set(engines) - set(ENGINES):
        parser.error(f"unknown engine(s): {', '.join(sorted(unknown))}")
    result = run(sizes, configs, args.queries, sweep, engines)
    print(write_result(args.out, result))


if __name__ == "__main__":
    main()
