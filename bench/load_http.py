"""Bounded HTTP load on a real ``kgrag serve`` on 127.0.0.1: many concurrent ``POST /ask``, and a
``kgrag ingest`` of more files in another process while the questions run (the embedded store is
shared by both processes). Prints and writes requests per second and latency percentiles.

    python bench/load_http.py                        # 240 requests, 16 at a time, 120 s at most
    python bench/load_http.py --requests 60 --concurrency 8 --max-seconds 60

Everything stays on this machine: the server listens on 127.0.0.1 only, the request loop is
bounded in count and in time, and the server is stopped at the end whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.server.launch import serve_subprocess, stop

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
KGRAG = str(Path(sys.executable).with_name("kgrag"))

QUESTIONS = [
    "Who inspected the Feed Pump FP-2?",
    "What did Ada Lovelace agree to replace?",
    "Which parts were inspected in Cambridge?",
    "What happened to the Valve V-7?",
    "Who worked with Alan Turing in Manchester?",
    "What wear did the Boiler B-1 show?",
]
_PEOPLE = ["Ada Lovelace", "Charles Babbage", "Grace Hopper", "Alan Turing", "Edsger Dijkstra"]
_PLACES = ["London", "Cambridge", "Arlington", "Manchester", "Eindhoven"]
_PARTS = ["Feed Pump FP-2", "Valve V-7", "Boiler B-1", "Turbine T-3", "Condenser C-9"]


def write_corpus(folder: Path, start: int, count: int) -> None:
    """Small maintenance reports naming people, places and parts."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + count):
        lines = [f"Maintenance report {i}", ""]
        for j in range(4):
            who, other = _PEOPLE[(i + j) % 5], _PEOPLE[(i + 2 * j + 1) % 5]
            where, part = _PLACES[(i * 3 + j) % 5], _PARTS[(i + j * 2) % 5]
            lines += [
                f"On day {j + 1} of report {i}, {who} inspected the {part} in {where} with "
                f"{other}; {who} agreed with {other} to replace it (wear {i * 10 + j}).",
                "",
            ]
        (folder / f"report_{i:03d}.txt").write_text("\n".join(lines), encoding="utf-8")


def _env() -> dict[str, str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    env.pop("KGRAG_API_TOKEN", None)
    return env


def _post(url: str, body: dict[str, Any], timeout: float) -> tuple[int, float]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
        url, data=data, headers={"content-type": "application/json"}, method="POST"
    )
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310
            resp.read()
            status = int(resp.status)
    except urllib.error.HTTPError as e:
        status = int(e.code)
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        status = 0
    return status, (time.perf_counter() - t0) * 1000


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile, rounded to 0.1 ms; 0.0 for no values."""
    if not values:
        return 0.0
    return round(float(np.percentile(values, q, method="nearest")), 1)


def run_load(
    base: str, requests: int, concurrency: int, max_seconds: float, timeout: float
) -> dict[str, Any]:
    """``requests`` POST /ask, ``concurrency`` at a time, none started after ``max_seconds``."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    started = time.perf_counter()
    stop_at = started + max_seconds

    def one(n: int) -> None:
        if time.perf_counter() > stop_at:
            return
        body = {"question": QUESTIONS[n % len(QUESTIONS)], "user": f"load{n % concurrency}"}
        status, ms = _post(base + "/ask", body, timeout)
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200:
                latencies.append(ms)

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, range(requests)))
    seconds = time.perf_counter() - started
    done = sum(statuses.values())
    return {
        "requests": done,
        "ok": statuses.get(200, 0),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "concurrency": concurrency,
        "seconds": round(seconds, 2),
        "requests_per_s": round(done / seconds, 2) if seconds else 0.0,
        "latency_ms": {
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "max": round(max(latencies), 1) if latencies else 0.0,
        },
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=240)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--documents", type=int, default=24)
    parser.add_argument("--no-ingest-during-load", action="store_true")
    parser.add_argument("--write", action="store_true", help="write bench/results/load_http.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kgrag-load-") as tmp:
        work = Path(tmp)
        store = f"falkordb-lite:///{work}/kg.db"
        write_corpus(work / "corpus", 0, args.documents)
        write_corpus(work / "more", args.documents, max(2, args.documents // 3))
        subprocess.run(
            [KGRAG, "--quiet", "ingest", str(work / "corpus"), "--store", store, "--json"],
            check=True,
            env=_env(),
            stdout=subprocess.DEVNULL,
            cwd=work,
            timeout=600,
        )
        ingest: subprocess.Popen[bytes] | None = None
        serving = serve_subprocess(store, _env(), None, start_timeout_s=180, cwd=work)
        # on leaving: the ingestion still running is stopped, then the server (SIGTERM, SIGKILL)
        with serving as server, contextlib.ExitStack() as cleanup:
            base = server.base
            _post(base + "/ask", {"question": QUESTIONS[0]}, timeout=120)  # warm the models
            if not args.no_ingest_during_load:
                ingest = subprocess.Popen(
                    [KGRAG, "--quiet", "ingest", str(work / "more"), "--store", store, "--json"],
                    env=_env(),
                    cwd=work,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                cleanup.callback(stop, ingest, 60.0)
            result = run_load(base, args.requests, args.concurrency, args.max_seconds, 120.0)
            if ingest is not None:
                out, _ = ingest.communicate(timeout=600)
                result["ingest_during_load"] = {
                    "exit_code": ingest.returncode,
                    "report": json.loads(out) if out.strip().startswith(b"{") else None,
                }
            result["server_alive"] = server.proc.poll() is None
        result["documents"] = args.documents
    if args.write:
        from common import write_result  # bench/ is on the path when this runs as a script

        write_result("load_http", result)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
