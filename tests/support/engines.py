"""The two real engines every store-touching test runs on: the embedded FalkorDB and a Neo4j 5
server.

Neo4j comes from ``KGRAG_TEST_NEO4J_URI`` (with ``KGRAG_NEO4J_USER`` / ``KGRAG_NEO4J_PASSWORD``;
``make test`` starts one with ``scripts/neo4j.sh`` and sets them), else from a ``neo4j:5``
container through testcontainers when a Docker engine answers. Without either the Neo4j half is
skipped, saying why, unless ``KGRAG_REQUIRE_NEO4J=1`` (set by ``make test``, so CI), which turns
that skip into a failure.

Neo4j Community has one user database, so a test that opens the Neo4j engine gets it emptied
first (Neo4jStore.erase: every node and relationship, and kgrag's vector indexes, whose dimension
the next embedding space sets; constraints and other indexes stay, as the next migration would
create them the same), as a fresh embedded file would be; tests therefore never hold two Neo4j
stores of different content at once.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kgrag.config import Settings
from kgrag.graph import open_store
from kgrag.graph.store import GraphStore

FALKORDB = "falkordb-lite"
NEO4J = "neo4j"
#: A Neo4j 2026.x server (Cypher 25: the ``cypher/neo4j_search`` SEARCH-clause overlays run there);
#: only the store contract tests use it, from ``KGRAG_TEST_NEO4J_2026_URI``.
NEO4J_2026 = "neo4j-2026"
_URI_VARIABLE = {NEO4J: "KGRAG_TEST_NEO4J_URI", NEO4J_2026: "KGRAG_TEST_NEO4J_2026_URI"}

#: ``@pytest.fixture(params=ENGINE_PARAMS)`` or ``@pytest.mark.parametrize("engine_name", ...)``.
ENGINE_PARAMS = [
    pytest.param(FALKORDB, id=FALKORDB),
    pytest.param(NEO4J, id=NEO4J, marks=pytest.mark.neo4j),
]

#: The contract tests also run on Neo4j 2026 (scripts/test.sh starts one beside 5.26).
CONTRACT_ENGINE_PARAMS = [
    *ENGINE_PARAMS,
    pytest.param(NEO4J_2026, id=NEO4J_2026, marks=pytest.mark.neo4j),
]

_CONTAINER: list[tuple[str, str, str]] = []


def _missing(reason: str) -> None:
    if os.environ.get("KGRAG_REQUIRE_NEO4J") == "1":
        pytest.fail(reason + "; KGRAG_REQUIRE_NEO4J=1 forbids skipping them")
    pytest.skip(reason)


def neo4j_server(name: str = NEO4J) -> tuple[str, str, str]:
    """``(uri, user, password)`` of the Neo4j server for tests, or skip (fail under
    ``KGRAG_REQUIRE_NEO4J=1``) saying which was missing."""
    uri = os.environ.get(_URI_VARIABLE[name])
    if name == NEO4J_2026 and not uri:
        _missing(f"Neo4j 2026 tests need {_URI_VARIABLE[name]} (scripts/test.sh starts one)")
    if uri:
        return (
            uri,
            os.environ.get("KGRAG_NEO4J_USER", "neo4j"),
            os.environ.get("KGRAG_NEO4J_PASSWORD", ""),
        )
    if not _CONTAINER:
        try:
            import docker  # type: ignore[import-untyped]

            docker.from_env().ping()
        except Exception as e:  # no SDK, no socket, or an engine that does not answer
            _missing(
                "Neo4j tests need KGRAG_TEST_NEO4J_URI (make neo4j starts a server) or a Docker "
                f"engine for testcontainers, and no Docker engine answers here ({type(e).__name__})"
            )
        from testcontainers.neo4j import Neo4jContainer  # type: ignore[import-untyped]

        container = Neo4jContainer("neo4j:5")
        container.start()
        atexit.register(container.stop)
        _CONTAINER.append((container.get_connection_url(), container.username, container.password))
    return _CONTAINER[0]


def wipe_neo4j(uri: str, user: str, password: str) -> None:
    """Empty the database (Neo4jStore.erase: nodes, relationships, kgrag's vector indexes)."""
    from kgrag.graph.neo4j_store import Neo4jStore

    store = open_store(uri, neo4j_user=user, neo4j_password=password, run_migrations=False)
    try:
        assert isinstance(store, Neo4jStore)
        store.erase()
    finally:
        store.close()


@dataclass(frozen=True)
class Engine:
    """One engine for one test: its store URI, and the environment a subprocess needs."""

    name: str
    folder: Path

    @property
    def is_neo4j(self) -> bool:
        return self.name in _URI_VARIABLE

    @property
    def uri(self) -> str:
        if self.is_neo4j:
            return neo4j_server(self.name)[0]
        return f"falkordb-lite:///{self.folder}/kg.db"

    def credentials(self) -> dict[str, str]:
        if not self.is_neo4j:
            return {}
        _, user, password = neo4j_server(self.name)
        return {"neo4j_user": user, "neo4j_password": password}

    def env(self) -> dict[str, str]:
        """``KGRAG_STORE`` and the credentials, for a ``kgrag`` subprocess."""
        out = {"KGRAG_STORE": self.uri}
        if self.is_neo4j:
            _, user, password = neo4j_server(self.name)
            out |= {"KGRAG_NEO4J_USER": user, "KGRAG_NEO4J_PASSWORD": password}
        return out

    def reset(self) -> None:
        """Empty the Neo4j database (the embedded store of a new folder is empty already)."""
        if self.is_neo4j:
            wipe_neo4j(*neo4j_server(self.name))

    def open(self, **kwargs: Any) -> GraphStore:
        """Open this engine's store (migrated) without emptying it."""
        return open_store(self.uri, **self.credentials(), **kwargs)

    def fresh(self, **kwargs: Any) -> GraphStore:
        """An empty, migrated store."""
        self.reset()
        return self.open(**kwargs)

    def settings(self, **kwargs: Any) -> Settings:
        """Settings that point at this engine (``data_dir`` defaults to the test's folder)."""
        values: dict[str, Any] = {"store": self.uri, "data_dir": self.folder}
        if self.is_neo4j:
            _, user, password = neo4j_server(self.name)
            values |= {"neo4j_user": user, "neo4j_password": password}
        return Settings(**(values | kwargs))


def engine_for(name: str, folder: Path) -> Engine:
    """The engine ``name`` for a test whose files live in ``folder``; skips (or fails, see the
    module doc) when Neo4j is asked for and none is configured."""
    engine = Engine(name, folder)
    if engine.is_neo4j:
        neo4j_server(name)
    return engine
