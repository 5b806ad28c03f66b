"""Fixtures of the reliability tests: the real MiniLM embedder, a small real corpus, and the graph
of a clean ingestion of it that every fault test compares its recovered graph with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.graph import open_store
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import RuleEntityExtractor
from kgrag.ingest.pipeline import IngestOptions, Ingestor, IngestReport
from kgrag.modalities.base import TextEmbedder
from tests.reliability.support import GraphSnapshot, snapshot, write_corpus

BATCH_CHUNKS = 2  # about two documents per embedding batch, so a job has several batches


@pytest.fixture(scope="session")
def minilm() -> TextEmbedder:
    from kgrag.config import Settings
    from kgrag.modalities import factory

    return factory.text_embedder(Settings())


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reliability") / "corpus"
    write_corpus(folder, n=8, paragraphs=4)
    return folder


def open_text_store(db: Path, embedder: TextEmbedder) -> GraphStore:
    store = open_store(f"falkordb-lite:///{db}")
    ensure_space(
        store,
        EmbeddingSpace(name="text", model=embedder.model_name, dimensions=embedder.dimensions),
    )
    return store


def ingest(
    store: GraphStore, embedder: TextEmbedder, paths: list[str], **options: int
) -> IngestReport:
    return Ingestor(
        store,
        embedder,
        RuleEntityExtractor(),
        options=IngestOptions(batch_chunks=options.get("batch_chunks", BATCH_CHUNKS)),
    ).ingest_paths(paths)


@pytest.fixture(scope="session")
def clean_run(
    minilm: TextEmbedder, corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> GraphSnapshot:
    """The graph of one uninterrupted ingestion of the corpus."""
    store = open_text_store(tmp_path_factory.mktemp("clean") / "kg.db", minilm)
    try:
        report = ingest(store, minilm, [str(corpus)])
        assert report.failed == 0 and report.ingested == 8, report
        snap = snapshot(store)
    finally:
        store.close()
    assert not snap.unfinished()
    assert snap.labels.get("Entity", 0) > 5 and snap.relationships.get("RELATED", 0) > 5, snap
    return snap


@pytest.fixture
def fresh_store(tmp_path: Path, minilm: TextEmbedder) -> Iterator[GraphStore]:
    store = open_text_store(tmp_path / "kg.db", minilm)
    yield store
    store.close()
