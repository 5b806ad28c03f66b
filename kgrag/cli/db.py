"""``kgrag db`` (schema, statistics, backup and restore of the store) and ``kgrag delete``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgrag.cli.common import (
    App,
    JsonOpt,
    StoreOpt,
    emit,
    err,
    open_agent,
    open_store,
    out,
    settings_for,
    state,
)

db_app = App(no_args_is_help=True, help="Schema and statistics of the store.")


@db_app.command("migrate")
def db_migrate(store: StoreOpt = None) -> None:
    """Apply pending schema migrations."""
    from kgrag.graph.migrations import NOT_MENDED, migrate, status

    with open_store(store, run_migrations=False) as st:
        applied = migrate(st)
        err.print(f"applied {len(applied)} migrations; {len(status(st))} known")
        if applied:
            err.print(f"note: {NOT_MENDED}", markup=False)


@db_app.command("status")
def db_status(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Show which migrations are applied."""
    from kgrag.graph.migrations import status

    with open_store(store, run_migrations=False) as st:
        rows = status(st)
        version = st.server_version()
    if as_json:
        emit({"server": version, "migrations": [r.model_dump() for r in rows]})
        return
    out.print(f"server: {version}", markup=False)
    for r in rows:
        out.print(f"  {r.name}: {r.applied_at or 'pending'}", markup=False)


@db_app.command("documents")
def db_documents(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List every stored document (id, title, type, file): the ids `kgrag delete` takes."""
    with open_store(store) as st:
        rows = st.read("document_list", {"principals": [], "admin": True})
    docs = [
        {k: r[k] for k in ("id", "title", "modality", "uri", "ingested_at", "tags")} for r in rows
    ]
    if as_json:
        emit({"documents": docs})
        return
    for d in docs:
        out.print(f"{d['id']}  {d['modality']:<5}  {d['title'] or ''}  {d['uri']}", markup=False)


@db_app.command("stats")
def db_stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Count nodes per label and relationships per type."""
    with open_store(store) as st:
        nodes = {r["label"]: r["n"] for r in st.read("stats_labels")}
        rels = {r["type"]: r["n"] for r in st.read("stats_relationships")}
    if as_json:
        emit({"nodes": nodes, "relationships": rels})
        return
    for k, v in nodes.items():
        out.print(f"{k:>16} {v}", markup=False)
    for k, v in rels.items():
        out.print(f"{k:>16} {v}", markup=False)


@db_app.command("backup")
def db_backup(
    path: Annotated[Path, typer.Argument(help="the backup file to write (a folder: kg.db in it)")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a consistent snapshot of the embedded store to PATH while it keeps serving (Neo4j:
    `neo4j-admin database dump`, docs/operations.md)."""
    from kgrag.graph.backup import backup

    with open_store(store, run_migrations=False) as st:
        written = backup(st, path)
    if as_json:
        emit(written.model_dump(exclude={"kept"}))
    elif not state["quiet"]:
        err.print(f"backed up to {written.path} ({written.bytes} bytes)", markup=False)


@db_app.command("restore")
def db_restore(
    path: Annotated[Path, typer.Argument(help="a backup that `kgrag db backup` wrote")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace the embedded store with the backup PATH; refused while any process uses the
    store. The replaced files are kept beside it (*.before-restore-TIME)."""
    from kgrag.errors import ConfigError
    from kgrag.graph import embedded_path
    from kgrag.graph.backup import NOT_EMBEDDED, restore

    db = embedded_path(settings_for(store).store)
    if db is None:
        raise ConfigError(NOT_EMBEDDED)
    restored = restore(db, path)
    if as_json:
        emit(restored.model_dump())
    elif not state["quiet"]:
        err.print(
            f"restored {restored.path} from {path}; the replaced files are kept: "
            + ", ".join(restored.kept or ["none"]),
            markup=False,
        )


@db_app.command("compact")
def db_compact(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Give back the space of deleted data (after `kgrag traces prune`): the embedded store is
    rebuilt with new internal ids and its log rewritten, refused while another process uses it
    (stop `kgrag serve` first). Neo4j: rebuilt offline (export, `neo4j-admin database dump`
    kept as the rollback, `neo4j-admin database import`, restart, check), only on a server
    scripts/neo4j.sh runs on this machine and while no other client uses it."""
    from kgrag.config import writable_folder
    from kgrag.graph import open_settings_store
    from kgrag.graph.rebuild import rebuild

    settings = settings_for(store)
    with open_store(store) as st:
        report = rebuild(
            st,
            reopen=lambda: open_settings_store(settings, run_migrations=False),
            scratch=(
                writable_folder(settings.data_dir, "KGRAG_DATA_DIR")
                if st.dialect == "neo4j"
                else None
            ),
        )
    if as_json:
        emit(report.model_dump())
    elif not state["quiet"]:
        if report.rebuilt:
            err.print(
                f"rebuilt {report.nodes} nodes and {report.relationships} relationships in "
                f"{report.seconds:.1f} s ({report.note})",
                markup=False,
            )
        else:
            err.print(report.note, markup=False)


def delete(
    document_id: Annotated[str, typer.Argument(help="a Document id")],
    store: StoreOpt = None,
) -> None:
    """Remove a document and what only it supported."""
    with open_agent(store) as agent:
        agent.delete(document_id)
    if not state["quiet"]:
        err.print(f"deleted {document_id}", markup=False)
