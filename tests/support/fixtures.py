"""Pytest fixtures shared by the suite (registered through ``pytest_plugins`` in conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.graph.store import GraphStore
from tests.support.engines import ENGINE_PARAMS, Engine, engine_for
from tests.support.openai_server import LocalOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[LocalOpenAIServer]:
    """A running :class:`LocalOpenAIServer` for one test; ``openai_server.base_url`` is the URL
    to give an OpenAI client (any API key is accepted)."""
    with LocalOpenAIServer() as server:
        yield server


@pytest.fixture(params=ENGINE_PARAMS)
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """Each engine in turn (embedded FalkorDB, Neo4j) for one test; Neo4j is emptied first."""
    found = engine_for(request.param, tmp_path)
    found.reset()
    return found


@pytest.fixture(scope="module", params=ENGINE_PARAMS)
def module_engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Engine:
    """Each engine in turn for a whole module (its fixtures ingest once per engine); Neo4j is
    emptied first."""
    found = engine_for(request.param, tmp_path_factory.mktemp(request.param))
    found.reset()
    return found


@pytest.fixture(scope="module")
def module_store(module_engine: Engine) -> Iterator[GraphStore]:
    """A store open on :func:`module_engine` for the whole module, closed after it."""
    s = module_engine.open()
    yield s
    s.close()
