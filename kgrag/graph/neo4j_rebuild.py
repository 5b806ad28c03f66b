"""``kgrag db compact`` on Neo4j: an offline rebuild of a local server's database with
``neo4j-admin database import``.

Neo4j reuses the records of deleted nodes and relationships but never shrinks its store files,
``neo4j-admin database dump``/``load`` give back the same bytes, and a compact copy
(``neo4j-admin database copy``) is Enterprise-only. So the database is written anew:

1. while the server runs, every node and relationship is read a page at a time (the FalkorDB
   rebuild's statements, :mod:`kgrag.graph.rebuild`) into digests and into the CSV files of
   ``neo4j-admin database import full`` (the bulk path's writer, :mod:`kgrag.graph.bulk_import`):
   one file per label set and one per relationship type, each property in a column of its own
   type (a vector as a ``double[]``); the nodes' old ids are the import's ``:ID``, not stored.
   Neo4j's transaction counter (``SHOW TRANSACTIONS``) is read before and after: any other
   transaction meanwhile (another client reading or writing) and the rebuild is refused;
2. the server is stopped, the database dumped (``neo4j-admin database dump``: the rollback),
   imported from the files with ``--overwrite-destination`` and started again;
3. empty lists (which an import reads as no property) are set back, the indexes and constraints
   of the applied migrations and the vector indexes of the registered embedding spaces are made
   by the schema code (the migration markers and spaces are nodes, imported with the rest);
4. the new database is read back as in 1 and must give the same digests (labels, properties of
   the same types, relationships by the digests of their ends, relationship properties) and the
   same index and constraint lists. Anything wrong after the server was stopped, and the dump is
   loaded back (the original database, byte for byte) and the server started: nothing changed.

It drives only a server that kgrag can stop and start on this machine: ``scripts/neo4j.sh`` (or
the script ``KGRAG_NEO4J_SCRIPT`` names, with its ``stop``, ``start``, ``status``, ``env`` and
``admin ARGS...`` subcommands) whose Bolt port is the store's. Anything else is refused
(:data:`NOT_MANAGED`) before anything is read. The export is held in memory until the files are
written (the graph after a prune of traces is small; a store of millions of vectors is better
dumped and imported by hand). The server is down for the dump, the import and a restart.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from kgrag.errors import ConfigError, StoreError, StoreUnavailableError
from kgrag.graph.bulk_import import (
    DATABASE,
    Column,
    ImportFiles,
    Neo4jServer,
    _Writer,
    dev_script,
)
from kgrag.graph.rebuild import (
    Reader,
    RebuildReport,
    _create_schema,
    _Digest,
    _node_pages,
    _node_record,
    _relationship_pages,
    _relationship_record,
    _rows,
)
from kgrag.graph.store import GraphStore, Params, Row

log = logging.getLogger(__name__)

#: The temporary property that marks, in the import, a node whose empty lists are set back after
#: it (neo4j-admin reads an empty array as no property); removed by the same statement.
MARKER = "kgrag_rebuild_id"
#: Cypher's type names (``valueType`` without ``NOT NULL``) and neo4j-admin's header types.
CSV_TYPES = {
    "STRING": "",
    "INTEGER": "long",
    "FLOAT": "double",
    "BOOLEAN": "boolean",
    "LIST<STRING>": "string[]",
    "LIST<INTEGER>": "long[]",
    "LIST<FLOAT>": "double[]",
    "LIST<BOOLEAN>": "boolean[]",
}
EMPTY_LIST = "LIST<NOTHING>"
#: A property key a CSV header can carry as it is.
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
NOT_MANAGED = (
    "kgrag db compact rebuilds a Neo4j database offline (export, neo4j-admin database import, "
    "restart), so it needs a server it can stop and start on this machine: the one "
    "scripts/neo4j.sh runs (its NEO4J_DIR, NEO4J_BOLT_PORT... in the environment), or a script "
    "named by KGRAG_NEO4J_SCRIPT with the same stop/start/status/env/admin subcommands. {why}. "
    "Nothing was changed. For another server: stop the applications using it and run this "
    "command where the script can manage it, or export and re-import the database yourself "
    "(neo4j-admin database import full; on Enterprise, neo4j-admin database copy)."
)


@dataclass
class _Group:
    """The rows of one import file: a label set (or a relationship type), its columns' types."""

    types: dict[str, str] = field(default_factory=dict)
    rows: list[tuple[str, ...]] = field(default_factory=list)
    props: list[dict[str, Any]] = field(default_factory=list)

    def fits(self, kinds: dict[str, str]) -> bool:
        return all(self.types.get(k, t) == t for k, t in kinds.items())


@dataclass
class _Export:
    """What the export read: digests, counts, and the import files' rows."""

    nodes: _Digest = field(default_factory=_Digest)
    relationships: _Digest = field(default_factory=_Digest)
    node_groups: dict[str, list[_Group]] = field(default_factory=dict)
    relationship_groups: dict[str, list[_Group]] = field(default_factory=dict)
    empty_lists: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    """Old node id -> its properties that are empty lists (set back after the import)."""


class _Counted:
    """A store whose reads are counted (each is one transaction: the activity fence)."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.count = 0

    def read(self, name: str, params: Params | None = None) -> list[Row]:
        self.count += 1
        return self.store.read(name, params)


def managed_server(uri: str) -> Neo4jServer:
    """The server kgrag can stop and start for the store at ``uri`` (ConfigError naming what to
    do otherwise): the dev script, run with this process's environment, must serve that Bolt
    port on this machine and run."""
    script = dev_script()
    parsed = urlparse(uri)
    if not script.is_file():
        raise ConfigError(NOT_MANAGED.format(why=f"there is no script {script}"))
    if (parsed.hostname or "") not in _LOOPBACK:
        raise ConfigError(
            NOT_MANAGED.format(why=f"the store {uri} is not on this machine (127.0.0.1)")
        )
    server = Neo4jServer.dev_script(script)
    exports = server.run(("bash", str(script), "env"), f"{script} env")
    found = re.search(r"^export KGRAG_STORE=\S+://[^:/]+:(\d+)", exports, re.MULTILINE)
    port = parsed.port or 7687
    if not found or int(found.group(1)) != port:
        served = f"Bolt port {found.group(1)}" if found else "no Bolt port"
        raise ConfigError(
            NOT_MANAGED.format(
                why=f"{script} manages the server of {served}, not the store's ({uri})"
            )
        )
    status = subprocess.run(
        ["bash", str(script), "status"], capture_output=True, text=True, check=False
    )
    if status.returncode != 0:
        raise ConfigError(
            NOT_MANAGED.format(why=f"{script} did not start the server that serves {uri}")
        )
    return server


def rebuild_neo4j(
    store: GraphStore,
    reopen: Callable[[], GraphStore],
    scratch: Path,
    server: Neo4jServer | None = None,
) -> RebuildReport:
    """Rebuild the Neo4j database behind ``store`` offline (see the module doc); ``reopen()``
    opens it again once restarted. ``store`` is closed. The export files and the dump live in a
    folder under ``scratch``, removed at the end (kept, and named in the error, only when the
    dump could not be loaded back)."""
    server = server or managed_server(store.uri)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="kgrag-compact-", dir=scratch))
    keep = False
    try:
        try:
            old_indexes = [
                _rows(store, n) for n in ("schema/index_list", "schema/unique_constraints")
            ]
            export = _export(store)
            files = _write_files(export, work / "import")
        finally:
            store.close()
        server.run(server.stop, "stopping Neo4j")
        dump = work / "dump"
        dump.mkdir()
        try:
            server.run(
                [*server.admin, "database", "dump", DATABASE, f"--to-path={dump}"],
                "neo4j-admin database dump",
            )
        except BaseException:
            server.run(server.start, "starting Neo4j")  # the database as it was
            raise
        try:
            server.run([*server.admin, *files.admin_arguments()], "neo4j-admin database import")
            server.run(server.start, "starting Neo4j")
            fresh = reopen()
            try:
                _finish(fresh, export)
                _check(fresh, export, old_indexes)
            finally:
                fresh.close()
        except BaseException as e:
            keep = True
            _roll_back(server, dump, e)
            keep = False
            if isinstance(e, StoreError) and "dump was loaded back" not in str(e):
                raise type(e)(
                    f"{e}\nThe dump taken before the import was loaded back: nothing changed."
                ) from e
            raise
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    seconds = round(time.perf_counter() - started, 2)
    log.info(
        "rebuilt Neo4j %s offline: %d nodes, %d relationships in %.1f s",
        store.uri,
        export.nodes.count,
        export.relationships.count,
        seconds,
    )
    return RebuildReport(
        engine="neo4j",
        rebuilt=True,
        nodes=export.nodes.count,
        relationships=export.relationships.count,
        seconds=seconds,
        note="rebuilt offline with neo4j-admin database import; the server restarted",
    )


def _roll_back(server: Neo4jServer, dump: Path, cause: BaseException) -> None:
    """Load the dump back over whatever the import left, and start the server."""
    log.warning("the Neo4j rebuild failed (%s): loading the dump back", cause)
    try:
        server.run(server.stop, "stopping Neo4j")
        server.run(
            [
                *server.admin,
                "database",
                "load",
                DATABASE,
                f"--from-path={dump}",
                "--overwrite-destination=true",
            ],
            "neo4j-admin database load",
        )
        server.run(server.start, "starting Neo4j")
    except BaseException as e:
        raise StoreError(
            f"the Neo4j rebuild failed ({cause}) and loading the dump of the database back "
            f"failed too ({e}): the dump is kept in {dump}; load it with `neo4j-admin database "
            f"load {DATABASE} --from-path={dump} --overwrite-destination=true`"
        ) from e


def _transaction(store: GraphStore) -> int:
    """The number of the current transaction of the database (SHOW TRANSACTIONS); refused
    while another transaction runs."""
    rows = [r for r in store.read("rebuild_transactions") if r["database"] == DATABASE]
    if len(rows) != 1:
        raise StoreUnavailableError(
            f"{len(rows) - 1} other transaction(s) run on the Neo4j database: stop the "
            "applications using it (`kgrag serve`...) and run `kgrag db compact` again; nothing "
            "was changed"
        )
    return int(str(rows[0]["id"]).rsplit("-", 1)[1])


def _export(store: GraphStore) -> _Export:
    """Every node and relationship of ``store`` read into an :class:`_Export`; refused when
    another transaction ran meanwhile."""
    first = _transaction(store)
    counted = _Counted(store)
    export = _Export()
    _read_graph(counted, export)
    last = _transaction(store)
    if last != first + counted.count + 1:
        raise StoreUnavailableError(
            f"{last - first - counted.count - 1} other transaction(s) ran on the Neo4j "
            "database while it was read: stop the applications using it (`kgrag serve`...) "
            "and run `kgrag db compact` again; nothing was changed"
        )
    return export


def _read_graph(store: Reader, export: _Export | None = None) -> tuple[_Digest, _Digest]:
    """The digests of every node and relationship (a relationship's ends as the digests of their
    records: ids change in a rebuild); with ``export``, their rows are kept there too."""
    # The pages order by id(), which Neo4j 5 calls deprecated (it is the only integer order of
    # nodes, and the statements are shared with FalkorDB): not one warning a page.
    notes = logging.getLogger("neo4j.notifications")
    level = notes.level
    notes.setLevel(logging.ERROR)
    try:
        return _read_pages(store, export)
    finally:
        notes.setLevel(level)


def _read_pages(store: Reader, export: _Export | None) -> tuple[_Digest, _Digest]:
    nodes, relationships = (
        (export.nodes, export.relationships) if export else (_Digest(), _Digest())
    )
    keys: dict[int, str] = {}
    for page in _node_pages(store):
        for row in page:
            record = _node_record(row)
            nodes.add(record)
            keys[int(row["id"])] = _Digest.key(record)
            if export is not None:
                _keep_node(export, row)
    for page in _relationship_pages(store, sorted(keys)):
        for row in page:
            if row["source"] not in keys or row["target"] not in keys:
                raise StoreUnavailableError(
                    "the graph changed while it was read; nothing was changed"
                )
            mapped = {**row, "source": keys[row["source"]], "target": keys[row["target"]]}
            relationships.add(_relationship_record(mapped))
            if export is not None:
                _keep_relationship(export, row)
    return nodes, relationships


def _kinds(row: Row, what: str) -> dict[str, str]:
    """Each property's neo4j-admin type (or EMPTY_LIST); StoreError for one the import cannot
    carry (a temporal value, a point, a key a CSV header cannot hold)."""
    out = {}
    for key, kind in row["types"]:
        name = str(kind).replace(" NOT NULL", "")
        if not _KEY.match(str(key)) or (name not in CSV_TYPES and name != EMPTY_LIST):
            raise StoreError(
                f"{what} has the property {key!r} of type {name}, which the rebuild cannot "
                "write for neo4j-admin import; nothing was changed"
            )
        out[str(key)] = name if name == EMPTY_LIST else CSV_TYPES[name]
    return out


def _group(groups: dict[str, list[_Group]], name: str, kinds: dict[str, str]) -> _Group:
    for group in groups.setdefault(name, []):
        if group.fits(kinds):
            group.types.update(kinds)
            return group
    group = _Group(types=dict(kinds))
    groups[name].append(group)
    return group


def _keep_node(export: _Export, row: Row) -> None:
    labels = sorted(row["labels"])
    if not labels:
        raise StoreError(f"node {row['id']} has no label, which the rebuild cannot import")
    kinds = _kinds(row, f"node {row['id']} ({':'.join(labels)})")
    props = {k: v for k, v in row["props"].items() if kinds[k] != EMPTY_LIST}
    empty: dict[str, list[Any]] = {k: [] for k, t in kinds.items() if t == EMPTY_LIST}
    if empty:
        export.empty_lists[str(row["id"])] = empty
        props[MARKER] = int(row["id"])
        kinds[MARKER] = "long"
    kinds = {k: t for k, t in kinds.items() if t != EMPTY_LIST}
    group = _group(export.node_groups, ":".join(labels), kinds)
    group.rows.append((str(row["id"]),))
    group.props.append(props)


def _keep_relationship(export: _Export, row: Row) -> None:
    what = f"a {row['type']} relationship"
    kinds = _kinds(row, what)
    if EMPTY_LIST in kinds.values():
        raise StoreError(f"{what} holds an empty list, which the rebuild cannot import")
    group = _group(export.relationship_groups, str(row["type"]), kinds)
    group.rows.append((str(row["source"]), str(row["target"])))
    group.props.append(dict(row["props"]))


def _write_files(export: _Export, directory: Path) -> ImportFiles:
    """The import's CSV files: one per label set (or relationship type) and set of property
    types, the node ids as ``:ID`` (not stored), the ends as ``:START_ID``/``:END_ID``."""
    directory.mkdir(parents=True)
    files = ImportFiles(directory=directory)
    for kind, groups, ids in (
        ("nodes", export.node_groups, [Column(":ID", "")]),
        (
            "relationships",
            export.relationship_groups,
            [Column(":START_ID", ""), Column(":END_ID", "")],
        ),
    ):
        for name, parts in sorted(groups.items()):
            for n, group in enumerate(parts):
                folder = directory / f"part{n}" if n else directory
                folder.mkdir(exist_ok=True)
                keys = sorted(group.types)
                columns = ids + [Column(k, group.types[k]) for k in keys]
                rows = (
                    (*head, *(props.get(k) for k in keys))
                    for head, props in zip(group.rows, group.props, strict=True)
                )
                _Writer(folder, files).write_csv(kind, name, columns, rows)
    return files


def _finish(store: GraphStore, export: _Export) -> None:
    """After the import: the empty lists set back, the schema made by the schema code."""
    if export.empty_lists:
        done = store.write("rebuild_fill_empty_lists", {"fixes": export.empty_lists})
        if not done or int(done[0]["filled"]) != len(export.empty_lists):
            raise StoreError("the rebuild could not set the empty lists back")
    _create_schema(store, store)
    store.await_schema([])  # the vector and full-text indexes populated


def _check(store: GraphStore, export: _Export, indexes: list[list[str]]) -> None:
    """StoreError unless the imported database reads back as the export did, with the same
    index and constraint lists."""
    nodes, relationships = _read_graph(store)
    problems = []
    if nodes != export.nodes:
        problems.append(f"nodes ({export.nodes.count} read, {nodes.count} imported)")
    if relationships != export.relationships:
        problems.append(
            f"relationships ({export.relationships.count} read, {relationships.count} imported)"
        )
    for name, before in zip(
        ("schema/index_list", "schema/unique_constraints"), indexes, strict=True
    ):
        if _rows(store, name) != before:
            problems.append(f"{name}: {before} != {_rows(store, name)}")
    if problems:
        raise StoreError(
            "the imported database differs from the one read; the dump was loaded back: "
            + "; ".join(problems)
        )
