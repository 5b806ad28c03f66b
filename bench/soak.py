"""Soak test (``make bench-soak``, not in CI): a real ``kgrag serve`` on 127.0.0.1 under mixed
``POST /ask`` load for ``--seconds`` (600: ten minutes), with a ``kgrag ingest`` job of more
documents running beside it and ``kgrag traces prune`` every ``--prune-every`` seconds (a
retention of ``--keep-minutes``). Every few seconds: requests done, errors, the RSS of the server
and of the embedded FalkorDB it started, the store's files on disk and the machine's load
average. Writes bench/results/soak.json and plots docs/bench/soak.png.

On Neo4j (``--engine neo4j``: the server of ``KGRAG_BENCH_NEO4J_URI``, emptied first, and its data
folder ``--neo4j-data``) the engine's RSS is the Neo4j server's (its pid file beside ``data``) and
the store is its store files plus its transaction logs; it writes soak_neo4j.json and
soak_neo4j.png.

The questions mix the demo-style maintenance questions, follow-ups in sessions (the memory
path), listings and questions nothing answers (abstentions), asked as several users.

    python bench/soak.py [--seconds 600] [--concurrency 4] [--prune-every 120]
    python bench/soak.py --engine neo4j --neo4j-data .neo4j/5.26.0/data
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil
from common import ENGINES, FALKORDB, ROOT, neo4j_uri, open_neo4j, percentile, write_result
from load_http import KGRAG, QUESTIONS, _env, _post, write_corpus

from kgrag.server.launch import serve_subprocess

PLOTS = ROOT / "docs" / "bench"
#: Seconds of each window of the plot and of ``windows`` in the result.
WINDOW = 30.0

FOLLOW_UPS = ["Who else was there?", "When was that?", "What did they agree?"]
OTHERS = [
    "List the maintenance reports.",
    "What is the boiling point of mercury on Mars?",
    "Which reports mention the Turbine T-3?",
]


@dataclass
class Request:
    at: float
    """Seconds since the load started, when the answer came back."""
    ms: float
    status: int


@dataclass
class Sample:
    at: float
    server_rss_mb: float
    engine_rss_mb: float
    store_mb: float
    load_average: float
    tx_log_mb: float = 0.0
    """Neo4j: its transaction logs (store_mb holds them too)."""


def _question(worker: int, n: int) -> dict[str, Any]:
    """Worker ``worker``'s ``n``-th request: a question, a follow-up in its session, or one of
    the others (a listing, an abstention)."""
    user = f"user{worker % 5}"
    if n % 5 == 3:
        return {
            "question": FOLLOW_UPS[n % len(FOLLOW_UPS)],
            "user": user,
            "session_id": f"w{worker}s{n // 5}",
        }
    if n % 5 == 4:
        return {"question": OTHERS[(n // 5) % len(OTHERS)], "user": user}
    body: dict[str, Any] = {"question": QUESTIONS[(worker + n) % len(QUESTIONS)], "user": user}
    if n % 5 == 2:
        body["session_id"] = f"w{worker}s{n // 5}"
    return body


def _folder_mb(folder: Path) -> float:
    if not folder.is_dir():
        return 0.0
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def _store_mb(folder: Path, neo4j: bool) -> tuple[float, float]:
    """The store's files and, on Neo4j, its transaction logs apart (included in the first)."""
    if neo4j:
        logs = _folder_mb(folder / "transactions" / "neo4j")
        return _folder_mb(folder / "databases" / "neo4j") + logs, logs
    files = [folder / "kg.db", *(folder / "appendonlydir").glob("*")]
    return sum(f.stat().st_size for f in files if f.is_file()) / 1e6, 0.0


def _engine_pid(folder: Path, neo4j: bool) -> int | None:
    """The pid of the embedded FalkorDB serving ``folder/kg.db``, or of the Neo4j server whose
    data folder ``folder`` is (scripts/neo4j.sh writes its pid file beside it)."""
    if neo4j:
        pid_file = folder.parent / "run" / "neo4j.pid"
        return int(pid_file.read_text().strip()) if pid_file.is_file() else None
    from kgrag.graph.embedded_lease import running_server_pid

    return running_server_pid(folder / "kg.db")


def _rss_mb(server: psutil.Process, engine_pid: int | None) -> tuple[float, float]:
    """The RSS of the server and of the engine, in MB."""
    try:
        own = server.memory_info().rss
        engine = psutil.Process(engine_pid).memory_info().rss if engine_pid else 0
    except psutil.Error:
        return 0.0, 0.0
    return own / 1e6, engine / 1e6


def _run(cmd: list[str], cwd: Path, timeout: float) -> dict[str, Any]:
    done = subprocess.run(
        cmd, env=_env(), cwd=cwd, capture_output=True, timeout=timeout, check=False
    )
    out = done.stdout.decode().strip().splitlines()
    report = json.loads(out[-1]) if out and out[-1].startswith("{") else None
    return {"exit_code": done.returncode, "report": report}


@contextlib.contextmanager
def _set_on_exit(event: threading.Event) -> Iterator[None]:
    """Set ``event`` when the block is left, by an error too (the load's threads watch it)."""
    try:
        yield
    finally:
        event.set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=ENGINES, default=FALKORDB)
    parser.add_argument("--neo4j-data", type=Path, help="the Neo4j server's data folder")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--documents", type=int, default=40, help="ingested before the load")
    parser.add_argument("--more", type=int, default=80, help="ingested during the load")
    parser.add_argument("--prune-every", type=float, default=120.0)
    parser.add_argument("--keep-minutes", type=float, default=1.0)
    parser.add_argument("--sample-every", type=float, default=5.0)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args(argv)
    neo4j = args.engine != FALKORDB
    name = "soak" if not neo4j else "soak_neo4j"
    plot = args.plot or PLOTS / f"{name}.png"
    if neo4j and args.neo4j_data is None:
        raise SystemExit("--neo4j-data is needed on Neo4j (the server's data folder)")

    with tempfile.TemporaryDirectory(prefix="kgrag-soak-") as tmp:
        work = Path(tmp)
        if neo4j:
            store_dir = args.neo4j_data.resolve()
            store = neo4j_uri()
            open_neo4j(erase=True).close()
        else:
            store_dir = work / "store"
            store = f"falkordb-lite:///{store_dir}/kg.db"
        write_corpus(work / "corpus", 0, args.documents)
        write_corpus(work / "more", args.documents, args.more)
        first = _run(
            [KGRAG, "--quiet", "ingest", str(work / "corpus"), "--store", store, "--json"],
            work,
            900,
        )
        if first["exit_code"] != 0:
            raise SystemExit(f"the first ingest failed: {first}")
        requests: list[Request] = []
        samples: list[Sample] = []
        events: list[dict[str, Any]] = []
        lock = threading.Lock()
        stop = threading.Event()
        # on leaving: stop the load's threads, then the server (SIGTERM, SIGKILL after 30 s)
        serving = serve_subprocess(store, _env(), None, start_timeout_s=300, cwd=work)
        with serving as server, _set_on_exit(stop):
            base = server.base
            proc = psutil.Process(server.proc.pid)
            engine_pid = _engine_pid(store_dir, neo4j)
            _post(base + "/ask", {"question": QUESTIONS[0]}, timeout=300)  # load the models
            started = time.perf_counter()

            def now() -> float:
                return time.perf_counter() - started

            def worker(w: int) -> None:
                n = 0
                while not stop.is_set():
                    status, ms = _post(base + "/ask", _question(w, n), timeout=120)
                    with lock:
                        requests.append(Request(round(now(), 3), round(ms, 1), status))
                    n += 1

            def sampler() -> None:
                while not stop.is_set():
                    own, engine = _rss_mb(proc, engine_pid)
                    size, logs = _store_mb(store_dir, neo4j)
                    sample = Sample(
                        round(now(), 1),
                        round(own, 1),
                        round(engine, 1),
                        round(size, 3),
                        os.getloadavg()[0],
                        round(logs, 3),
                    )
                    with lock:
                        samples.append(sample)
                    stop.wait(args.sample_every)

            def ingest() -> None:
                stop.wait(args.seconds * 0.1)
                if stop.is_set():
                    return
                events.append({"at": round(now(), 1), "event": "ingest_start"})
                cmd = [KGRAG, "--quiet", "ingest", str(work / "more"), "--store", store, "--json"]
                result = _run(cmd, work, args.seconds * 2)
                events.append({"at": round(now(), 1), "event": "ingest_end", **result})

            def prune() -> None:
                days = f"{args.keep_minutes / 1440:.8f}"
                while not stop.wait(args.prune_every):
                    t = now()
                    cmd = [KGRAG, "--quiet", "traces", "prune", "--older-than", days]
                    result = _run([*cmd, "--store", store, "--json"], work, 600)
                    events.append(
                        {"at": round(t, 1), "event": "prune", "seconds": round(now() - t, 2)}
                        | result
                    )

            threads = [threading.Thread(target=worker, args=(w,)) for w in range(args.concurrency)]
            threads += [threading.Thread(target=f) for f in (sampler, ingest, prune)]
            for t in threads:
                t.start()
            stop.wait(args.seconds)
            stop.set()
            elapsed = now()  # an ingest or prune still running is waited for, not counted
            for t in threads:
                t.join()
            alive = server.proc.poll() is None

    ok = [r.ms for r in requests if r.status == 200]
    errors = [asdict(r) for r in requests if r.status != 200]
    loads = [s.load_average for s in samples]
    payload = {
        "engine": args.engine,
        "seconds": round(elapsed, 1),
        "concurrency": args.concurrency,
        "requests": len(requests),
        "ok": len(ok),
        "errors": len(errors),
        "first_errors": errors[:10],
        "requests_per_s": round(len(requests) / elapsed, 2),
        "latency_ms": {
            "p50": round(percentile(ok, 50), 1),
            "p95": round(percentile(ok, 95), 1),
            "p99": round(percentile(ok, 99), 1),
            "max": round(max(ok), 1) if ok else 0.0,
        },
        "server_alive": alive,
        "load_average": {
            "min": round(min(loads), 2),
            "mean": round(sum(loads) / len(loads), 2),
            "max": round(max(loads), 2),
        },
        "documents_before": args.documents,
        "documents_during": args.more,
        "prune_every_s": args.prune_every,
        "keep_minutes": args.keep_minutes,
        "events": events,
        "samples": [asdict(s) for s in samples],
        "windows": _windows(requests, elapsed),
    }
    out = write_result(name, payload)
    _plot(payload, plot)
    summary = {k: v for k, v in payload.items() if k not in {"samples", "windows"}}
    print(json.dumps(summary, indent=1))
    print(f"written {out} and {plot}")
    return 0 if not errors and alive else 1


def _windows(requests: list[Request], seconds: float) -> list[dict[str, Any]]:
    """Requests, errors and latency percentiles per WINDOW seconds of the load."""
    out = []
    for n in range(int(seconds // WINDOW)):
        lo = n * WINDOW
        inside = [r for r in requests if lo <= r.at < lo + WINDOW]
        ok = [r.ms for r in inside if r.status == 200]
        out.append(
            {
                "start": lo,
                "requests": len(inside),
                "errors": len(inside) - len(ok),
                "p50_ms": round(percentile(ok, 50), 1) if ok else None,
                "p95_ms": round(percentile(ok, 95), 1) if ok else None,
            }
        )
    return out


def _plot(payload: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = payload["samples"]
    windows = payload["windows"]
    mids = [(w["start"] + WINDOW / 2) / 60 for w in windows]
    rates = [w["requests"] / WINDOW for w in windows]
    errs = [w["errors"] for w in windows]
    p50s = [w["p50_ms"] for w in windows]
    p95s = [w["p95_ms"] for w in windows]
    t = [s["at"] / 60 for s in samples]
    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    ax = axes[0]
    ax.plot(mids, rates, marker=".", label="requests/s (30 s windows)")
    ax.bar(mids, errs, width=0.3, color="red", label="errors")
    ax.set_ylabel("requests/s")
    ax2 = ax.twinx()
    ax2.plot(t, [s["load_average"] for s in samples], color="grey", lw=0.8, label="load avg")
    ax2.set_ylabel("1-min load average (2 cores)")
    ax.legend(loc="upper left", fontsize=8)
    ax2.legend(loc="upper right", fontsize=8)
    axes[1].plot(mids, p50s, marker=".", label="p50")
    axes[1].plot(mids, p95s, marker=".", label="p95")
    axes[1].set_ylabel("ask latency, ms")
    axes[1].legend(fontsize=8)
    axes[2].plot(t, [s["server_rss_mb"] for s in samples], label="kgrag serve")
    neo4j = payload.get("engine", FALKORDB) != FALKORDB
    engine = "Neo4j server" if neo4j else "embedded FalkorDB"
    axes[2].plot(t, [s["engine_rss_mb"] for s in samples], label=engine)
    axes[2].set_ylabel("RSS, MB")
    axes[2].legend(fontsize=8)
    axes[3].plot(t, [s["store_mb"] for s in samples], label="store files + tx logs")
    if neo4j:
        stored = [s["store_mb"] - s.get("tx_log_mb", 0.0) for s in samples]
        axes[3].plot(t, stored, label="store files")
        axes[3].legend(fontsize=8)
    axes[3].set_ylabel("store files, MB")
    axes[3].set_xlabel("minutes")
    for e in payload["events"]:
        colour = {"prune": "green", "ingest_start": "purple", "ingest_end": "purple"}[e["event"]]
        for a in axes:
            a.axvline(e["at"] / 60, color=colour, lw=0.6, ls="--")
    axes[0].set_title(
        f"kgrag serve soak ({engine}): {payload['concurrency']} clients, ingest (purple) and "
        "prunes (green)"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
