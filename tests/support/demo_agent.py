"""The demo corpus (kgrag.demo.corpus: documents, a PDF with a figure, drawings; not its
recording, whose transcription the demo's own tests cover) ingested once per module and engine,
public except the roster, which ``group:maintenance`` only reads: what the integration tests
(MCP, async API, retrievers) ask about. The models are loaded once per test process."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.demo.corpus import make_corpus
from kgrag.demo.shapes import draw_shape
from kgrag.graph.store import GraphStore
from kgrag.ingest.pipeline import IngestOptions
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.clip import tiny_clip_embedder

#: The group that may read the maintenance roster (every other demo file is public).
ROSTER_GROUP = "maintenance"


@dataclass(frozen=True)
class DemoCorpus:
    agent: KnowledgeAgent
    folder: Path
    documents: dict[str, str]
    """File name -> document id."""


@cache
def _text_embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


_image_embedder = cache(tiny_clip_embedder)


def offline_agent(store: GraphStore, image_dir: Path | None = None) -> KnowledgeAgent:
    """An agent on ``store`` with the offline models (MiniLM, the tiny CLIP) loaded once per
    test process; extracted pictures go to ``image_dir`` when given."""
    options = IngestOptions(image_dir=image_dir) if image_dir is not None else IngestOptions()
    return KnowledgeAgent(
        store, _text_embedder(), image_embedder=_image_embedder, ingest_options=options
    )


def demo_agent(store: GraphStore, folder: Path) -> DemoCorpus:
    paths = [p for p in make_corpus(folder / "corpus") if p.suffix != ".wav"]
    agent = offline_agent(store, folder / "images")
    roster = [p for p in paths if p.name == "maintenance.md"]
    public = agent.ingest([str(p) for p in paths if p not in roster])
    private = agent.ingest([str(p) for p in roster], acl=[f"group:{ROSTER_GROUP}"])
    for report in (public, private):
        assert report.failed == 0, report.failures
    rows = store.read("document_list", {"principals": [], "admin": True})
    return DemoCorpus(agent, folder, {Path(r["uri"]).name: r["id"] for r in rows})


def drawing(folder: Path, colour: str, shape: str, seed: int) -> Path:
    """A new drawing of the demo's kind (not one of the corpus files)."""
    path = folder / f"new_{colour}_{shape}_{seed}.png"
    draw_shape(colour, shape, random.Random(seed), size=64).save(path)
    return path
