"""Real input files for the ingestion tests: speech (espeak-ng), audio containers and videos
(ffmpeg), drawings (the tiny CLIP's shapes), PDFs, and graph snapshots to compare stores."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgrag.demo.shapes import draw_shape
from kgrag.graph.store import GraphStore

REPO = Path(__file__).resolve().parents[2]
KGRAG = [sys.executable, "-m", "kgrag.cli"]

needs_media_tools = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("ffmpeg", "ffprobe", "espeak-ng")),
    reason="ffmpeg, ffprobe and espeak-ng are needed (scripts/setup.sh installs them)",
)


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True, timeout=120)


def speech(path: Path, text: str) -> Path:
    """``text`` spoken by espeak-ng into ``path`` (WAV; other suffixes are converted)."""
    wav = path if path.suffix == ".wav" else path.with_suffix(".tmp.wav")
    subprocess.run(["espeak-ng", "-s", "150", "-w", str(wav), text], check=True, timeout=60)
    if wav != path:
        ffmpeg("-i", str(wav), str(path))
        wav.unlink()
    return path


def video(path: Path, text: str) -> Path:
    """A real video: a colour test pattern stream and ``text`` spoken as its audio track."""
    wav = speech(path.with_suffix(".speech.wav"), text)
    ffmpeg(
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=96x64:rate=10",
        "-i",
        str(wav),
        "-shortest",
        "-c:v",
        "mpeg4" if path.suffix == ".mp4" else "ffv1",
        "-c:a",
        "aac" if path.suffix == ".mp4" else "flac",
        str(path),
    )
    wav.unlink()
    return path


def drawing(path: Path, colour: str, shape: str, seed: int = 7) -> Path:
    draw_shape(colour, shape, random.Random(seed), size=64).save(path)
    return path


def duration(path: Path) -> float:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip())


def rows(store: GraphStore, cypher: str, **params: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in store.read_freeform(cypher, params)]


def snapshot(store: GraphStore) -> dict[str, Any]:
    """What a graph holds, comparable between stores: counts per label and relationship type,
    document ids with their status, entity ids."""
    return {
        "labels": {r["label"]: r["n"] for r in store.read("stats_labels")},
        "relationships": {r["type"]: r["n"] for r in store.read("stats_relationships")},
        "documents": sorted(
            (r["id"], r["status"])
            for r in rows(store, "MATCH (d:Document) RETURN d.id AS id, d.status AS status")
        ),
        "entities": sorted(r["id"] for r in rows(store, "MATCH (e:Entity) RETURN e.id AS id")),
    }


def orphans(store: GraphStore) -> dict[str, int]:
    """Parts without their document, entities nothing supports, documents not complete."""
    return {
        "chunks": rows(
            store, "MATCH (c:Chunk) WHERE NOT (c)-[:PART_OF]->(:Document) RETURN count(c) AS n"
        )[0]["n"],
        "images": rows(
            store, "MATCH (i:Image) WHERE NOT (i)-[:PART_OF]->(:Document) RETURN count(i) AS n"
        )[0]["n"],
        "entities": rows(
            store,
            "MATCH (e:Entity) WHERE NOT ()-[:MENTIONS|DEPICTS]->(e) RETURN count(e) AS n",
        )[0]["n"],
        "unfinished": rows(
            store, "MATCH (d:Document) WHERE d.status <> 'complete' RETURN count(d) AS n"
        )[0]["n"],
        "related_zero": rows(
            store, "MATCH (:Entity)-[r:RELATED]->(:Entity) WHERE r.weight = 0 RETURN count(r) AS n"
        )[0]["n"],
    }
