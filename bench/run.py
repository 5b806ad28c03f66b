"""``make bench``: run every benchmark, collect ``bench/results/*.json``, render BENCHMARKS.md and
the plots.

Each step runs as its own process (one model load each, no state shared) with OMP_NUM_THREADS=1.
A step whose script or command is not there is skipped with a note; a step that fails is reported
and the others still run; the report is rendered from whatever results exist.

    python bench/run.py                               # everything
    python bench/run.py --only vector_search,report   # some steps
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import CACHE, DATA, MUSIQUE_CORPUS, MUSIQUE_QUESTIONS, RESULTS, ROOT

BENCH = Path(__file__).resolve().parent
PY = sys.executable
KGRAG = str(Path(PY).with_name("kgrag"))


def _eval_store() -> Path:
    """The kept eval store: one per ingestion fingerprint (the ingestion code and settings), so a
    change to either ingests the corpus again instead of measuring a store older code built."""
    from kgrag.config import Settings
    from kgrag.eval.retrieval import ingestion_fingerprint

    return CACHE / "eval" / ingestion_fingerprint(Settings()) / "kg.db"


EVAL_STORE = _eval_store()

#: HNSW settings measured at every size (M:efConstruction:efRuntime), and the others tried at
#: 10k to choose them; see BENCHMARKS.md.
VECTOR_CONFIGS = "32:200:200"
VECTOR_SWEEP = "10000=16:100:50,16:200:100,32:200:100,64:200:200"


@dataclass
class Step:
    name: str
    argv: list[str]
    needs: list[Path] = field(default_factory=list)
    stdout_to: Path | None = None  # for commands that print their JSON instead of writing it
    neo4j: bool = False  # needs the project's Neo4j (started once, before the first such step)


def steps(reuse_eval_store: bool) -> list[Step]:
    data = [MUSIQUE_CORPUS, MUSIQUE_QUESTIONS]
    eval_argv = [
        KGRAG,
        "eval",
        "retrieval",
        "--questions",
        str(MUSIQUE_QUESTIONS),
        "--corpus",
        str(MUSIQUE_CORPUS),
        "--store",
        f"falkordb-lite://{EVAL_STORE}",
        "--json",
    ]
    e2e_argv = [PY, str(BENCH / "e2e_latency.py")]
    if reuse_eval_store:
        e2e_argv += ["--reuse-store", f"falkordb-lite://{EVAL_STORE}"]
    neo4j_uri = os.environ.get("KGRAG_BENCH_NEO4J_URI", "")
    # Neo4j: the eval ingests the corpus into the emptied database (its ingestion time is
    # measured), and `ask` is timed on that same store afterwards (one database: no 500 size).
    eval_neo4j_argv = [*eval_argv[: eval_argv.index("--store") + 1], neo4j_uri, "--json"]
    answers_argv = [KGRAG, "eval", "answers", *eval_argv[3:]]
    return [
        Step(
            "retrieval",
            [*eval_argv, "--per-question", str(RESULTS / "retrieval_questions.json")],
            [*data, Path(KGRAG)],
            RESULTS / "retrieval.json",
        ),
        # the lexical weight of the fusion, chosen on 3 folds and reported on the 2 others
        Step(
            "fusion_folds",
            [PY, str(BENCH / "fusion_folds.py"), "--store", f"falkordb-lite://{EVAL_STORE}"],
            [*data, BENCH / "fusion_folds.py"],
        ),
        # the agent's answers on the store the retrieval step built (answerable, supporting
        # passages hidden, out of domain), then the abstention rule chosen on folds of them
        Step("answers", answers_argv, [*data, Path(KGRAG)], RESULTS / "answers.json"),
        Step("abstention", [PY, str(BENCH / "abstention.py")], [BENCH / "abstention.py"]),
        Step("neo4j_erase", [PY, str(BENCH / "common.py"), "erase-neo4j"], neo4j=True),
        Step(
            "retrieval_neo4j",
            eval_neo4j_argv,
            [*data, Path(KGRAG)],
            RESULTS / "retrieval_neo4j.json",
            neo4j=True,
        ),
        Step(
            "e2e_latency_neo4j",
            [
                PY,
                str(BENCH / "e2e_latency.py"),
                "--engine",
                "neo4j",
                "--sizes",
                "1890",
                "--reuse-store",
                neo4j_uri,
            ],
            [*data, BENCH / "e2e_latency.py"],
            neo4j=True,
        ),
        Step(
            "vector_search",
            [
                PY,
                str(BENCH / "vector_search.py"),
                "--sizes",
                "1000,10000,100000",
                "--configs",
                VECTOR_CONFIGS,
                "--sweep",
                VECTOR_SWEEP,
                "--engines",
                "falkordb-lite,neo4j",
            ],
            [*data, BENCH / "vector_search.py"],
            neo4j=True,
        ),
        Step(
            "ingest_throughput",
            [PY, str(BENCH / "ingest_throughput.py")],
            [*data, BENCH / "ingest_throughput.py"],
        ),
        Step(
            "ingest_throughput_neo4j",
            [PY, str(BENCH / "ingest_throughput.py"), "--engine", "neo4j"],
            [*data, BENCH / "ingest_throughput.py"],
            neo4j=True,
        ),
        Step("e2e_latency", e2e_argv, [*data, BENCH / "e2e_latency.py"]),
        Step(
            "trace_overhead",
            [PY, str(BENCH / "trace_overhead.py")],
            [BENCH / "trace_overhead.py"],
        ),
        Step("load_http", [PY, str(BENCH / "load_http.py"), "--write"], [BENCH / "load_http.py"]),
        # README's other figures: Whisper's WER and real-time factor on jfk.flac, torch against
        # ONNX text embedding, the tiny CLIP's zero-shot accuracy and DEPICTS calibration, a real
        # folder nobody prepared
        Step("whisper", [PY, str(BENCH / "whisper_wer.py")], [BENCH / "whisper_wer.py"]),
        Step("embedding", [PY, str(BENCH / "embedding.py")], [BENCH / "embedding.py"]),
        Step("clip_depicts", [PY, str(BENCH / "clip_depicts.py")], [BENCH / "clip_depicts.py"]),
        Step(
            "real_folder",
            [PY, str(BENCH / "real_folder.py"), "--label", "after"],
            [BENCH / "real_folder.py"],
        ),
        Step(
            "intents",
            [KGRAG, "eval", "intents", "--json"],
            [Path(KGRAG)],
            RESULTS / "intents.json",
        ),
        # recall, `ask`, ingestion, disk and memory at 1,890 / 4,000 / 8,008 passages, both
        # engines (the full configuration: `make bench-growth` runs it alone)
        Step(
            "growth",
            [PY, str(BENCH / "growth.py")],
            [*data, DATA / "wiki_distractors.json", BENCH / "growth.py"],
            neo4j=True,
        ),
        # why kgrag's recall@5 lead narrows at 8,008 passages, and bridge variants on folds
        # (its two embedded stores are built once, about 6 min, and cached)
        Step(
            "growth_diagnosis",
            [PY, str(BENCH / "growth_diagnosis.py")],
            [*data, DATA / "wiki_distractors.json", BENCH / "growth_diagnosis.py"],
        ),
        Step("report", [PY, str(BENCH / "report.py")], [BENCH / "report.py"]),
    ]


def _eval_available() -> bool:
    if not Path(KGRAG).is_file():
        return False
    probe = subprocess.run(
        [KGRAG, "eval", "retrieval", "--help"], capture_output=True, text=True, check=False
    )
    return probe.returncode == 0


def run_step(step: Step, env: dict[str, str]) -> str:
    missing = [str(p) for p in step.needs if not p.exists()]
    if missing:
        return f"skipped: {', '.join(missing)} not found"
    if step.name == "retrieval" and not _eval_available():
        return "skipped: `kgrag eval retrieval` is not available"
    print(f"\n== {step.name}: {' '.join(step.argv)}", flush=True)
    started = time.perf_counter()
    if step.stdout_to is not None:
        step.stdout_to.parent.mkdir(parents=True, exist_ok=True)
        captured = subprocess.run(
            step.argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        sys.stderr.write(captured.stderr[-4000:])
        code = captured.returncode
        if code == 0:
            try:
                payload = json.loads(captured.stdout)
            except json.JSONDecodeError:
                return "failed: the command did not print one JSON object"
            payload.setdefault("measured_at", time.strftime("%Y-%m-%d %H:%M:%S %Z"))
            step.stdout_to.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    else:
        code = subprocess.run(step.argv, cwd=ROOT, env=env, check=False).returncode
    seconds = time.perf_counter() - started
    if code != 0:
        return f"failed (exit {code}) after {seconds:.0f} s"
    return f"ok in {seconds:.0f} s"


def start_neo4j(env: dict[str, str]) -> bool:
    """Start the project's Neo4j (scripts/neo4j.sh) unless KGRAG_BENCH_NEO4J_URI names one, and
    put its URI and credentials into ``env``. True when this run started it (and must stop it)."""
    if env.get("KGRAG_BENCH_NEO4J_URI"):
        return False
    running = subprocess.run(
        ["bash", "scripts/neo4j.sh", "status"], cwd=ROOT, capture_output=True, check=False
    )
    started = subprocess.run(
        ["bash", "scripts/neo4j.sh", "start"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    for line in started.stdout.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        if name in {"KGRAG_NEO4J_USER", "KGRAG_NEO4J_PASSWORD"}:
            env[name] = value
        elif name == "KGRAG_STORE":
            env["KGRAG_BENCH_NEO4J_URI"] = value
    os.environ["KGRAG_BENCH_NEO4J_URI"] = env["KGRAG_BENCH_NEO4J_URI"]
    return running.returncode != 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated step names")
    parser.add_argument("--skip", default="", help="comma-separated step names")
    args = parser.parse_args(argv)
    env = {
        **os.environ,
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    only = {s for s in args.only.split(",") if s}
    skip = {s for s in args.skip.split(",") if s}
    outcomes: list[tuple[str, str]] = []
    stop_neo4j = False
    neo4j_ready = False
    try:
        for index in range(len(steps(False))):
            # the end-to-end step reuses the store `kgrag eval retrieval` built, when it ran now
            reuse = any(n == "retrieval" and o.startswith("ok") for n, o in outcomes)
            step = steps(reuse)[index]
            if (only and step.name not in only) or step.name in skip:
                continue
            if step.neo4j and not neo4j_ready:
                stop_neo4j = start_neo4j(env)
                neo4j_ready = True
                step = steps(reuse)[index]  # its arguments name the server now
            outcomes.append((step.name, run_step(step, env)))
    finally:
        if stop_neo4j:
            subprocess.run(["bash", "scripts/neo4j.sh", "stop"], cwd=ROOT, check=False)
    print("\n== summary")
    for name, outcome in outcomes:
        print(f"{name:>18}: {outcome}")
    failed = [n for n, o in outcomes if o.startswith("failed")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
