"""Giving back the space of deleted nodes and relationships (``kgrag db compact``).

A prune of traces removes nodes and relationships, but neither engine shrinks by itself:

* **Embedded FalkorDB** keeps the ids of deleted nodes and relationships for reuse and writes
  their list into every snapshot (about 5 bytes an id); ``GRAPH.COPY`` and a backup keep it too.
  :func:`rebuild` builds the graph anew, with new ids: it reads every node and relationship a
  page at a time and writes them into a new graph key, whose indexes and constraints are made by
  the project's own schema code (the applied migrations' operations and the vector indexes of the
  registered embedding spaces); it checks that the new graph holds the same nodes, labels,
  properties (each of the same type: vectors stay float32 vectors), relationships and indexes;
  then it swaps the two keys atomically (``WATCH`` of the graph key, ``MULTI``/``RENAME``/
  ``EXEC``: a write to the old graph meanwhile cancels the swap) and rewrites the append-only
  file. It runs only while no other store uses the embedded server (``kgrag serve`` stopped):
  the rebuilt graph renumbers labels and property keys for clients that cache them, and a
  server writing traces every second would cancel the swap each time. Anything wrong, and the
  new key is dropped, the graph untouched.
* **Neo4j** reuses the records of deleted nodes and relationships (its store files keep their
  size), ``neo4j-admin database dump``/``load`` give back the same bytes and a compact copy
  (``neo4j-admin database copy``) is Enterprise-only. :func:`rebuild` writes the database anew
  offline (:mod:`kgrag.graph.neo4j_rebuild`: export, dump, ``neo4j-admin database import``,
  restart, schema, check; the dump loaded back on any failure), on a server kgrag can stop and
  start (``scripts/neo4j.sh``); it refuses any other, changing nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from redis.exceptions import WatchError

from kgrag.core import Frozen
from kgrag.errors import ConfigError, StoreError, StoreUnavailableError
from kgrag.graph.falkordb_store import FalkorDBStore
from kgrag.graph.schema import MIGRATIONS, VECTOR_INDEXES, UniqueProperty
from kgrag.graph.spaces import registered
from kgrag.graph.store import GraphStore, Params, Row

log = logging.getLogger(__name__)

#: Nodes read and written per statement (a page of 384-float vectors is a few MB of text).
NODE_PAGE = 500
#: Relationships written per statement.
RELATIONSHIP_PAGE = 2000
#: FalkorDB's name of a vector's type (``typeOf``).
VECTOR_TYPE = "Vectorf32"
#: The key the new graph is built under, beside the graph's own.
REBUILD_SUFFIX = ":rebuild"
_CHANGED = (
    "the graph was written to while it was rebuilt (another thread of this process?); nothing "
    "was changed: run `kgrag db compact` again"
)


class RebuildReport(Frozen):
    """What ``kgrag db compact`` did."""

    engine: str
    rebuilt: bool
    """Whether the graph was rebuilt with new ids (embedded store only)."""
    nodes: int = 0
    relationships: int = 0
    seconds: float = 0.0
    note: str = ""


def rebuild(
    store: GraphStore,
    *,
    reopen: Callable[[], GraphStore] | None = None,
    scratch: Path | None = None,
) -> RebuildReport:
    """Give back the space of what was deleted (see the module doc). The embedded store:
    refused (StoreUnavailableError) while another store uses it. Neo4j: ``reopen()`` opens the
    store again after the restart, ``scratch`` holds the export and the dump; ``store`` is
    closed; ConfigError when kgrag cannot stop and start the server."""
    if not isinstance(store, FalkorDBStore):
        from kgrag.graph.neo4j_rebuild import rebuild_neo4j

        if reopen is None or scratch is None:
            raise ConfigError(
                "rebuilding Neo4j needs a way to reopen the store and a scratch folder"
            )
        return rebuild_neo4j(store, reopen, scratch)
    started = time.perf_counter()
    with store.alone():
        nodes, relationships = _rebuild_falkordb(store)
        store.compact()  # the append-only file: its base becomes the new graph
    seconds = round(time.perf_counter() - started, 2)
    log.info(
        "rebuilt %s: %d nodes, %d relationships in %.2f s", store.uri, nodes, relationships, seconds
    )
    return RebuildReport(
        engine=store.dialect,
        rebuilt=True,
        nodes=nodes,
        relationships=relationships,
        seconds=seconds,
        note="rebuilt with new ids; the log rewritten",
    )


class Reader(Protocol):
    """What the rebuild's reads need of a store (a :class:`GraphStore`, or a wrapper counting
    its reads)."""

    def read(self, name: str, params: Params | None = None) -> list[Row]: ...


class _Digest:
    """An order-free digest of a multiset of records (the sum of their SHA-256 values)."""

    def __init__(self) -> None:
        self.value = 0
        self.count = 0

    @staticmethod
    def key(record: object) -> str:
        """The SHA-256 of a record, in hex."""
        text = json.dumps(record, sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest()

    def add(self, record: object) -> None:
        self.value = (self.value + int(self.key(record), 16)) % (1 << 256)
        self.count += 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Digest) and (self.value, self.count) == (
            other.value,
            other.count,
        )

    __hash__ = None  # type: ignore[assignment]


def _rebuild_falkordb(store: FalkorDBStore) -> tuple[int, int]:
    client = store._connection.connection
    key = store._graph.name
    temporary = key + REBUILD_SUFFIX
    client.delete(temporary)  # what an interrupted rebuild left
    with client.pipeline() as pipe:
        pipe.watch(key)  # from here on, a write to the graph cancels the swap
        if not client.exists(key):
            return 0, 0
        new = FalkorDBStore(
            f"{store.uri}{REBUILD_SUFFIX}",
            store._connection.select_graph(temporary),
            store._connection,
        )
        swapped = False
        try:
            _create_schema(store, new)
            old_nodes, old_relationships = _copy(store, new)
            _check_same(store, new, old_nodes, old_relationships)
            pipe.multi()
            pipe.rename(temporary, key)
            try:
                pipe.execute()
            except WatchError as e:
                raise StoreUnavailableError(_CHANGED) from e
            except Exception as e:
                raise store._wrap(e, "RENAME") from e
            swapped = True
        finally:
            if not swapped:
                client.delete(temporary)
            client.delete(f"telemetry{{{temporary}}}")
    store._graph.schema.clear()  # labels and property keys may have new ids
    return old_nodes.count, old_relationships.count


def _create_schema(old: GraphStore, new: GraphStore) -> None:
    """The indexes, constraints and relationship types of the applied migrations, and the vector
    indexes of the registered embedding spaces, made by the schema code (the migration markers
    themselves are nodes, copied with the rest)."""
    applied = {str(r["name"]) for r in old.read("migration_list") if r["applied_at"] is not None}
    ops = [op for m in MIGRATIONS if m.name in applied for op in m.schema_ops]
    for op in ops:
        new.apply_schema_op(op)
    new.await_schema([op for op in ops if isinstance(op, UniqueProperty)])
    new.declare_relationship_types(
        [t for m in MIGRATIONS if m.name in applied for t in m.relationship_types]
    )
    for space in registered(old).values():
        for index in VECTOR_INDEXES.values():
            if index.space == space.name:
                new.create_vector_index(index, space.dimensions)


def _copy(old: FalkorDBStore, new: FalkorDBStore) -> tuple[_Digest, _Digest]:
    """Every node, then every relationship, of ``old`` written into ``new``; the digests of
    what was read (relationship ends as the new ids)."""
    nodes = _Digest()
    ids: dict[int, int] = {}
    for page in _node_pages(old):
        groups: dict[tuple[tuple[str, ...], str | None], list[tuple[int, dict[str, Any]]]] = (
            defaultdict(list)
        )
        for row in page:
            nodes.add(_node_record(row))
            labels, vector, props = _split(row)
            values = dict(props)
            entry: dict[str, Any] = {"props": values}
            if vector is not None:
                entry["vector"] = values.pop(vector)
            groups[(labels, vector)].append((int(row["id"]), entry))
        for (labels, vector), members in groups.items():
            label = labels[0]
            if vector is None:
                text = new.schema_statement("schema/rebuild_nodes_create", label=label)
            else:
                text = new.schema_statement(
                    "schema/rebuild_nodes_create_vector", label=label, property=vector
                )
            created = new._execute(text, {"rows": [m[1] for m in members]}, read_only=False)
            if len(created) != len(members):
                raise StoreError(f"the rebuild created {len(created)} of {len(members)} nodes")
            for (old_id, _), made in zip(members, created, strict=True):
                ids[old_id] = int(made["id"])
            for extra in labels[1:]:
                text = new.schema_statement("schema/rebuild_nodes_add_label", label=extra)
                made_ids = [int(m["id"]) for m in created]
                done = new._execute(text, {"ids": made_ids}, read_only=False)
                if not done or int(done[0]["labelled"]) != len(made_ids):
                    raise StoreError(f"the rebuild could not add label {extra} to new nodes")
    relationships = _Digest()
    for page in _relationship_pages(old, sorted(ids)):
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in page:
            if row["source"] not in ids or row["target"] not in ids:
                raise StoreUnavailableError(_CHANGED)
            mapped = {**row, "source": ids[row["source"]], "target": ids[row["target"]]}
            relationships.add(_relationship_record(mapped))
            if any(kind == VECTOR_TYPE for _, kind in row["types"]):
                raise StoreError(
                    f"a {row['type']} relationship holds a vector, which the rebuild does not "
                    "copy; nothing was changed"
                )
            by_type[str(row["type"])].append(
                {"source": mapped["source"], "target": mapped["target"], "props": row["props"]}
            )
        for rel_type, rows in by_type.items():
            text = new.schema_statement("schema/rebuild_relationships_create", type=rel_type)
            for start in range(0, len(rows), RELATIONSHIP_PAGE):
                part = rows[start : start + RELATIONSHIP_PAGE]
                done = new._execute(text, {"rows": part}, read_only=False)
                if not done or int(done[0]["created"]) != len(part):
                    raise StoreError(f"the rebuild could not create {rel_type} relationships")
    return nodes, relationships


def _check_same(
    old: FalkorDBStore, new: FalkorDBStore, nodes: _Digest, relationships: _Digest
) -> None:
    """Refuse (StoreError, nothing swapped) unless ``new`` holds what was read from ``old``,
    read back the same way, and has the same indexes and constraints."""
    new_nodes, new_relationships = _Digest(), _Digest()
    ids: list[int] = []
    for page in _node_pages(new):
        for row in page:
            new_nodes.add(_node_record(row))
            ids.append(int(row["id"]))
    for page in _relationship_pages(new, ids):
        for row in page:
            new_relationships.add(_relationship_record(row))
    problems = []
    if new_nodes != nodes:
        problems.append(f"nodes ({nodes.count} read, {new_nodes.count} in the new graph)")
    if new_relationships != relationships:
        problems.append(
            f"relationships ({relationships.count} read, {new_relationships.count} in the new "
            "graph)"
        )
    for what in ("schema/index_list", "schema/unique_constraints"):
        if _rows(old, what) != _rows(new, what):
            problems.append(f"{what}: {_rows(old, what)} != {_rows(new, what)}")
    if problems:
        raise StoreError(
            "the rebuilt graph differs from the graph; nothing was changed: " + "; ".join(problems)
        )


def _rows(store: Reader, name: str) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=repr) for r in store.read(name))


def _node_pages(store: Reader) -> Iterator[list[Row]]:
    after = -1
    while page := store.read("rebuild_nodes_page", {"after": after, "page": NODE_PAGE}):
        yield page
        after = int(page[-1]["id"])


def _relationship_pages(store: Reader, node_ids: Sequence[int]) -> Iterator[list[Row]]:
    for start in range(0, len(node_ids), NODE_PAGE):
        part = node_ids[start : start + NODE_PAGE]
        yield store.read("rebuild_relationships_page", {"from": part[0], "to": part[-1]})


def _split(row: Mapping[str, Any]) -> tuple[tuple[str, ...], str | None, dict[str, Any]]:
    """A node's labels, its vector property (if any) and its properties; StoreError for a node
    the rebuild cannot copy as it is (no label, or several vectors)."""
    labels = tuple(sorted(row["labels"]))
    vectors = [k for k, kind in row["types"] if kind == VECTOR_TYPE]
    if not labels or len(vectors) > 1:
        raise StoreError(
            f"node {row['id']} has labels {list(labels)} and vectors {vectors}: the rebuild "
            "copies nodes of at least one label and at most one vector; nothing was changed"
        )
    return labels, (vectors[0] if vectors else None), dict(row["props"])


def _node_record(row: Mapping[str, Any]) -> list[Any]:
    return [sorted(row["labels"]), row["props"], sorted(map(list, row["types"]))]


def _relationship_record(row: Mapping[str, Any]) -> list[Any]:
    return [
        row["type"],
        row["source"],
        row["target"],
        row["props"],
        sorted(map(list, row["types"])),
    ]
