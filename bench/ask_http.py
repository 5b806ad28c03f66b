"""Requests per second and latency of ``POST /ask`` on a real ``kgrag serve`` over the demo store
(the demo corpus: documents, a PDF with a figure, drawings, a recording), a fixed number of
questions sent a fixed number at a time with httpx. The same load measures any checkout:
``--tree`` is the kgrag source the server runs (e.g. the main checkout before a change).

    python bench/ask_http.py --label after
    python bench/ask_http.py --label before --tree /path/to/other/checkout
    python bench/ask_http.py --requests 40 --concurrency 4

Bounded and local: the server listens on 127.0.0.1 only, the requests are bounded in count and
time, and the server is stopped at the end whatever happens. The demo store is built once under
bench/.cache/ask_http (delete it to rebuild).
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from common import CACHE, ROOT, latency_summary, machine, write_result

from kgrag.server.launch import ServerStartError, serve_subprocess

QUESTIONS = [
    "Who maintains the Pressure Valve PV-7?",
    "What happened to the Feed Pump FP-2 and who fixed it?",
    "Which part did the meeting agree to replace?",
    "Who approves every shutdown?",
    "What does chapter two of the manual describe?",
    "Who keeps the spare seals?",
]


def demo_store(folder: Path) -> str:
    """The demo corpus ingested into an embedded store under ``folder`` (once)."""
    uri = f"falkordb-lite:///{folder}/kg.db"
    if (folder / "ready").exists():
        return uri
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings
    from kgrag.demo.corpus import make_corpus

    folder.mkdir(parents=True, exist_ok=True)
    paths = make_corpus(folder / "corpus")
    with KnowledgeAgent.open(Settings(store=uri, data_dir=folder / "data")) as agent:
        report = agent.ingest([str(p) for p in paths])
    if report.failed:
        raise SystemExit(f"the demo corpus failed to ingest: {report.failures}")
    (folder / "ready").touch()
    return uri


def _load(
    base: str, requests: int, concurrency: int, max_seconds: float
) -> tuple[list[tuple[int, float]], float]:
    """``requests`` POST /ask after a warm-up, ``concurrency`` at a time: (status, ms) of each
    sent one and the seconds they took."""
    with httpx.Client(base_url=base, timeout=120) as client:
        for q in QUESTIONS:  # warm-up: models loaded, caches as in steady state
            client.post("/ask", json={"question": q}).raise_for_status()

        stop_at = time.monotonic() + max_seconds

        def one(n: int) -> tuple[int, float]:
            if time.monotonic() > stop_at:
                return 0, 0.0
            t0 = time.perf_counter()
            r = client.post("/ask", json={"question": QUESTIONS[n % len(QUESTIONS)]})
            return r.status_code, (time.perf_counter() - t0) * 1000

        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            results = list(pool.map(one, range(requests)))
        return results, time.perf_counter() - t0


def measure(
    uri: str, folder: Path, tree: Path, requests: int, concurrency: int, max_seconds: float
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    env["KGRAG_DATA_DIR"] = str(folder / "data")
    for name in ("KGRAG_API_KEYS_FILE", "KGRAG_LLM_MODEL", "KGRAG_STORE"):
        env.pop(name, None)
    try:
        with serve_subprocess(uri, env, folder / "server.log", start_timeout_s=300) as up:
            results, elapsed = _load(up.base, requests, concurrency, max_seconds)
    except ServerStartError as e:
        raise SystemExit(str(e)) from e
    sent = [(status, ms) for status, ms in results if status]
    ok = [ms for status, ms in sent if status == 200]
    return {
        "requests": len(sent),
        "ok": len(ok),
        "errors": len(sent) - len(ok),
        "concurrency": concurrency,
        "seconds": round(elapsed, 2),
        "requests_per_s": round(len(ok) / elapsed, 2),
        "latency_ms": latency_summary(ok),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="current", help="names the result file")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the kgrag checkout to serve")
    parser.add_argument("--requests", type=int, default=120)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    args = parser.parse_args()
    folder = CACHE / "ask_http"
    uri = demo_store(folder)
    figures = measure(
        uri, folder, args.tree.resolve(), args.requests, args.concurrency, args.max_seconds
    )
    payload = {"label": args.label, "tree": str(args.tree), **figures, "machine": machine()}
    path = write_result(f"ask_http_{args.label}", payload)
    lat = figures["latency_ms"]
    print(
        f"{args.label}: {figures['ok']}/{figures['requests']} ok, {figures['requests_per_s']} "
        f"req/s, p50 {lat.get('p50', 0):.0f} ms, p95 {lat.get('p95', 0):.0f} ms -> {path}"
    )


if __name__ == "__main__":
    main()
