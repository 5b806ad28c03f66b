"""What writing the trace adds to a question's latency.

A small text corpus (the demo's documents, manual pages and meeting as text) is ingested into a
fresh embedded store; then every question is asked through ``KnowledgeAgent.ask`` with each
public ``TraceWriter.write_*`` method wrapped in a timer. For each ask the figures are the whole
``ask`` wall time and the time spent inside trace writing (Query, Plan, Steps, DEPENDS_ON,
RETURNED, Answer, CITES), from which the share of the latency the trace costs follows. Two warm-up
asks (model load, caches) are not counted.

    python bench/trace_overhead.py [--rounds 1] [--store-dir bench/.cache/trace_overhead]
"""

from __future__ import annotations

import argparse
import functools
import logging
import shutil
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import CACHE, latency_summary, quiet_models, write_result

log = logging.getLogger("bench.trace_overhead")

QUESTIONS = [
    "Who maintains the Pressure Valve PV-7?",
    "Who maintains the Feed Pump FP-2?",
    "Who approves every shutdown?",
    "What happened to the Feed Pump FP-2 on 3 March?",
    "Who replaced the seal of the Feed Pump FP-2?",
    "What happened to the Pressure Valve PV-7 on 9 March?",
    "Who maintains the part that the meeting agreed to replace?",
    "What did the meeting agree to replace?",
    "When does the new valve arrive?",
    "What does the Feed Pump FP-2 move from the river intake?",
    "How often does Ada Lovelace inspect the valve?",
    "Who keeps the spare seals?",
    "What does Alan Turing maintain?",
    "Which part lost pressure after a seal failed?",
    "What was cleaned and tested after it stuck half open?",
    "Where does the Feed Pump FP-2 send the water?",
    "What does Grace Hopper maintain and what did she replace?",
    "Which station is the incident log about?",
    "What is described in chapter one of the station manual?",
    "Who maintains the Control Panel CP-1 and what does that person approve?",
]


def _corpus(folder: Path) -> list[str]:
    from kgrag.demo.corpus import DOCUMENTS, MANUAL_PAGES, MEETING

    folder.mkdir(parents=True, exist_ok=True)
    files = dict(DOCUMENTS)
    files["manual.txt"] = "\n\n".join(MANUAL_PAGES)
    files["meeting.txt"] = MEETING
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]


class _Timer:
    """Wraps every public ``write_*`` method of TraceWriter; accumulates seconds per method."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._originals: dict[str, Callable[..., Any]] = {}

    def install(self) -> None:
        from kgrag.executor.trace import TraceWriter

        for name in dir(TraceWriter):
            if not name.startswith("write_"):
                continue
            original = getattr(TraceWriter, name)
            self._originals[name] = original
            setattr(TraceWriter, name, self._wrap(name, original))

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - t0

        return timed

    def take(self) -> dict[str, float]:
        out = dict(self.seconds)
        self.seconds.clear()
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="times to ask every question")
    parser.add_argument("--store-dir", type=Path, default=CACHE / "trace_overhead")
    args = parser.parse_args(argv)
    quiet_models()
    logging.basicConfig(level=logging.WARNING)

    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings

    shutil.rmtree(args.store_dir, ignore_errors=True)
    paths = _corpus(args.store_dir / "corpus")
    settings = Settings(
        store=f"falkordb-lite:///{(args.store_dir / 'store').resolve()}/kg.db",
        data_dir=args.store_dir / "store",
    )
    timer = _Timer()
    timer.install()
    ask_ms: list[float] = []
    trace_ms: list[float] = []
    per_method: dict[str, list[float]] = defaultdict(list)
    with KnowledgeAgent.open(settings) as agent:
        report = agent.ingest(paths)
        if report.failed:
            raise SystemExit(f"ingestion failed: {report.failures}")
        for question in QUESTIONS[:2]:  # warm-up: model load, statement caches
            agent.ask(question)
        timer.take()
        for _ in range(args.rounds):
            for question in QUESTIONS:
                t0 = time.perf_counter()
                agent.ask(question)
                total = (time.perf_counter() - t0) * 1000
                spent = timer.take()
                ask_ms.append(total)
                trace_ms.append(sum(spent.values()) * 1000)
                for name, seconds in spent.items():
                    per_method[name].append(seconds * 1000)

    shares = [t / a for t, a in zip(trace_ms, ask_ms, strict=True)]
    payload = {
        "questions": len(QUESTIONS),
        "asks": len(ask_ms),
        "ask_ms": latency_summary(ask_ms),
        "trace_ms": latency_summary(trace_ms),
        "trace_share_of_ask": {
            "median": round(statistics.median(shares), 4),
            "max": round(max(shares), 4),
            "total": round(sum(trace_ms) / sum(ask_ms), 4),
        },
        "per_method_ms": {name: latency_summary(v) for name, v in sorted(per_method.items())},
    }
    out = write_result("trace_overhead", payload)
    print(f"{len(ask_ms)} asks over {len(QUESTIONS)} questions on a small embedded store")
    print(
        f"  whole ask:     p50 {payload['ask_ms']['p50']:.1f} ms, "
        f"p95 {payload['ask_ms']['p95']:.1f} ms, mean {payload['ask_ms']['mean']:.1f} ms"
    )
    print(
        f"  trace writing: p50 {payload['trace_ms']['p50']:.1f} ms, "
        f"p95 {payload['trace_ms']['p95']:.1f} ms, mean {payload['trace_ms']['mean']:.1f} ms"
    )
    share = payload["trace_share_of_ask"]
    print(
        f"  share of ask latency: median {share['median']:.1%}, max {share['max']:.1%}, "
        f"overall {share['total']:.1%}"
    )
    for name, summary in payload["per_method_ms"].items():
        print(f"    {name:<14} p50 {summary['p50']:.2f} ms, p95 {summary['p95']:.2f} ms")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
