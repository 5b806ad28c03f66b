"""Text embedding throughput of all-MiniLM-L6-v2, every alternative side by side in one run, on
real MuSiQue passages (``title + "\\n" + text``, as ingestion embeds them):

- torch (sentence-transformers) at today's batch size (64) on one thread: the reference, and on
  two threads;
- ONNX Runtime fp32 (the graph kgrag builds, kgrag/modalities/_minilm_graph.py) at batch sizes
  8 to 128 with length bucketing (texts sorted by word pieces before batching, order restored),
  and at batch 64 without it (batches in the caller's order);
- threads against processes on the 2 cores: ONNX with 2 intra-op threads, and 2 worker
  processes of 1 thread each embedding half of the texts;
- ONNX int8 dynamic quantisation (report only), with dense recall@2/@5 on MuSiQue dev against
  fp32's (the 50 questions over all 1,890 passages, each passage one vector; ``--no-recall``
  skips it).

Configurations are interleaved round by round, so that the shared machine's load falls on all of
them alike (one model in memory at a time, loaded and warmed up before its timing); each keeps its
best run (passages/s). Every vector is compared with torch's (min and
mean cosine); only configurations at cosine >= 0.999 everywhere can be adopted. Prints JSON and
writes ``bench/results/embedding.json``; asserts nothing::

    .venv/bin/python bench/embedding.py [--passages 500] [--runs 2] [--no-recall]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from common import CACHE, RESULTS, load_corpus, load_questions, quiet_models, write_result

from kgrag.eval.metrics import recall_at_k
from kgrag.modalities.text import SentenceTransformerEmbedder
from kgrag.modalities.text_onnx import ONNX_FILE_NAME, OnnxTextEmbedder, build_minilm_onnx

Embed = Callable[[Sequence[str]], list[list[float]]]

#: The smallest cosine to torch's vectors at which a configuration may be adopted.
COSINE_BOUND = 0.999


@dataclass(frozen=True)
class Config:
    name: str
    backend: str  # torch | onnx | onnx-int8
    batch: int
    threads: int
    processes: int = 1
    bucketed: bool = True
    report_only: bool = False


def _onnx_files() -> tuple[Path, Path]:
    """The fp32 graph and its int8 dynamic quantisation, made once under bench/.cache."""
    folder = CACHE / "embedding"
    fp32 = folder / ONNX_FILE_NAME
    if not fp32.is_file():
        build_minilm_onnx(fp32)
    int8 = folder / "all-MiniLM-L6-v2.int8.onnx"
    if not int8.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    return fp32, int8


_WORKER: OnnxTextEmbedder | None = None


def _worker_init(path: str, batch: int) -> None:
    global _WORKER
    _WORKER = OnnxTextEmbedder(Path(path), batch_size=batch, threads=1)
    _WORKER.embed(["warm up"])


def _worker_embed(texts: list[str]) -> list[list[float]]:
    assert _WORKER is not None
    return _WORKER.embed(texts)


class _Processes:
    """N worker processes of one ONNX thread each; each embeds every N-th text."""

    def __init__(self, path: Path, batch: int, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.n = processes
        self.pool = context.Pool(processes, initializer=_worker_init, initargs=(str(path), batch))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        parts = self.pool.map(_worker_embed, [list(texts[i :: self.n]) for i in range(self.n)])
        out: list[list[float]] = [[] for _ in texts]
        for i, part in enumerate(parts):
            out[i :: self.n] = part
        return out


def _in_caller_order(embedder: OnnxTextEmbedder, batch: int) -> Embed:
    """No length bucketing: the texts go to the model in batches of the caller's order."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), batch):
            out.extend(embedder.embed(texts[start : start + batch]))
        return out

    return embed


def _torch(batch: int, threads: int) -> Embed:
    import torch

    model = SentenceTransformerEmbedder(batch_size=batch)

    def embed(texts: Sequence[str]) -> list[list[float]]:
        torch.set_num_threads(threads)
        return model.embed(texts)

    return embed


def _configs() -> list[Config]:
    return [
        Config("torch, batch 64, 1 thread (today)", "torch", 64, 1),
        *(Config(f"onnx, batch {b}, 1 thread", "onnx", b, 1) for b in (8, 16, 32, 64, 128)),
        Config("onnx, batch 64, 1 thread, no bucketing", "onnx", 64, 1, bucketed=False),
        Config("onnx, batch 64, 2 threads", "onnx", 64, 2),
        Config("onnx, batch 64, 2 processes x 1 thread", "onnx", 64, 1, processes=2),
        Config("onnx int8, batch 64, 1 thread", "onnx-int8", 64, 1, report_only=True),
    ]


def _make(config: Config, fp32: Path, int8: Path) -> tuple[Embed, Any]:
    if config.backend == "torch":
        return _torch(config.batch, config.threads), None
    path = int8 if config.backend == "onnx-int8" else fp32
    if config.processes > 1:
        pool = _Processes(path, config.batch, config.processes)
        return pool.embed, pool
    embedder = OnnxTextEmbedder(path, batch_size=config.batch, threads=config.threads)
    if not config.bucketed:
        return _in_caller_order(embedder, config.batch), None
    return embedder.embed, None


def _dense_recall(embed: Embed, corpus: list[dict[str, str]]) -> dict[str, float]:
    """Dense recall@2/@5 (percent) of MuSiQue dev's answerable questions over the whole corpus,
    one vector per passage, ranked by cosine."""
    titles = [p["title"] for p in corpus]
    passages = np.asarray(embed([f"{p['title']}\n{p['text']}" for p in corpus]), np.float32)
    questions = [q for q in load_questions() if q.get("answerable", True)]
    asked = np.asarray(embed([q["question"] for q in questions]), np.float32)
    ranked = np.argsort(-(asked @ passages.T), axis=1)[:, :50]
    out: dict[str, float] = {}
    for k in (2, 5):
        values = [
            recall_at_k(
                [titles[i] for i in ranked[n]],
                [p["title"] for p in q["paragraphs"] if p["is_supporting"]],
                k,
            )
            for n, q in enumerate(questions)
        ]
        out[f"recall@{k}"] = round(100 * float(np.mean(values)), 1)
    return out


def _recalls(fp32: Path, int8: Path, corpus: list[dict[str, str]]) -> dict[str, Any]:
    return {
        name: _dense_recall(OnnxTextEmbedder(path, batch_size=8, threads=1).embed, corpus)
        for name, path in (("onnx fp32", fp32), ("onnx int8", int8))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passages", type=int, default=500)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-recall", action="store_true")
    parser.add_argument(
        "--recall-only", action="store_true", help="add the recall to the last results file"
    )
    args = parser.parse_args()

    quiet_models()
    os.environ["OMP_NUM_THREADS"] = "1"
    corpus = load_corpus()
    step = max(1, len(corpus) // args.passages)
    texts = [f"{p['title']}\n{p['text']}" for p in corpus[::step][: args.passages]]
    fp32, int8 = _onnx_files()
    if args.recall_only:
        last = json.loads((RESULTS / "embedding.json").read_text("utf-8"))
        last["dense_recall_musique_dev"] = _recalls(fp32, int8, corpus)
        last.pop("machine", None)
        last.pop("benchmark", None)
        print(json.dumps(last["dense_recall_musique_dev"]))
        write_result("embedding", last)
        return

    configs = _configs()
    seconds: dict[Config, list[float]] = {c: [] for c in configs}
    vectors: dict[Config, np.ndarray] = {}
    for run in range(args.runs):
        for config in configs:
            # one model in memory at a time: loaded and warmed up outside the timing, then freed
            embed, pool = _make(config, fp32, int8)
            embed(texts[:8])
            start = time.perf_counter()
            out = embed(texts)
            seconds[config].append(time.perf_counter() - start)
            vectors[config] = np.asarray(out, dtype=np.float32)
            if pool is not None:
                pool.pool.terminate()
            del embed, pool
            gc.collect()
            print(f"run {run + 1} {config.name:<42}: {seconds[config][-1]:7.2f} s", flush=True)

    today = configs[0]
    reference = vectors[today]
    rows: list[dict[str, Any]] = []
    for config, times in seconds.items():
        cosines = (vectors[config] * reference).sum(axis=1)
        best = min(times)
        rows.append(
            {
                "name": config.name,
                "backend": config.backend,
                "batch": config.batch,
                "threads": config.threads,
                "processes": config.processes,
                "bucketed": config.bucketed,
                "report_only": config.report_only,
                "passages_per_s": round(len(texts) / best, 2),
                "best_s": round(best, 3),
                "runs_s": [round(t, 3) for t in times],
                "cosine_min": round(float(cosines.min()), 7),
                "cosine_mean": round(float(cosines.mean()), 7),
            }
        )
    today_rate = rows[0]["passages_per_s"]
    for row in rows:
        row["x_today"] = round(row["passages_per_s"] / today_rate, 2)
    eligible = [r for r in rows if not r["report_only"] and r["cosine_min"] >= COSINE_BOUND]
    fastest = max(eligible, key=lambda r: r["passages_per_s"])
    payload = {
        "passages": len(texts),
        "runs": args.runs,
        "cores": os.cpu_count(),
        "load_average_end": round(os.getloadavg()[0], 2),
        "reference": today.name,
        "cosine_bound": COSINE_BOUND,
        "fastest_eligible": fastest["name"],
        "fastest_eligible_x_today": fastest["x_today"],
        "results": rows,
    }
    if not args.no_recall:
        payload["dense_recall_musique_dev"] = _recalls(fp32, int8, corpus)
    print(json.dumps(payload, indent=2))
    write_result("embedding", payload)


if __name__ == "__main__":
    main()
