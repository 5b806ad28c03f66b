"""``kgrag ingest --bulk-import`` (kgrag.ingest.bulk_job): a first load of an empty Neo4j through
neo4j-admin gives the graph the transactional job writes; a database that is not empty, and the
embedded engine, are refused with a clear error and nothing stored changes. The Neo4j case stops
and restarts the suite's server once."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.errors import ConfigError
from kgrag.graph.bulk_import import BulkImportError
from kgrag.graph.dump import differences, dump
from kgrag.ingest.bulk_job import bulk_ingest
from tests.integration.ingest_media import KGRAG, REPO
from tests.support.engines import Engine
from tests.support.neo4j_control import local_neo4j

TEXTS = {
    "lovelace.txt": "Ada Lovelace wrote to Charles Babbage about the Analytical Engine in London.",
    "babbage.md": "# Babbage\n\nCharles Babbage showed the Difference Engine to Mary Somerville.",
    "boole.txt": "George Boole wrote The Laws of Thought in Cork. Boole met Charles Babbage.",
}


def corpus(folder: Path) -> Path:
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return folder


def bulk_cli(engine: Engine, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **engine.env(), "KGRAG_DATA_DIR": str(engine.folder / "data")}
    if engine.is_neo4j:  # the server scripts/neo4j.sh stops and starts: the suite's own
        password = engine.credentials()["neo4j_password"]
        local = local_neo4j(engine.uri, password)
        env |= {k: v for k, v in local._env().items() if k.startswith("NEO4J_")}
    return subprocess.run(
        [*KGRAG, "ingest", str(folder), "--bulk-import", "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_bulk_import_loads_an_empty_neo4j_as_the_transactional_job_and_refuses_a_full_one(
    engine: Engine,
) -> None:
    folder = corpus(engine.folder / "corpus")
    agent = KnowledgeAgent.open(engine.settings(data_dir=engine.folder / "data"))
    if not engine.is_neo4j:  # what the flag calls, in this process (a CLI start costs seconds)
        try:
            with pytest.raises(ConfigError, match="--bulk-import loads a Neo4j database"):
                bulk_ingest(agent, [str(folder)])
            assert dump(agent.store).labels.get("Document", 0) == 0  # nothing was written
        finally:
            agent.store.close()
        return
    try:
        serial = agent.ingest([str(folder)])
        # the bulk path writes no CLIP vectors of entity names (they link later images)
        agent.store._execute(
            "MATCH (e:Entity) REMOVE e.clip_embedding, e.clip_name", {}, read_only=False
        )
        expected = dump(agent.store)
    finally:
        agent.store.close()
    assert serial.ingested == len(TEXTS) and expected.types["RELATED"] > 0

    engine.reset()
    done = bulk_cli(engine, folder)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["ingested"] == len(TEXTS)
    with engine.open() as store:
        loaded = dump(store)
    assert differences(expected, loaded) == []

    agent = KnowledgeAgent.open(engine.settings(data_dir=engine.folder / "data"))
    try:  # not empty now: refused before any model runs (exit 4 from the CLI: a StoreError)
        with pytest.raises(BulkImportError, match="import would overwrite them"):
            bulk_ingest(agent, [str(folder)])
        assert differences(loaded, dump(agent.store)) == []
    finally:
        agent.store.close()
