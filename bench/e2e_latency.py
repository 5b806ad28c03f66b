"""End to end: ``ask`` latency offline on the MuSiQue corpus, and the share taken by trace writing.

The corpus (or its first N passages, for the latency-against-size plot) is ingested once with
``KnowledgeAgent.ingest`` from a JSONL manifest of one text file per passage, into a store cached
under ``bench/.cache/e2e`` (or the store ``kgrag eval retrieval`` built, when it has one for the
whole corpus). Then, after a few warm-up questions, every question of ``musique_dev.json`` is
asked through ``KnowledgeAgent.ask`` (rule planner, executor, extractive answer, trace written to
the graph), timing the whole call and, inside it, the time spent in the trace writer.

    python bench/e2e_latency.py --sizes 500,1890 --warmup 3
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import (
    CACHE,
    ENGINES,
    FALKORDB,
    NEO4J,
    latency_summary,
    load_corpus,
    load_questions,
    neo4j_uri,
    open_neo4j,
    quiet_models,
    result_name,
    stopwatch,
    write_result,
)

log = logging.getLogger("bench.e2e_latency")

E2E_CACHE = CACHE / "e2e"


def write_manifest(passages: Sequence[dict[str, str]], folder: Path) -> Path:
    """One ``.txt`` file per passage and a ``manifest.jsonl`` naming each with its title."""
    files = folder / "passages"
    files.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, p in enumerate(passages):
        path = files / f"p{i:05d}.txt"
        if not path.is_file() or path.read_text(encoding="utf-8") != p["text"]:
            path.write_text(p["text"], encoding="utf-8")
        lines.append(json.dumps({"path": f"passages/{path.name}", "title": p["title"]}))
    manifest = folder / "manifest.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return manifest


class PhaseTimers:
    """Seconds spent in each phase of ``ask`` while installed (``with``), by wrapping what
    ``ask`` calls: the executor (every iteration), the answer synthesis (extractive answer and
    groundedness check), the trace writer. The rest (analysis, planning, judging, memory) is
    ``other``."""

    def __init__(self) -> None:
        self.targets: dict[str, list[tuple[Any, str]]] = {
            "execute": _places("kgrag.executor.scheduler", "Executor", ["run"]),
            "synthesis": _places("kgrag.agent.answering", "Composer", ["compose"]),
            "trace": _places("kgrag.executor.trace", "TraceWriter", None),
        }
        self.seconds = dict.fromkeys(self.targets, 0.0)
        self._saved: list[tuple[Any, str, Any]] = []

    def reset(self) -> None:
        self.seconds = dict.fromkeys(self.targets, 0.0)

    def __enter__(self) -> PhaseTimers:
        for phase, places in self.targets.items():
            for owner, name in places:
                original = getattr(owner, name)
                self._saved.append((owner, name, original))
                setattr(owner, name, self._timed(phase, original))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()

    def _timed(self, phase: str, function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - started

        return timed


def _places(module: str, cls: str, methods: list[str] | None) -> list[tuple[Any, str]]:
    """``(class, method)`` pairs to time; ``None`` means every public ``write_*`` method. A place
    the code no longer has is left out with a warning (the phase then reads 0)."""
    import importlib

    owner = getattr(importlib.import_module(module), cls, None)
    if owner is None:
        log.warning("cannot time %s.%s: not found", module, cls)
        return []
    names = methods or [n for n in vars(owner) if n.startswith("write_")]
    found = [(owner, n) for n in names if callable(getattr(owner, n, None))]
    if len(found) < len(names) or not found:
        log.warning("cannot time all of %s.%s %s", module, cls, names)
    return found


def _ready_store(
    size: int, corpus: Sequence[dict[str, str]], engine: str = FALKORDB
) -> tuple[str, float | None, str]:
    """The store URI for the first ``size`` passages, ingesting them when not cached (Neo4j has
    one database: it is emptied and filled anew for each size).

    Returns the URI, the ingestion seconds (None when reused) and where the store came from.
    """
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings

    folder = E2E_CACHE / f"musique-{size}"
    db = folder / "store" / "kg.db"
    stamp = folder / "ingested.json"
    if engine == NEO4J:
        open_neo4j(erase=True).close()
        uri = neo4j_uri()
    else:
        uri = f"falkordb-lite://{db}"
        if stamp.is_file() and db.is_file():
            return uri, None, "cache"
        shutil.rmtree(folder / "store", ignore_errors=True)
    manifest = write_manifest(corpus[:size], folder)
    settings = Settings(store=uri, data_dir=folder / "store")
    with KnowledgeAgent.open(settings) as agent, stopwatch() as t:
        report = agent.ingest([str(manifest)])
    if engine == FALKORDB:
        stamp.write_text(
            json.dumps({"passages": size, "seconds": round(t[0], 1), "report": _report(report)})
        )
    log.info("ingested %d passages in %.1f s", size, t[0])
    return uri, t[0], "ingested now"


def _report(report: Any) -> Any:
    dump = getattr(report, "model_dump", None)
    return dump(mode="json") if dump else str(report)


def measure(uri: str, questions: Sequence[str], warmup: int) -> dict[str, Any]:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings

    wall_ms: list[float] = []
    phase_ms: dict[str, list[float]] = {}
    iterations: list[int] = []
    with KnowledgeAgent.open(Settings(store=uri)) as agent, PhaseTimers() as timers:
        for q in questions[:warmup]:
            agent.ask(q)
        for q in questions:
            timers.reset()
            started = time.perf_counter()
            answer = agent.ask(q)
            wall_ms.append((time.perf_counter() - started) * 1000)
            iterations.append(int(getattr(answer, "iterations", 1)))
            for phase, seconds in timers.seconds.items():
                phase_ms.setdefault(phase, []).append(seconds * 1000)
            phase_ms.setdefault("other", []).append(
                wall_ms[-1] - 1000 * sum(timers.seconds.values())
            )
    total = sum(wall_ms)
    return {
        "questions": len(questions),
        "warmup": warmup,
        "latency_ms": latency_summary(wall_ms),
        "iterations_mean": round(sum(iterations) / max(len(iterations), 1), 2),
        "phases_ms": {phase: latency_summary(ms) for phase, ms in phase_ms.items()},
        "phase_share": {
            phase: round(sum(ms) / total, 4) if total else 0.0 for phase, ms in phase_ms.items()
        },
        "trace_share": round(sum(phase_ms["trace"]) / total, 4) if total else 0.0,
    }


def run(
    sizes: Sequence[int],
    warmup: int,
    limit: int | None = None,
    reuse: str | None = None,
    engine: str = FALKORDB,
) -> dict[str, Any]:
    corpus = load_corpus()
    questions = [q["question"] for q in load_questions()][:limit]
    rows: list[dict[str, Any]] = []
    for size in sorted({min(s, len(corpus)) for s in sizes}):
        if reuse and size == len(corpus):
            uri, ingest_s, source = reuse, None, "the store `kgrag eval retrieval` built"
        else:
            uri, ingest_s, source = _ready_store(size, corpus, engine)
        row: dict[str, Any] = {"passages": size, "store": source}
        if ingest_s is not None:
            row["ingest_s"] = round(ingest_s, 1)
        row.update(measure(uri, questions, warmup))
        log.info(
            "%d passages: ask p50 %.0f ms p95 %.0f ms, trace share %.1f%%",
            size,
            row["latency_ms"]["p50"],
            row["latency_ms"]["p95"],
            100 * row["trace_share"],
        )
        rows.append(row)
    return {
        "engine": engine,
        "corpus": "musique_corpus.json",
        "questions_file": "musique_dev.json",
        "mode": "offline: rule planner, local MiniLM, extractive answer, trace written",
        "runs": rows,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1890", help="corpus sizes (first N passages)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--questions", type=int, default=None, help="ask only the first N")
    parser.add_argument(
        "--reuse-store", default=None, help="store URI holding the whole corpus already"
    )
    parser.add_argument("--engine", choices=ENGINES, default=FALKORDB)
    parser.add_argument("--out", default=None, help="result name (default: per engine)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    quiet_models()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    result = run(sizes, args.warmup, args.questions, args.reuse_store, args.engine)
    print(write_result(args.out or result_name("e2e_latency", args.engine), result))


if __name__ == "__main__":
    main()
