"""``kgrag ingest ... --bulk-import``: a first load of an empty Neo4j database through
``neo4j-admin database import`` (:mod:`kgrag.graph.bulk_import`) instead of write transactions.

The job runs as any other (parsing, models, entities, summaries, serially or on Ray), but the
bundles it would write are kept (``Ingestor.bundle_sink``); then :func:`kgrag.graph.bulk_import.
bulk_load` writes them as CSV files, stops the server, imports, starts it and applies kgrag's
migrations. The database must be empty (checked before anything is read, and again right before
the import): the import replaces it. Only text documents go this way (images, tables and
recordings are refused by the bulk writer, naming the first such file); the server is driven by
``scripts/neo4j.sh`` or the script ``KGRAG_NEO4J_SCRIPT`` names (``stop``, ``start`` and
``admin ARGS...`` subcommands), run on the machine that holds the database.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.errors import ConfigError
from kgrag.graph.bulk_import import BulkLoadResult, Neo4jServer, bulk_load, dev_script, ensure_empty
from kgrag.graph.spaces import EmbeddingSpace
from kgrag.ingest.pipeline import IngestReport, ProgressCallback
from kgrag.ingest.records import DocumentBundle

if TYPE_CHECKING:
    from kgrag.agent.agent import KnowledgeAgent


def bulk_ingest(
    agent: KnowledgeAgent,
    paths: Sequence[str],
    acl: Sequence[str] = (),
    *,
    ray: str | bool | None = None,
    progress: ProgressCallback | None = None,
    server: Neo4jServer | None = None,
    actor: str | None = None,
) -> tuple[IngestReport, BulkLoadResult | None]:
    """Ingest ``paths`` into the agent's empty Neo4j database with ``neo4j-admin database
    import``; the report of the job, and what the import did (None when no document was left to
    import). ConfigError on another engine or a sharded job, BulkImportError when the database
    is not empty or neo4j-admin fails; the agent's store is closed by the import."""
    if agent.store.dialect != "neo4j":
        raise ConfigError(
            "--bulk-import loads a Neo4j database with neo4j-admin; the store is "
            f"{agent.store.uri}: ingest without --bulk-import"
        )
    if agent.ingest_options.shard is not None:
        raise ConfigError("--bulk-import loads the whole corpus at once: drop --shard")
    if agent.settings is None:
        raise ConfigError("a bulk import reopens the store from settings: use KnowledgeAgent.open")
    ensure_empty(agent.store)  # before any model runs
    kept: list[DocumentBundle] = []
    ingestor = agent.ingestor(progress, ray=ray)
    ingestor.bundle_sink = kept
    report = ingestor.ingest_paths(paths, acl, actor=actor)
    if not kept:
        return report, None
    from kgrag.graph import open_settings_store

    settings = agent.settings
    directory = Path(tempfile.mkdtemp(prefix="kgrag-bulk-", dir=_scratch(settings.data_dir)))
    try:
        result = bulk_load(
            sorted(kept, key=lambda b: b.uri),
            directory,
            server or Neo4jServer.dev_script(dev_script()),
            agent.store,
            lambda: open_settings_store(settings, run_migrations=False),
            [EmbeddingSpace.of("text", agent.text_embedder)],
        )
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return report, result


def _scratch(data_dir: Path) -> Path:
    """The data folder, created for the import files (ConfigError naming KGRAG_DATA_DIR when it
    cannot be)."""
    from kgrag.config import writable_folder

    return writable_folder(data_dir, "KGRAG_DATA_DIR")
