"""Backup and restore of the embedded store (``kgrag db backup`` / ``kgrag db restore``).

A backup is the engine's own snapshot (:meth:`FalkorDBStore.snapshot`: ``BGSAVE``, a consistent
copy of the data as of one moment, taken while the server keeps serving questions and
ingestion), copied to the target as one RDB file. A restore puts such a file in place of the
database while no process uses the store (the lease of :mod:`kgrag.graph.embedded_lease`: it
holds the open/close lock and finds no running server); the replaced files are kept beside it.
Neo4j is backed up with its own tool, ``neo4j-admin database dump/load`` (docs/operations.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

from kgrag.core import Frozen
from kgrag.errors import ConfigError, StoreError, StoreUnavailableError
from kgrag.graph.embedded_lease import open_close_section, running_server_pid
from kgrag.graph.falkordb_store import FalkorDBStore, aof_name
from kgrag.graph.store import GraphStore

#: Every RDB file starts with these bytes.
RDB_MAGIC = b"REDIS"
NOT_EMBEDDED = (
    "only the embedded store (falkordb-lite:///...) is backed up by kgrag; back up Neo4j with "
    "`neo4j-admin database dump` and restore it with `neo4j-admin database load` "
    "(docs/operations.md)"
)


class BackupFile(Frozen):
    """A backup written or restored."""

    # Mutable defaults are per instance (pydantic copies them); ruff's RUF012 sees that only for
    # direct BaseModel subclasses, hence the noqa on each.

    path: str
    bytes: int
    sha256: str
    kept: list[str] = []  # noqa: RUF012
    """Restore: the files it replaced, renamed beside the database (delete them once the
    restored store is checked)."""


def backup(store: GraphStore, target: Path) -> BackupFile:
    """Write a consistent snapshot of the embedded ``store`` to ``target`` (an RDB file; a
    folder gets ``kg.db`` inside); the store keeps serving meanwhile."""
    if not isinstance(store, FalkorDBStore):
        raise ConfigError(NOT_EMBEDDED)
    target = target.expanduser()
    if target.is_dir():
        target = target / "kg.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    snapshot = store.snapshot()
    try:
        digest = _copy(snapshot, target)
    except OSError as e:
        raise StoreError(f"could not write the backup {target}: {e}") from e
    return BackupFile(path=str(target), bytes=target.stat().st_size, sha256=digest)


def restore(db: Path, source: Path) -> BackupFile:
    """Make the embedded database ``db`` the content of the backup ``source``. Refused while
    any process has the store open; the files it replaces are renamed, not deleted."""
    source = source.expanduser()
    try:
        with source.open("rb") as f:
            magic = f.read(len(RDB_MAGIC))
    except OSError as e:
        raise ConfigError(f"cannot read the backup {source}: {e}") from e
    if magic != RDB_MAGIC:
        raise ConfigError(
            f"{source} is not a backup of the embedded store (an RDB file starts with "
            f"{RDB_MAGIC!r}); `kgrag db backup PATH` writes one"
        )
    db = db.expanduser().resolve()
    db.parent.mkdir(parents=True, exist_ok=True)
    with open_close_section(db):
        pid = running_server_pid(db)
        if pid is not None:
            raise StoreUnavailableError(
                f"the store {db} is in use (its server, pid {pid}, runs for an open store): "
                "stop `kgrag serve` and every other kgrag process using it, then restore"
            )
        stamp = time.strftime("%Y%m%dT%H%M%S")
        kept = []
        aof = aof_name(db)
        aof_dir = db.parent / "appendonlydir"
        old = [db, *sorted(aof_dir.glob(aof + ".*"))] if aof_dir.is_dir() else [db]
        for path in old:
            if path.exists():
                moved = path.with_name(f"{path.name}.before-restore-{stamp}")
                os.replace(path, moved)
                kept.append(str(moved))
        # The server loads the append-only files, not the database file, when appendonly is on
        # (it is): the snapshot becomes their base (an RDB base, as aof-use-rdb-preamble
        # writes), and the database file too.
        aof_dir.mkdir(exist_ok=True)
        base = aof_dir / f"{aof}.1.base.rdb"
        digest = _copy(source, base)
        _copy(source, db)
        manifest = aof_dir / f"{aof}.manifest"
        manifest.write_text(f"file {base.name} seq 1 type b\n", encoding="utf-8")
    return BackupFile(path=str(db), bytes=db.stat().st_size, sha256=digest, kept=kept)


def _copy(source: Path, target: Path) -> str:
    """Copy ``source`` to ``target`` (written beside it, synced, renamed); its sha256."""
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    try:
        with source.open("rb") as src, partial.open("wb") as out:
            while block := src.read(1 << 20):
                digest.update(block)
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    return digest.hexdigest()


__all__ = ["NOT_EMBEDDED", "BackupFile", "backup", "restore"]
