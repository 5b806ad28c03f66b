"""Trace retention measured on both engines (issue 22 item 3): how much the traces of many answers
grow a demo store, what ``kgrag traces prune`` (and the store's compaction) gives back, and the
``ask`` latency while a prune runs.

The demo store (``kgrag demo``'s corpus: text, PDF, images, recording) is built; its own demo
answers are pruned and the store compacted, which is the size "before". Then up to ``--asks``
questions are asked (the demo's questions in turn, one in four in a session), stopping early at
``--max-ask-seconds``, from ``--ask-threads`` threads; the store is measured; a prune of
everything asked so far runs in a thread while the main thread keeps asking (latency "during
prune"), after ``--warmup`` untimed asks and ``--probe`` asks without a prune (latency "idle"),
once for each ``--prune DUTY[:BATCH]`` (its duty cycle, :class:`kgrag.retention.Pacer`), each
starting from the store as the asks left it (``--asked-copy DIR``: a snapshot of the embedded
store, a ``neo4j-admin database dump`` of Neo4j, restored before each run; a later run with the
same DIR starts from it without building or asking anything); a prune compacts the store when done
(:func:`kgrag.retention.compact`), and the size is measured again; then ``--second`` more
asks and a prune show whether the space a prune freed is reused (``--rounds`` times: the
steady state of a store under retention). Finally (``--rebuild``, the default) the store is
closed and ``kgrag db compact`` runs as an operator would run it, with no other process on the
store: the embedded store is rebuilt with new ids; Neo4j is rebuilt offline with
``neo4j-admin database import`` (:mod:`kgrag.graph.neo4j_rebuild`: the server must be the one
``scripts/neo4j.sh`` runs with this process's NEO4J_* settings), measured, then restarted cleanly
(``scripts/neo4j.sh stop`` / ``start``) and measured again. Sizes: the embedded store's
snapshot (RDB) and append-only files; Neo4j's store files and transaction logs, apart
(``--neo4j-data``: the server's data folder).

    python bench/trace_retention.py --engine falkordb-lite [--asks 10000] [--max-ask-seconds 1800]
    python bench/trace_retention.py --engine neo4j --neo4j-data .neo4j/5.26.0/data
    python bench/trace_retention.py --asks 10000 --ask-threads 2 --warmup 20 --probe 150 \
        --prune 0.5 --prune 0.25 --prune 0.1 --asked-copy bench/.cache/asked --second 0 \
        --rounds 0 --no-rebuild --suffix _duty       # ask latency during a prune, by duty cycle
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from common import CACHE, ENGINES, FALKORDB, ROOT, latency_summary, quiet_models, write_result

log = logging.getLogger("bench.trace_retention")

QUESTIONS = [
    "Who maintains the Pressure Valve PV-7?",
    "Who maintains the Feed Pump FP-2?",
    "Who approves every shutdown?",
    "What happened to the Feed Pump FP-2 on 3 March?",
    "Who replaced the seal of the Feed Pump FP-2?",
    "What did the meeting agree to replace?",
    "What does the manual say about the relief pressure?",
    "Who maintains the part that the meeting agreed to replace?",
]


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.is_dir() else 0


def _measure(store: Any, engine: str, folder: Path) -> dict[str, int]:
    """Counts and on-disk sizes (a fresh snapshot first on the embedded store)."""
    nodes = sum(int(r["n"]) for r in store.read("stats_labels"))
    rels = sum(int(r["n"]) for r in store.read("stats_relationships"))
    out = {"nodes": nodes, "relationships": rels}
    if engine == FALKORDB:
        snapshot = store.snapshot()
        aof = sum(f.stat().st_size for f in (folder / "appendonlydir").glob("kg.db.aof.*"))
        client = store._connection.connection
        telemetry = "telemetry{kgrag}"
        out |= {
            "rdb_bytes": snapshot.stat().st_size,
            "aof_bytes": aof,
            "disk_bytes": snapshot.stat().st_size + aof,
            "used_memory": int(client.info("memory")["used_memory"]),
            "telemetry_entries": int(client.xlen(telemetry)) if client.exists(telemetry) else 0,
        }
    else:
        store_files = _folder_bytes(folder / "databases" / "neo4j")
        tx_logs = _folder_bytes(folder / "transactions" / "neo4j")
        out |= {
            "store_bytes": store_files,
            "tx_log_bytes": tx_logs,
            "disk_bytes": store_files + tx_logs,
        }
    return out


def _id_buffer_bytes(folder: Path) -> int:
    """Neo4j's buffer of freed ids (``id-buffer.tmp.*``), released at a clean stop."""
    return sum(f.stat().st_size for f in folder.rglob("id-buffer.tmp*") if f.is_file())


def _compact_command(store_uri: str) -> dict[str, Any]:
    """``kgrag db compact --json`` in a process of its own, as an operator runs it; its report
    and its wall time."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kgrag", "db", "compact", "--json", "--store", store_uri],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"kgrag db compact failed ({done.returncode}): {done.stderr[-2000:]}")
    return {"report": json.loads(done.stdout), "seconds": round(seconds, 2)}


def _neo4j_script(action: str) -> float:
    """``scripts/neo4j.sh stop|start`` with this process's NEO4J_* settings; its seconds."""
    started = time.perf_counter()
    subprocess.run(
        ["bash", "scripts/neo4j.sh", action], cwd=ROOT, check=True, stdout=subprocess.DEVNULL
    )
    return round(time.perf_counter() - started, 1)


def _rebuild(engine: str, store_uri: str, folder: Path) -> dict[str, Any]:
    """With the store closed: ``kgrag db compact``, then (Neo4j) a clean restart; the sizes."""
    from kgrag.graph import open_store

    credentials: dict[str, Any] = {}
    if engine != FALKORDB:
        from kgrag.config import Settings

        env = Settings(store=store_uri)
        credentials = {
            "neo4j_user": env.neo4j_user,
            "neo4j_password": env.neo4j_password.get_secret_value(),
        }
    out: dict[str, Any] = {"compact": _compact_command(store_uri)}
    print(f"kgrag db compact: {out['compact']}", flush=True)
    if engine != FALKORDB:
        # the command rebuilt the database offline and started the server: measured as it left
        # it, then once more after a clean restart (a checkpoint, the freed-id buffer released)
        store = open_store(store_uri, run_migrations=False, **credentials)
        try:
            out["after_compact"] = _measure(store, engine, folder)
        finally:
            store.close()
        print(f"after compact: {out['after_compact']}", flush=True)
        out["id_buffer_bytes_before_restart"] = _id_buffer_bytes(folder)
        out["stop_seconds"] = _neo4j_script("stop")
        out["stopped_store_bytes"] = _folder_bytes(folder / "databases" / "neo4j")
        out["id_buffer_bytes_stopped"] = _id_buffer_bytes(folder)
        out["start_seconds"] = _neo4j_script("start")
    store = open_store(store_uri, run_migrations=False, **credentials)
    try:
        out["after"] = _measure(store, engine, folder)
    finally:
        store.close()
    if engine != FALKORDB:
        out["id_buffer_bytes_after_restart"] = _id_buffer_bytes(folder)
    return out


def _ask(agent: Any, n: int) -> float:
    session = f"s{n // 4}" if n % 4 else None
    started = time.perf_counter()
    agent.ask(QUESTIONS[n % len(QUESTIONS)], session_id=session, user=f"u{n % 7}")
    return (time.perf_counter() - started) * 1000


def _ask_many(agent: Any, count: int, max_seconds: float, threads: int) -> list[float]:
    """Ask up to ``count`` questions (fewer after ``max_seconds``) from ``threads`` threads; a
    session's four questions (:func:`_ask`) are asked in turn by one thread. The latencies."""
    latencies: list[float] = []
    started = time.perf_counter()
    lock = threading.Lock()

    def worker(first_group: int) -> None:
        group = first_group
        while time.perf_counter() - started < max_seconds:
            for n in range(group * 4, min(group * 4 + 4, count)):
                ms = _ask(agent, n)
                with lock:
                    latencies.append(ms)
                    if len(latencies) % 500 == 0:
                        took = time.perf_counter() - started
                        print(f"{len(latencies)} asks, {took:.0f} s", flush=True)
            group += threads
            if group * 4 >= count:
                return

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return latencies


def _prune_spec(text: str) -> tuple[float, int]:
    """``DUTY`` or ``DUTY:BATCH`` (``--prune``)."""
    from kgrag.retention import DEFAULT_BATCH, check_duty

    duty, _, batch = text.partition(":")
    try:
        return check_duty(float(duty)), int(batch) if batch else DEFAULT_BATCH
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: DUTY[:BATCH], {e}") from None


def _neo4j_admin(*args: str) -> None:
    done = subprocess.run(
        ["bash", "scripts/neo4j.sh", "admin", *args], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"neo4j-admin {' '.join(args)} failed: {done.stderr[-2000:]}")


def _save_copy(engine: str, store: Any, copy: Path) -> None:
    """Keep the store as it is now in ``copy`` (the embedded store: a snapshot of the open
    store; Neo4j: ``neo4j-admin database dump`` with the server stopped and started again,
    so ``store`` must be closed)."""
    copy.mkdir(parents=True, exist_ok=True)
    if engine == FALKORDB:
        from kgrag.graph.backup import backup

        backup(store, copy / "kg.rdb")
    else:
        _neo4j_script("stop")
        _neo4j_admin("database", "dump", "neo4j", f"--to-path={copy}", "--overwrite-destination")
        _neo4j_script("start")


def _restore_copy(engine: str, db: Path, copy: Path) -> float:
    """Put the store back as :func:`_save_copy` kept it (every store closed); the seconds."""
    started = time.perf_counter()
    if engine == FALKORDB:
        from kgrag.graph.backup import restore

        for kept in restore(db, copy / "kg.rdb").kept:
            Path(kept).unlink()
    else:
        _neo4j_script("stop")
        _neo4j_admin(
            "database", "load", "neo4j", f"--from-path={copy}", "--overwrite-destination=true"
        )
        _neo4j_script("start")
    return round(time.perf_counter() - started, 1)


def _prune_while_asking(
    agent: Any, first: int, duty: float, batch: int, probe: int, warmup: int, after: int
) -> dict[str, Any]:
    """``warmup`` asks, ``probe`` asks timed without a prune (idle), then a prune of every
    trace at ``duty`` in a thread while the main thread keeps asking (during), then ``after``
    asks timed without a prune (on the pruned store)."""
    from kgrag.retention import Pacer, prune_traces

    for i in range(warmup):
        _ask(agent, first + i)
    first += warmup
    load_before = os.getloadavg()
    idle = [_ask(agent, first + i) for i in range(probe)]
    first += probe
    reports: list[Any] = []
    prune_s: list[float] = []

    def prune() -> None:
        t = time.perf_counter()
        reports.append(prune_traces(agent.store, older_than_days=0, batch=batch, pacer=Pacer(duty)))
        prune_s.append(time.perf_counter() - t)

    pruner = threading.Thread(target=prune)
    during: list[float] = []
    pruner.start()
    while pruner.is_alive():
        during.append(_ask(agent, first + len(during)))
    pruner.join()
    if not reports:
        raise SystemExit("the prune failed (its thread printed why)")
    first += len(during)
    idle_after = [_ask(agent, first + i) for i in range(after)]
    first += after
    idle_s, during_s = latency_summary(idle), latency_summary(during)
    # the prune shrinks the store as it goes, so the asks during it meet every size from the
    # full store to the pruned one: their idle figure is about the mean of before and after
    after_s = latency_summary(idle_after) if idle_after else idle_s
    mid_p50, mid_p95 = ((idle_s[q] + after_s[q]) / 2 for q in ("p50", "p95"))
    run = {
        "duty": duty,
        "batch": batch,
        "prune_seconds": round(prune_s[0], 2),
        "pruned": reports[0].model_dump(),
        "ask_latency_idle_ms": idle_s,
        "ask_latency_during_prune_ms": during_s,
        "asks_idle": len(idle),
        "asks_during_prune": len(during),
        "ask_latency_idle_after_ms": latency_summary(idle_after),
        "asks_idle_after": after,
        "p50_during_vs_idle": round(during_s["p50"] / idle_s["p50"], 3),
        "p95_during_vs_idle": round(during_s["p95"] / idle_s["p95"], 3),
        "p50_during_vs_idle_mid": round(during_s["p50"] / mid_p50, 3),
        "p95_during_vs_idle_mid": round(during_s["p95"] / mid_p95, 3),
        "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
        "asked_after": first,
    }
    print(f"prune at duty {duty}, batch {batch}: {run}", flush=True)
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=ENGINES, default=FALKORDB)
    parser.add_argument("--asks", type=int, default=10_000, help="questions to ask at most")
    parser.add_argument("--max-ask-seconds", type=float, default=1800.0)
    parser.add_argument(
        "--ask-threads", type=int, default=1, help="threads asking the --asks questions"
    )
    parser.add_argument("--probe", type=int, default=40, help="asks timed without a prune")
    parser.add_argument("--warmup", type=int, default=0, help="asks before the probe, untimed")
    parser.add_argument(
        "--idle-after", type=int, default=0, help="asks timed after each prune (pruned store)"
    )
    parser.add_argument(
        "--prune",
        type=_prune_spec,
        action="append",
        metavar="DUTY[:BATCH]",
        help="a prune while asking at this duty cycle (and batch); repeat it to compare (with "
        "--asked-copy each starts from the store as the asks left it; default: the defaults "
        "of kgrag.retention)",
    )
    parser.add_argument(
        "--asked-copy",
        type=Path,
        help="a folder keeping the store as the asks left it: made there by the first run, "
        "reused (no demo build, no asks) by the next ones",
    )
    parser.add_argument(
        "--second", type=int, default=1000, help="asks (then a prune) after the first prune"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="rounds of --second asks and a prune (steady state)"
    )
    parser.add_argument(
        "--rebuild",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="at the end, close the store and run `kgrag db compact` (Neo4j: and restart it)",
    )
    parser.add_argument("--suffix", default="", help="added to the result's name")
    parser.add_argument("--workdir", type=Path, default=CACHE / "trace_retention")
    parser.add_argument("--neo4j-data", type=Path, help="the Neo4j server's data folder")
    args = parser.parse_args(argv)
    quiet_models()
    logging.basicConfig(level=logging.WARNING)

    from rich.console import Console

    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import DEFAULT_PRUNE_DUTY, Settings
    from kgrag.demo.run import run_demo
    from kgrag.retention import DEFAULT_BATCH, compact, prune_traces

    prunes = args.prune or [(DEFAULT_PRUNE_DUTY, DEFAULT_BATCH)]
    workdir = args.workdir / args.engine
    copy = args.asked_copy.resolve() / args.engine if args.asked_copy else None
    marker = copy / "asked.json" if copy else None
    reuse = marker is not None and marker.is_file()
    if not reuse:
        shutil.rmtree(workdir, ignore_errors=True)
    db = (workdir / "store" / "kg.db").resolve()
    if args.engine == FALKORDB:
        settings = Settings(store=f"falkordb-lite:///{db}", data_dir=db.parent)
        folder = db.parent
    else:
        if args.neo4j_data is None:
            raise SystemExit("--neo4j-data is needed on Neo4j (the server's data folder)")
        settings = Settings(store=os.environ["KGRAG_BENCH_NEO4J_URI"])
        folder = args.neo4j_data.resolve()
    if reuse:
        assert marker is not None and copy is not None
        asked = json.loads(marker.read_text(encoding="utf-8"))
        print(f"reusing the store after {asked['asks']} asks kept in {copy}", flush=True)
    else:
        started = time.perf_counter()
        demo = run_demo(workdir, Console(quiet=True), None if args.engine == FALKORDB else settings)
        build_s = time.perf_counter() - started
        with KnowledgeAgent.open(settings) as agent:
            store = agent.store
            prune_traces(store, older_than_days=0)
            compact(store)
            before = _measure(store, args.engine, folder)
            print(f"before: {before}", flush=True)
            started = time.perf_counter()
            latencies = _ask_many(agent, args.asks, args.max_ask_seconds, args.ask_threads)
            ask_s = time.perf_counter() - started
            grown = _measure(store, args.engine, folder)
            print(f"after {len(latencies)} asks: {grown}", flush=True)
            asked = {
                "asks": len(latencies),
                "ask_threads": args.ask_threads,
                "demo_build_seconds": round(build_s, 1),
                "ask_seconds": round(ask_s, 1),
                "ask_latency_ms": latency_summary(latencies),
                "before": before,
                "after_asks": grown,
                "demo_store": demo.store,
            }
            if copy is not None and args.engine == FALKORDB:
                _save_copy(args.engine, store, copy)
        if copy is not None and args.engine != FALKORDB:
            _save_copy(args.engine, None, copy)
        if marker is not None:
            marker.write_text(json.dumps(asked, indent=2) + "\n", encoding="utf-8")
    asks = int(asked["asks"])
    before, grown = asked["before"], asked["after_asks"]
    runs: list[dict[str, Any]] = []
    first = asks
    for i, (duty, batch) in enumerate(prunes):
        restore_s = None
        if copy is not None and (reuse or i > 0):
            restore_s = _restore_copy(args.engine, db, copy)
        with KnowledgeAgent.open(settings) as agent:
            run = _prune_while_asking(
                agent, first, duty, batch, args.probe, args.warmup, args.idle_after
            )
        run["restore_seconds"] = restore_s
        runs.append(run)
        first = run["asked_after"]
    last = runs[-1]
    with KnowledgeAgent.open(settings) as agent:
        store = agent.store
        pruned = _measure(store, args.engine, folder)
        # the questions asked while the prune ran are newer than its cut-off: a second prune
        leftover = prune_traces(store, older_than_days=0)
        t = time.perf_counter()
        compact(store)  # prune_traces compacted already; timed alone here
        compact_s = time.perf_counter() - t
        compacted = _measure(store, args.engine, folder)
        print(f"after prune: {compacted}", flush=True)
        # more rounds: do the asks after a prune reuse what the prune freed (steady state)?
        rounds: list[dict[str, int]] = []
        for r in range(args.rounds):
            for i in range(args.second):
                _ask(agent, first + r * args.second + i)
            prune_traces(store, older_than_days=0)
            rounds.append(_measure(store, args.engine, folder))
            print(f"round {r + 1}: {args.second} asks and a prune: {rounds[-1]}", flush=True)
        second = rounds[0] if rounds else compacted
    payload = {
        "engine": args.engine,
        "asks": asks,
        "asks_requested": args.asks,
        "asks_reused_from": str(copy) if reuse else None,
        "ask_threads": asked["ask_threads"],
        "demo_build_seconds": asked["demo_build_seconds"],
        "ask_seconds": asked["ask_seconds"],
        "ask_latency_ms": asked["ask_latency_ms"],
        "prune_runs": runs,
        # the last prune run's figures, under the names of the earlier results
        "ask_latency_idle_ms": last["ask_latency_idle_ms"],
        "ask_latency_during_prune_ms": last["ask_latency_during_prune_ms"],
        "asks_during_prune": last["asks_during_prune"],
        "prune_seconds": last["prune_seconds"],
        "pruned": last["pruned"],
        "pruned_leftover": leftover.model_dump(),
        "compact_seconds": round(compact_s, 2),
        "before": before,
        "after_asks": grown,
        "after_prune": pruned,
        "after_prune_and_compaction": compacted,
        "bytes_per_question": round((grown["disk_bytes"] - before["disk_bytes"]) / max(asks, 1)),
        "disk_after_vs_before": round(compacted["disk_bytes"] / before["disk_bytes"], 4),
        "second_round_asks": args.second,
        "after_second_round_and_prune": second,
        "rounds": rounds,
        "disk_after_rounds_vs_before": [
            round(r["disk_bytes"] / before["disk_bytes"], 4) for r in rounds
        ],
        "load_average_1m": round(os.getloadavg()[0], 1),
    }
    name = "trace_retention" if args.engine == FALKORDB else "trace_retention_neo4j"
    name += args.suffix
    out = write_result(name, payload)  # kept if what follows fails
    if args.rebuild:
        rebuilt = _rebuild(args.engine, settings.store, folder)
        payload["after_rebuild"] = rebuilt
        payload["disk_after_rebuild_vs_before"] = round(
            rebuilt["after"]["disk_bytes"] / before["disk_bytes"], 4
        )
        if args.engine != FALKORDB:
            for key, sizes in (
                ("compact", rebuilt["after_compact"]),
                ("restart", rebuilt["after"]),
            ):
                for part in ("store", "tx_log", "disk"):
                    payload[f"{part}_after_{key}_vs_before"] = round(
                        sizes[f"{part}_bytes"] / before[f"{part}_bytes"], 4
                    )
        payload["load_average_1m"] = round(os.getloadavg()[0], 1)
        out = write_result(name, payload)
    for key in (
        "before",
        "after_asks",
        "after_prune",
        "after_prune_and_compaction",
        "after_second_round_and_prune",
        "after_rebuild",
    ):
        print(f"{key:>27}: {payload.get(key)}")
    for run in runs:
        print(
            f"duty {run['duty']} batch {run['batch']}: prune of {run['pruned']['queries']} in "
            f"{run['prune_seconds']:.1f} s; ask p50/p95 idle {run['ask_latency_idle_ms']} "
            f"(n={run['asks_idle']}) during {run['ask_latency_during_prune_ms']} "
            f"(n={run['asks_during_prune']}); load {run['load_average_after']}"
        )
    print(
        f"{asks} asks in {asked['ask_seconds']:.0f} s; disk after/before "
        f"{payload['disk_after_vs_before']}"
    )
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
