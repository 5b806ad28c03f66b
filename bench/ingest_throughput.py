"""Ingestion throughput per modality and the share of wall time spent outside model inference.

Text: the MuSiQue passages (``../shared/data/musique_corpus.json``, 1,890 ``{title, text}``),
turned into documents by the evaluation's own :func:`kgrag.eval.retrieval.corpus_documents` and
ingested into a fresh embedded store with MiniLM (and the tiny CLIP for entity names, as the CLI
does). Images: new drawings through the tiny CLIP. Audio: espeak-ng speech through faster-whisper
tiny.en (beam 5). Prints figures as JSON; asserts nothing::

    OMP_NUM_THREADS=1 .venv/bin/python bench/ingest_throughput.py [--limit N] [--skip-media]
        [--engine neo4j] [--label L]

"Inference" is the time inside embedder, CLIP and transcriber calls (``IngestReport.
inference_seconds``); the rest of the wall time (parsing, chunking, entity rules, graph writes
that do not overlap inference, bookkeeping) is the overhead the goal bounds at 15%.

That share is measured with the writer thread running beside the models, so the inference time
it divides by is inflated by the writer's Python work holding the GIL on 2 shared cores. For the
text corpus it is therefore also measured without overlap (``serial``): after the ingestion, the
same documents go again, batch by batch as the ingestor cuts them, through the same model stages
(:class:`kgrag.ingest.build.Builder`: chunking and text embedding) with nothing else running in
the process and no store, which gives the inference time alone (wall, and the thread's CPU time);
and the ingestion's own CPU time (this process's, all threads, plus the embedded store server's
when the engine is FalkorDB) is set against that inference CPU time. Reported both ways: the
share of wall time outside inference with serial inference, and the share of CPU time outside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ENGINES, FALKORDB, NEO4J, open_neo4j, result_name, write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "data" / "musique_corpus.json"
SENTENCES = (
    "the feed pump was replaced on monday morning",
    "the pressure valve was opened slowly by the crew",
    "please close the valve before the test begins",
    "the engine was started again after lunch",
)


def _figures(report: Any, items: int) -> dict[str, Any]:
    wall = report.seconds
    return {
        "items": items,
        "ingested": report.ingested,
        "failed": report.failed,
        "wall_s": wall,
        "items_per_s": round(items / wall, 2) if wall else None,
        "inference_s": report.inference_seconds,
        "outside_inference_share": round(1 - report.inference_seconds / wall, 3) if wall else None,
        "stage_seconds": report.stage_seconds,
    }


def _agent(db: Path, image_dir: Path, engine: str) -> Any:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings
    from kgrag.graph import open_store
    from kgrag.ingest.pipeline import IngestOptions
    from kgrag.modalities import factory
    from kgrag.modalities.audio import auto_transcriber
    from kgrag.modalities.clip import tiny_clip_embedder

    clip = tiny_clip_embedder()
    whisper: list[Any] = []

    def transcriber() -> Any:
        if not whisper:
            whisper.append(auto_transcriber("auto", cpu_threads=1))
        return whisper[0]

    store = open_neo4j(erase=True) if engine == NEO4J else open_store(f"falkordb-lite:///{db}")
    return KnowledgeAgent(
        store,
        factory.text_embedder(Settings()),
        image_embedder=lambda: clip,
        transcriber=transcriber,
        ingest_options=IngestOptions(image_dir=image_dir),
    )


def bench_text(tmp: Path, limit: int | None, engine: str) -> dict[str, Any]:
    from kgrag.eval.datasets import Dataset, corpus_fingerprint, parse_corpus
    from kgrag.eval.retrieval import corpus_documents

    passages = parse_corpus(json.loads(CORPUS.read_text(encoding="utf-8")))[:limit]
    dataset = Dataset(
        format="musique",
        questions=(),
        passages=passages,
        fingerprint=corpus_fingerprint(passages),
    )
    docs = corpus_documents(dataset)
    with _agent(tmp / "text" / "kg.db", tmp / "images", engine) as agent:
        ingestor = agent.ingestor()
        # models loaded before the clocks start: loading is neither inference nor overhead
        agent.text_embedder.embed(["warm-up"])
        clip = ingestor.builder.image_embedder()
        clip.embed_texts(["warm-up"])
        servers = _store_servers(tmp / "text" / "kg.db", engine)
        cpu0 = time.process_time() + _cpu_of(servers)
        report = ingestor.ingest_documents(docs)
        cpu = time.process_time() + _cpu_of(servers) - cpu0
        names = [
            str(r["name"])
            for r in agent.store.read_freeform("MATCH (e:Entity) RETURN e.name AS name")
        ]
        serial = _serial_inference(ingestor, docs, clip, names)
    figures = _figures(report, len(docs))
    wall = report.seconds
    figures["ingestion_cpu_s"] = round(cpu, 3)
    figures["serial"] = {
        **serial,
        "outside_inference_share_wall": round(1 - serial["inference_s"] / wall, 3),
        "outside_inference_share_cpu": round(1 - serial["inference_cpu_s"] / cpu, 3),
    }
    return figures


def _store_servers(db: Path, engine: str) -> list[Any]:
    """The embedded FalkorDB server process of ``db`` (none for Neo4j, a server of its own)."""
    import psutil

    from kgrag.graph.embedded_lease import running_server_pid

    pid = running_server_pid(db) if engine == FALKORDB else None
    return [psutil.Process(pid)] if pid else []


def _cpu_of(processes: list[Any]) -> float:
    total = 0.0
    for proc in processes:
        try:
            t = proc.cpu_times()
        except Exception:  # noqa: S112 - a server that ended counts nothing more
            continue
        total += t.user + t.system
    return total


#: Entity names per CLIP call in the serial run (the writer embeds each batch's new names).
NAMES_PER_CALL = 64


def _serial_inference(
    ingestor: Any, docs: list[Any], clip: Any, names: list[str]
) -> dict[str, Any]:
    """The model stages of the ingestion alone, on this thread: every batch the ingestor cuts
    through its builder again (chunking and embedding, no writer thread, no store), then the
    stored entity names through CLIP's text tower (what the writer embeds)."""
    timing: dict[str, float] = {}
    cpu = wall = 0.0
    for batch in ingestor._batches(docs):  # the ingestor's own batching
        c0, w0 = time.thread_time(), time.perf_counter()
        out = ingestor.builder.build(batch)
        cpu += time.thread_time() - c0
        wall += time.perf_counter() - w0
        for stage, seconds in out.timing.items():
            timing[stage] = timing.get(stage, 0.0) + seconds
    inference = sum(v for k, v in timing.items() if k != "chunk")
    # the thread's CPU time of the model calls: the build's CPU time less its chunking's share
    inference_cpu = cpu * (inference / wall) if wall else 0.0
    c0, w0 = time.thread_time(), time.perf_counter()
    for start in range(0, len(names), NAMES_PER_CALL):
        clip.embed_texts(names[start : start + NAMES_PER_CALL])
    names_cpu, names_wall = time.thread_time() - c0, time.perf_counter() - w0
    timing["embed_entity_names"] = names_wall
    return {
        "build_wall_s": round(wall, 3),
        "build_cpu_s": round(cpu, 3),
        "entity_names": len(names),
        "stage_seconds": {k: round(v, 3) for k, v in timing.items()},
        "inference_s": round(inference + names_wall, 3),
        "inference_cpu_s": round(inference_cpu + names_cpu, 3),
    }


def bench_images(tmp: Path, count: int, engine: str) -> dict[str, Any]:
    from kgrag.demo.shapes import COLOURS, SHAPES, draw_shape

    folder = tmp / "drawings"
    folder.mkdir()
    rng = random.Random(77)  # noqa: S311 - drawings, not secrets
    for i in range(count):
        colour, shape = COLOURS[i % len(COLOURS)], SHAPES[(i // len(COLOURS)) % len(SHAPES)]
        draw_shape(colour, shape, rng).save(folder / f"{i:03d}-{colour}-{shape}.png")
    with _agent(tmp / "img" / "kg.db", tmp / "images", engine) as agent:
        report = agent.ingest([str(folder)])
    return _figures(report, count)


def bench_audio(tmp: Path, engine: str) -> dict[str, Any]:
    folder = tmp / "speech"
    folder.mkdir()
    seconds = 0.0
    for i, text in enumerate(SENTENCES):
        wav = folder / f"{i}.wav"
        subprocess.run(["espeak-ng", "-s", "150", "-w", str(wav), text], check=True)
        out = subprocess.run(
            ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", wav],
            check=True,
            capture_output=True,
            text=True,
        )
        if i:  # 0.wav is ingested first, to load the model outside the measured job
            seconds += float(out.stdout)
    with _agent(tmp / "audio" / "kg.db", tmp / "images", engine) as agent:
        agent.ingest([str(folder / "0.wav")])  # load the model outside the measured job
        started = time.perf_counter()
        report = agent.ingest([str(folder)])
        wall = time.perf_counter() - started
    figures = _figures(report, len(SENTENCES) - 1)
    figures["audio_seconds"] = round(seconds, 2)
    figures["audio_seconds_per_s"] = round(seconds / wall, 2)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N passages only")
    parser.add_argument("--images", type=int, default=60)
    parser.add_argument("--skip-media", action="store_true", help="text only")
    parser.add_argument("--engine", choices=ENGINES, default=FALKORDB)
    parser.add_argument("--label", default="", help="a suffix for the results file's name")
    args = parser.parse_args()
    if not CORPUS.is_file():
        sys.stderr.write(f"missing {CORPUS}\n")
        return 1
    import torch

    torch.set_num_threads(1)
    out: dict[str, Any] = {}
    tmp = Path(tempfile.mkdtemp(prefix="kgrag-bench-"))
    try:
        out["engine"] = args.engine
        out["text"] = bench_text(tmp, args.limit, args.engine)
        if not args.skip_media:
            out["images"] = bench_images(tmp, args.images, args.engine)
            if shutil.which("espeak-ng") and shutil.which("ffprobe"):
                out["audio"] = bench_audio(tmp, args.engine)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    name = result_name("ingest_throughput", args.engine) + (f"_{args.label}" if args.label else "")
    sys.stdout.write(str(write_result(name, out)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
