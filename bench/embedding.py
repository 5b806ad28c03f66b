"""Text embedding throughput: all-MiniLM-L6-v2 on torch (sentence-transformers) against the same
model on ONNX Runtime (kgrag/modalities/text_onnx.py), and ONNX int8 dynamic quantisation
(report only: not adopted), on real MuSiQue passages (``title + "\\n" + text``, as ingestion
embeds them).

For each backend and batch size it embeds the same passages ``--runs`` times, interleaving the
configurations round by round so that the shared machine's load falls on all of them alike, and
keeps the best run (passages/s). Every vector is compared with the torch vectors (min and mean
cosine). Prints JSON and writes ``bench/results/embedding.json``; asserts nothing::

    OMP_NUM_THREADS=1 .venv/bin/python bench/embedding.py [--passages 500] [--batches 32,64]
        [--runs 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import CACHE, load_corpus, quiet_models, write_result

from kgrag.modalities.text import SentenceTransformerEmbedder
from kgrag.modalities.text_onnx import ONNX_FILE_NAME, OnnxTextEmbedder, export_minilm_onnx

Embed = Callable[[Sequence[str]], list[list[float]]]


def _onnx_files() -> tuple[Path, Path]:
    """The fp32 export and its int8 dynamic quantisation, made once under bench/.cache."""
    folder = CACHE / "embedding"
    fp32 = folder / ONNX_FILE_NAME
    if not fp32.is_file():
        export_minilm_onnx(fp32)
    int8 = folder / "all-MiniLM-L6-v2.int8.onnx"
    if not int8.is_file():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    return fp32, int8


def _backends(threads: int, batch: int, fp32: Path, int8: Path) -> dict[str, Embed]:
    import torch

    torch.set_num_threads(threads)
    return {
        "torch": SentenceTransformerEmbedder(batch_size=batch).embed,
        "onnx": OnnxTextEmbedder(fp32, batch_size=batch, threads=threads).embed,
        "onnx-int8": OnnxTextEmbedder(int8, batch_size=batch, threads=threads).embed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passages", type=int, default=500)
    parser.add_argument("--batches", default="32,64")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("OMP_NUM_THREADS", 1)))
    args = parser.parse_args()

    quiet_models()
    corpus = load_corpus()
    step = max(1, len(corpus) // args.passages)
    texts = [f"{p['title']}\n{p['text']}" for p in corpus[::step][: args.passages]]
    fp32, int8 = _onnx_files()
    batches = [int(b) for b in args.batches.split(",")]

    configs: dict[tuple[str, int], Embed] = {}
    for batch in batches:
        for name, embed in _backends(args.threads, batch, fp32, int8).items():
            configs[(name, batch)] = embed
    for embed in configs.values():  # load every model and warm it up outside the timing
        embed(texts[:8])

    seconds: dict[tuple[str, int], list[float]] = {key: [] for key in configs}
    vectors: dict[tuple[str, int], np.ndarray] = {}
    for run in range(args.runs):
        for key, embed in configs.items():
            start = time.perf_counter()
            out = embed(texts)
            seconds[key].append(time.perf_counter() - start)
            vectors[key] = np.asarray(out, dtype=np.float32)
            print(f"run {run + 1} {key[0]:>9} batch {key[1]:>3}: {seconds[key][-1]:7.2f} s")

    reference = vectors[("torch", batches[0])]
    rows: list[dict[str, Any]] = []
    for (name, batch), times in seconds.items():
        cosines = (vectors[(name, batch)] * reference).sum(axis=1)
        best = min(times)
        rows.append(
            {
                "backend": name,
                "batch": batch,
                "passages_per_s": round(len(texts) / best, 2),
                "best_s": round(best, 3),
                "runs_s": [round(t, 3) for t in times],
                "cosine_min": round(float(cosines.min()), 6),
                "cosine_mean": round(float(cosines.mean()), 6),
            }
        )
    torch_best = max(r["passages_per_s"] for r in rows if r["backend"] == "torch")
    for row in rows:
        row["x_best_torch"] = round(row["passages_per_s"] / torch_best, 2)
    payload = {
        "passages": len(texts),
        "threads": args.threads,
        "runs": args.runs,
        "reference": f"torch, batch {batches[0]}",
        "results": rows,
    }
    print(json.dumps(payload, indent=2))
    write_result("embedding", payload)


if __name__ == "__main__":
    main()
