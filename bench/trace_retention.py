"""How much the traces of answers grow the embedded store, and what a prune gives back.

The demo's documents are ingested into a fresh embedded store; then ``--asks`` questions are
asked (the trace_overhead questions in turn, one session in four), and the store is measured
before the asks, after them and after ``kgrag traces prune --older-than 0`` (plus an AOF rewrite,
the compaction Redis also runs by itself): nodes, relationships, the snapshot (RDB) size and the
append-only file's size, and FalkorDB's own capped log of finished queries (the
``telemetry{kgrag}`` stream, in the snapshot too). Figures: bytes a question adds, and how close
the pruned store is to its size before the asks.

    python bench/trace_retention.py [--asks 300] [--store-dir bench/.cache/trace_retention]
"""

from __future__ import annotations

import argparse
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from common import CACHE, quiet_models, write_result
from trace_overhead import QUESTIONS, _corpus

log = logging.getLogger("bench.trace_retention")


def _measure(store: Any, folder: Path) -> dict[str, int]:
    """Counts and on-disk sizes of the embedded ``store`` (after a fresh snapshot)."""
    snapshot = store.snapshot()
    aof = sum(f.stat().st_size for f in (folder / "appendonlydir").glob("kg.db.aof.*"))
    nodes = sum(int(r["n"]) for r in store.read("stats_labels"))
    rels = sum(int(r["n"]) for r in store.read("stats_relationships"))
    # FalkorDB's own log of finished queries (GRAPH.INFO), a capped stream beside the graph
    client = store._connection.connection
    telemetry = "telemetry{kgrag}"
    return {
        "nodes": nodes,
        "relationships": rels,
        "rdb_bytes": snapshot.stat().st_size,
        "aof_bytes": aof,
        "telemetry_entries": int(client.xlen(telemetry)) if client.exists(telemetry) else 0,
        "telemetry_bytes": int(client.memory_usage(telemetry) or 0),
    }


def _rewrite_aof(store: Any) -> None:
    client = store._connection.connection
    client.execute_command("BGREWRITEAOF")
    while int(client.info("persistence")["aof_rewrite_in_progress"]) or int(
        client.info("persistence")["aof_rewrite_scheduled"]
    ):
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=300, help="questions to ask")
    parser.add_argument("--store-dir", type=Path, default=CACHE / "trace_retention")
    args = parser.parse_args(argv)
    quiet_models()
    logging.basicConfig(level=logging.WARNING)

    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings
    from kgrag.retention import prune_traces

    shutil.rmtree(args.store_dir, ignore_errors=True)
    paths = _corpus(args.store_dir / "corpus")
    folder = (args.store_dir / "store").resolve()
    settings = Settings(store=f"falkordb-lite:///{folder}/kg.db", data_dir=folder)
    with KnowledgeAgent.open(settings) as agent:
        if agent.ingest(paths).failed:
            raise SystemExit("ingestion failed")
        store = agent.store
        _rewrite_aof(store)
        before = _measure(store, folder)
        started = time.perf_counter()
        for n in range(args.asks):
            session = f"s{n // 4}" if n % 4 == 0 else None
            agent.ask(QUESTIONS[n % len(QUESTIONS)], session_id=session, user="bench")
        ask_s = time.perf_counter() - started
        grown = _measure(store, folder)
        started = time.perf_counter()
        report = prune_traces(store, older_than_days=0)
        prune_s = time.perf_counter() - started
        pruned = _measure(store, folder)
        _rewrite_aof(store)
        compacted = _measure(store, folder)
    per_question = {
        k: round((grown[k] - before[k]) / args.asks, 1) for k in ("rdb_bytes", "aof_bytes")
    }
    payload = {
        "asks": args.asks,
        "ask_seconds": round(ask_s, 1),
        "prune_seconds": round(prune_s, 2),
        "pruned": report.model_dump(),
        "before": before,
        "after_asks": grown,
        "after_prune": pruned,
        "after_prune_and_aof_rewrite": compacted,
        "bytes_per_question": per_question,
        "rdb_after_prune_vs_before": round(compacted["rdb_bytes"] / before["rdb_bytes"], 4),
    }
    out = write_result("trace_retention", payload)
    for name in ("before", "after_asks", "after_prune", "after_prune_and_aof_rewrite"):
        print(f"{name:>28}: {payload[name]}")
    print(f"bytes per question: {per_question}; prune of {report.queries} in {prune_s:.2f} s")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
