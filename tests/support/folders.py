"""A real folder's test files, copied from tests/data into a folder of the test's own and
ingested by one agent: every file must be ingested, none fail."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory


def ingested_copy(
    store: GraphStore,
    tmp_path_factory: pytest.TempPathFactory,
    data: Path,
    files: Sequence[str],
) -> KnowledgeAgent:
    """An agent over ``store`` that has ingested ``files`` of ``data``, copied into a folder
    named as ``data`` (with a space for each underscore)."""
    folder = tmp_path_factory.mktemp(data.name.replace("_", " "))
    for name in files:
        shutil.copy(data / name, folder)
    agent = KnowledgeAgent(store, factory.text_embedder(Settings()))
    report = agent.ingest([str(folder)])
    assert (report.ingested, report.failed) == (len(files), 0), (report.failures, report.skips)
    return agent
