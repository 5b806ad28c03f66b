"""Growth curve: quality and cost of MuSiQue dev as the corpus grows from 1,890 to 8,008 passages.

The corpus is ``musique_corpus.json`` (1,890 passages, every gold passage among them) plus a fixed
prefix of ``wiki_distractors.json`` (Wikipedia passages of 2WikiMultiHopQA, no title shared with
MuSiQue): sizes 1,890, 4,000 and 8,008 by default. For each engine the store is emptied once and
filled incrementally (the first 1,890 passages, then the next ones up to 4,000, then up to 8,008),
so each passage is embedded and written exactly once; after each increment the script measures:

- kgrag and dense recall@2/@5 on the 50 questions, with the code of ``kgrag eval retrieval``
  (:func:`kgrag.eval.retrieval.score_retrieval`; kgrag = rule planner + executor, no LLM);
- ``ask`` latency: ``KnowledgeAgent.ask`` in process, end to end (analysis, planning, retrieval
  loop, extractive answer, trace written to the graph: trace writes included), after 3 warm-up
  questions, offline;
- the increment's ingestion wall time and passages/s (``Ingestor.ingest_documents``);
- store size on disk (FalkorDB: a fresh snapshot plus the append-only file; Neo4j: the database
  folder and its transaction logs) and node counts;
- peak RSS so far of this Python process (models, client) and of the engine's server process
  (the embedded redis-server, or the Neo4j JVM): the kernel's high-water mark (VmHWM).

Each engine runs in its own child process (clean RSS, one model load each); the parent merges
their rows into ``bench/results/growth.json`` and draws ``docs/bench/growth_*.png``.

    python bench/growth.py                                   # 1890,4000,8008 on both engines
    python bench/growth.py --sizes 300,600 --engines falkordb-lite --questions 10   # a quick try
    python bench/growth.py --plot-only                       # redraw from growth.json

Neo4j: ``KGRAG_BENCH_NEO4J_URI`` (``bench/run.py`` starts the project's server) and
``KGRAG_BENCH_NEO4J_DIR`` (its home, for the disk and RSS figures; default ``.neo4j/5.26.0``).
The text model runs on ONNX Runtime (``--text-backend onnx``, same vectors as torch, 2 to 3x
faster here: see ``bench/embedding.py``); the file is exported once into ``bench/.cache/growth``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import (
    CACHE,
    ENGINES,
    FALKORDB,
    MUSIQUE_QUESTIONS,
    NEO4J,
    RESULTS,
    ROOT,
    latency_summary,
    load_corpus,
    load_distractors,
    neo4j_uri,
    open_neo4j,
    quiet_models,
    stopwatch,
    write_result,
)

log = logging.getLogger("bench.growth")

GROWTH_CACHE = CACHE / "growth"
SIZES = (1890, 4000, 8008)
PLOTS = ROOT / "docs" / "bench"
WARMUP = 3
PLOT_NAMES = ("recall", "ask", "ingest", "disk", "rss")


# --------------------------------------------------------------------------------- the corpus
def grown_corpus(size: int) -> Path:
    """A corpus file of the MuSiQue passages followed by the first ``size - 1890`` distractors
    (cached under ``bench/.cache/growth``)."""
    musique = load_corpus()
    extra = load_distractors()
    if not len(musique) <= size <= len(musique) + len(extra):
        raise SystemExit(f"sizes run from {len(musique)} to {len(musique) + len(extra)}")
    out = GROWTH_CACHE / f"corpus_{size}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(musique + extra[: size - len(musique)]), encoding="utf-8")
    return out


# ------------------------------------------------------------------------------- measurements
def _hwm_mb(pid: int | None) -> float | None:
    """The peak resident set (VmHWM) of process ``pid`` in MB, None when unknown."""
    if not pid:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.is_dir() else 0


def neo4j_home() -> Path:
    return Path(os.environ.get("KGRAG_BENCH_NEO4J_DIR", ROOT / ".neo4j" / "5.26.0"))


def engine_figures(store: Any, engine: str, db: Path) -> dict[str, Any]:
    """Disk bytes and the engine server's peak RSS."""
    if engine == FALKORDB:
        from kgrag.graph.embedded_lease import running_server_pid

        snapshot = store.snapshot()
        aof = _folder_bytes(db.parent / "appendonlydir")
        return {
            "disk_bytes": snapshot.stat().st_size + aof,
            "disk_detail": {"rdb": snapshot.stat().st_size, "aof": aof},
            "engine_peak_rss_mb": _hwm_mb(running_server_pid(db)),
        }
    home = neo4j_home()
    data = _folder_bytes(home / "data" / "databases" / "neo4j")
    tx = _folder_bytes(home / "data" / "transactions" / "neo4j")
    pid_file = home / "run" / "neo4j.pid"
    pid = int(pid_file.read_text().strip()) if pid_file.is_file() else None
    return {
        "disk_bytes": data + tx,
        "disk_detail": {"store": data, "tx_logs": tx},
        "engine_peak_rss_mb": _hwm_mb(pid),
    }


def node_counts(store: Any) -> dict[str, int]:
    return {str(r["label"]): int(r["n"]) for r in store.read("stats_labels")}


def ask_latency(agent: Any, questions: Sequence[str]) -> dict[str, float]:
    """``agent.ask`` wall time per question in ms (after warm-up), trace writes included."""
    for q in questions[:WARMUP]:
        agent.ask(q)
    wall: list[float] = []
    for q in questions:
        started = time.perf_counter()
        agent.ask(q)
        wall.append((time.perf_counter() - started) * 1000)
    return latency_summary(wall)


def run_engine(
    engine: str,
    sizes: Sequence[int],
    questions: int | None,
    text_backend: str,
    rows_to: Path,
    resume: bool = False,
) -> list[dict[str, Any]]:
    """Fill one engine's emptied store size by size and measure after each increment, writing
    the rows so far to ``rows_to`` after each. ``resume`` keeps the store of an interrupted run:
    passages it holds are skipped (their ingestion figures are then absent from the row)."""
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings
    from kgrag.eval.datasets import load_dataset
    from kgrag.eval.retrieval import corpus_documents, score_retrieval

    quiet_models()
    dataset = load_dataset(MUSIQUE_QUESTIONS, grown_corpus(max(sizes)), questions)
    documents = corpus_documents(dataset)  # URIs name the largest corpus: stable across sizes
    db = GROWTH_CACHE / engine / "kg.db"
    if engine == NEO4J:
        if not resume:
            open_neo4j(erase=True).close()
        uri = neo4j_uri()
    else:
        if not resume:
            shutil.rmtree(db.parent, ignore_errors=True)
        db.parent.mkdir(parents=True, exist_ok=True)
        uri = f"falkordb-lite://{db}"
    settings = Settings(store=uri, data_dir=GROWTH_CACHE / "data", text_backend=text_backend)
    rows: list[dict[str, Any]] = []
    done = 0
    total_s = 0.0
    with KnowledgeAgent.open(settings) as agent:
        log.info("%s: text model %s", engine, type(agent.text_embedder).__name__)
        for size in sorted(sizes):
            batch = documents[done:size]
            with stopwatch() as t:
                report = agent.ingestor().ingest_documents(batch)
            if report.failed or report.ingested + report.skipped != len(batch):
                raise SystemExit(f"{engine}: ingested {report.ingested} of {len(batch)}")
            total_s += t[0]
            log.info("%s: %d -> %d passages in %.0f s", engine, done, size, t[0])
            done = size
            figures = engine_figures(agent.store, engine, db)  # before the asks add traces
            counts = node_counts(agent.store)
            view = dataset.model_copy(update={"passages": dataset.passages[:size]})
            scored = score_retrieval(view, agent, report)
            log.info("%s @ %d: recall %s", engine, size, scored.kgrag)
            asked = ask_latency(agent, [q.question for q in dataset.questions])
            log.info("%s @ %d: ask %s", engine, size, asked)
            rows.append(
                {
                    "engine": engine,
                    "passages": size,
                    "questions": scored.questions,
                    "kgrag": scored.kgrag.model_dump(by_alias=True),
                    "dense": scored.dense.model_dump(by_alias=True),
                    "eval_latency_ms": scored.latency_ms.model_dump(),
                    "dense_latency_ms": scored.dense_latency_ms.model_dump(),
                    "ask_ms": asked,
                    "ingest": {
                        "added": report.ingested,
                        "already_stored": report.skipped,
                        "wall_s": round(t[0], 1),
                        "passages_per_s": round(report.ingested / t[0], 2),
                        "stage_seconds": {k: round(v, 1) for k, v in report.stage_seconds.items()},
                        "cumulative_wall_s": round(total_s, 1),
                    },
                    **figures,
                    "nodes": counts,
                    "python_peak_rss_mb": round(
                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                    ),
                    "text_model": type(agent.text_embedder).__name__,
                    "step_timeout_s": settings.step_timeout_s,
                }
            )
            rows_to.write_text(json.dumps(rows), encoding="utf-8")
    return rows


# ------------------------------------------------------------------------------------ report
def _mb(n: Any) -> str:
    return f"{n / 1e6:,.0f}" if isinstance(n, int | float) else "-"


def _ingest_cell(ing: dict[str, Any]) -> str:
    if not ing["added"]:
        return "(kept from an interrupted run)"
    return f"{ing['wall_s']:.0f} (+{ing['added']:,} at {ing['passages_per_s']:.1f}/s)"


def section(doc: dict[str, Any] | None) -> str:
    """BENCHMARKS.md's generated table of ``growth.json`` (``bench/report.py`` calls this)."""
    if not doc:
        return "_Not measured yet: `make bench-growth`._"
    header = (
        "| engine | passages | kgrag R@2 | dense R@2 | kgrag R@5 | dense R@5 | R@5 ratio "
        "| ask p50 / p95 ms | ingest s (passages/s) | disk MB | peak RSS MB python / engine |"
    )
    lines = [header, "|" + "---|" * 11]
    for r in doc["rows"]:
        k, d = r["kgrag"], r["dense"]
        ratio = k["recall@5"] / d["recall@5"] if d["recall@5"] else 0.0
        ing = r["ingest"]
        lines.append(
            f"| {r['engine']} | {r['passages']:,} | {100 * k['recall@2']:.1f} "
            f"| {100 * d['recall@2']:.1f} | {100 * k['recall@5']:.1f} | {100 * d['recall@5']:.1f} "
            f"| {ratio:.3f} | {r['ask_ms']['p50']:.0f} / {r['ask_ms']['p95']:.0f} "
            f"| {_ingest_cell(ing)} "
            f"| {_mb(r['disk_bytes'])} "
            f"| {r['python_peak_rss_mb']:.0f} / {r['engine_peak_rss_mb'] or 0:.0f} |"
        )
    lines.append("")
    lines.append(
        f"Text model: {doc.get('text_backend', '?')}; {doc['rows'][0]['questions']} questions; "
        f"_measured {doc.get('measured_at', '?')}; load average at the end "
        f"{doc.get('machine', {}).get('load_average', '?')} on 2 cores._"
    )
    lines.append("")
    lines += [f"![growth_{n}](docs/bench/growth_{n}.png)" for n in PLOT_NAMES]
    return "\n".join(lines)


def plot(doc: dict[str, Any]) -> list[str]:
    """One PNG per figure against corpus size, a line per engine (and per retriever)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    engines = [e for e in ENGINES if any(r["engine"] == e for r in rows)]

    def series(engine: str, get: Any) -> tuple[list[int], list[float]]:
        mine = sorted((r for r in rows if r["engine"] == engine), key=lambda r: r["passages"])
        return [r["passages"] for r in mine], [get(r) for r in mine]

    figures: dict[str, tuple[str, list[tuple[str, Any]]]] = {
        "recall": (
            "recall (%)",
            [
                ("kgrag R@5", lambda r: 100 * r["kgrag"]["recall@5"]),
                ("dense R@5", lambda r: 100 * r["dense"]["recall@5"]),
                ("kgrag R@2", lambda r: 100 * r["kgrag"]["recall@2"]),
                ("dense R@2", lambda r: 100 * r["dense"]["recall@2"]),
            ],
        ),
        "ask": (
            "ask latency (ms)",
            [("p50", lambda r: r["ask_ms"]["p50"]), ("p95", lambda r: r["ask_ms"]["p95"])],
        ),
        "ingest": (
            "ingestion (passages/s of each increment)",
            [("passages/s", lambda r: r["ingest"]["passages_per_s"] or float("nan"))],
        ),
        "disk": ("store on disk (MB)", [("disk", lambda r: r["disk_bytes"] / 1e6)]),
        "rss": (
            "peak RSS (MB)",
            [
                ("python", lambda r: r["python_peak_rss_mb"]),
                ("engine", lambda r: r["engine_peak_rss_mb"] or 0),
            ],
        ),
    }
    out = []
    PLOTS.mkdir(parents=True, exist_ok=True)
    for name, (ylabel, lines) in figures.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for engine in engines:
            for label, get in lines:
                xs, ys = series(engine, get)
                style = "-" if engine == FALKORDB else "--"
                ax.plot(xs, ys, style, marker="o", label=f"{engine} {label}")
        ax.set_xlabel("passages in the corpus")
        ax.set_ylabel(ylabel)
        ax.set_title(f"MuSiQue dev as the corpus grows: {ylabel}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = PLOTS / f"growth_{name}.png"
        fig.savefig(path)
        plt.close(fig)
        out.append(str(path.relative_to(ROOT)))
    return out


# -------------------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--questions", type=int, default=None, help="first N questions only")
    parser.add_argument("--text-backend", default="onnx", choices=("onnx", "torch", "auto"))
    parser.add_argument("--name", default="growth", help="bench/results/NAME.json")
    parser.add_argument(
        "--jobs", type=int, default=1, help="engines measured side by side (2: both at once)"
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep the stores of an interrupted run"
    )
    parser.add_argument(
        "--collect", action="store_true", help="NAME.json from the rows an interrupted run left"
    )
    parser.add_argument("--plot-only", action="store_true")
    parser.add_argument("--one-engine", help=argparse.SUPPRESS)
    parser.add_argument("--rows-to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.one_engine:  # the child: one engine, rows to a file
        run_engine(
            args.one_engine, sizes, args.questions, args.text_backend, args.rows_to, args.resume
        )
        return 0
    out = RESULTS / f"{args.name}.json"
    if args.plot_only:
        print("\n".join(plot(json.loads(out.read_text(encoding="utf-8")))))
        return 0
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    engines = [e for e in args.engines.split(",") if e]
    running: list[tuple[str, Path, subprocess.Popen[bytes]]] = []
    for n, engine in enumerate([] if args.collect else engines):
        rows_file = GROWTH_CACHE / f"rows_{engine}.json"
        rows_file.parent.mkdir(parents=True, exist_ok=True)
        rows_file.unlink(missing_ok=True)
        cmd = [sys.executable, __file__, "--one-engine", engine, "--rows-to", str(rows_file)]
        cmd += ["--sizes", args.sizes, "--text-backend", args.text_backend]
        if args.questions:
            cmd += ["--questions", str(args.questions)]
        if args.resume:
            cmd.append("--resume")
        running.append((engine, rows_file, subprocess.Popen(cmd, cwd=ROOT)))
        if len(running) >= args.jobs or n == len(engines) - 1:
            for name, produced, child in running:
                code = child.wait()
                if code != 0:
                    log.error("%s failed (exit %d); only the sizes it finished", name, code)
                if produced.is_file():
                    rows += json.loads(produced.read_text(encoding="utf-8"))
            running = []
    if args.collect:  # the rows an interrupted run wrote
        for engine in engines:
            produced = GROWTH_CACHE / f"rows_{engine}.json"
            if produced.is_file():
                rows += json.loads(produced.read_text(encoding="utf-8"))
    if not rows:
        return 1
    payload = {
        "sizes": sizes,
        "text_backend": args.text_backend,
        "ask_measured": "KnowledgeAgent.ask in process, end to end, offline (rule planner, "
        "extractive answer), trace written to the graph; after 3 warm-up questions",
        "engines_side_by_side": args.jobs > 1,
        "collected_after_interruption": args.collect,
        "wall_s": round(time.perf_counter() - started, 1),
        "rows": rows,
    }
    path = write_result(args.name, payload)
    print(path)
    try:
        print("\n".join(plot(json.loads(path.read_text(encoding="utf-8")))))
    except ImportError:
        log.warning("matplotlib is missing (pip install --group bench): no plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())
