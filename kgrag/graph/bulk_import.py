"""The bulk path for a first load of a large corpus into Neo4j: ``neo4j-admin database import``.

:func:`write_import_files` turns the job's :class:`~kgrag.ingest.records.DocumentBundle` objects
into the CSV files of ``neo4j-admin database import full``: the same nodes, properties and
relationships :class:`~kgrag.ingest.writer.GraphWriter` creates with its MERGEs (documents with
their ACLs, chunks with vectors, entities with their best display name, MENTIONS counts, NEXT
chains and RELATED weights computed over the whole corpus). :func:`bulk_load` checks that the
target database is empty (the import overwrites it: a non-empty one is refused), stops the
server, runs the import, starts the server and applies kgrag's schema migrations (constraints,
vector and full-text indexes), which build the indexes over the imported data.

Every string is written quoted (a doubled ``"`` inside), a missing value as an empty unquoted
field (no property, as ``SET p = null``), and arrays with the ASCII unit separator between items,
so quotes, commas, newlines and text that looks like a CSV header round-trip (an empty array is
read as no property: one statement after the import gives documents their empty lists back).
Only text documents go this way: a job with images, tables or timed segments (their CLIP
links are computed by reading the graph between writes) is refused, to be written by the
transactional path.
"""

from __future__ import annotations

import logging
import math
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path

from kgrag.errors import StoreError
from kgrag.graph.dump import BOOKKEEPING_LABELS
from kgrag.graph.spaces import EmbeddingSpace
from kgrag.graph.store import GraphStore
from kgrag.ingest.records import DocumentBundle
from kgrag.ingest.writer import TRANSACTION_DOCUMENTS, _entity_row, related_increment

log = logging.getLogger(__name__)

#: Separates the items of an array field (``acl``, ``tags``, ``embedding``): a control character
#: no ACL entry or tag may contain.
ARRAY_DELIMITER = "\x1f"
#: The Neo4j database the import writes (Community Edition has one user database).
DATABASE = "neo4j"


class BulkImportError(StoreError):
    """The bulk import was refused (target not empty, unsupported input) or neo4j-admin failed."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # neo4j-admin header type: "" (string), long, double, string[], double[]


@dataclass(frozen=True)
class CsvFile:
    """One file of the import: a node label or a relationship type, its header and path."""

    kind: str  # "nodes" | "relationships"
    label: str
    path: Path


@dataclass
class ImportFiles:
    directory: Path
    files: list[CsvFile] = field(default_factory=list)
    documents: int = 0
    chunks: int = 0

    def admin_arguments(self, database: str = DATABASE) -> list[str]:
        """The ``neo4j-admin database import full`` arguments for these files."""
        args = [
            "database",
            "import",
            "full",
            database,
            "--overwrite-destination=true",
            "--multiline-fields=true",
            f"--array-delimiter={ARRAY_DELIMITER}",
            "--delimiter=,",
            '--quote="',
            "--skip-bad-relationships=false",
            "--skip-duplicate-nodes=false",
            f"--report-file={self.directory / 'import.report'}",
        ]
        args += [f"--{f.kind}={f.label}={f.path}" for f in self.files]
        return args


_DOCUMENT = [
    Column("id:ID(Document)", ""),
    Column("uri", ""),
    Column("sha256", ""),
    Column("modality", ""),
    Column("mime", ""),
    Column("title", ""),
    Column("bytes", "long"),
    Column("acl", "string[]"),
    Column("tags", "string[]"),
    Column("ingested_at", ""),
    Column("language", ""),
    Column("summary", ""),
    Column("status", ""),
    Column("chunk_count", "long"),
    Column("image_count", "long"),
]
_CHUNK = [
    Column("id:ID(Chunk)", ""),
    Column("text", ""),
    Column("position", "long"),
    Column("page", "long"),
    Column("start_s", "double"),
    Column("end_s", "double"),
    Column("document_id", ""),
    Column("embedding", "double[]"),
    Column("related_counted", "boolean"),
]
_ENTITY = [
    Column("id:ID(Entity)", ""),
    Column("type", ""),
    Column("name", ""),
    Column("name_rank", "long"),
]


def _header(columns: Sequence[Column]) -> str:
    return ",".join(c.name if not c.type else f"{c.name}:{c.type}" for c in columns)


def _field(value: object, kind: str, where: str) -> str:
    """One CSV field: None empty and unquoted (no property), strings quoted."""
    if value is None:
        return ""
    if kind.endswith("[]"):
        items = list(value)  # type: ignore[call-overload]
        if kind == "double[]":
            text = ARRAY_DELIMITER.join(repr(float(v)) for v in items)
        else:
            for item in items:
                if ARRAY_DELIMITER in str(item) or str(item) == "":
                    raise BulkImportError(
                        f"{where}: an array item is empty or contains the control character "
                        "U+001F, which neo4j-admin cannot read back"
                    )
            text = ARRAY_DELIMITER.join(str(v) for v in items)
        return '"' + text.replace('"', '""') + '"'
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "long":
        return str(int(value))  # type: ignore[call-overload]
    if kind == "double":
        f = float(value)  # type: ignore[arg-type]
        if not math.isfinite(f):
            raise BulkImportError(f"{where}: {f} cannot be imported")
        return repr(f)
    return '"' + str(value).replace('"', '""') + '"'


class _Writer:
    def __init__(self, directory: Path, out: ImportFiles) -> None:
        self.directory = directory
        self.out = out

    def write_csv(
        self,
        kind: str,
        label: str,
        columns: Sequence[Column],
        rows: Iterable[Sequence[object]],
    ) -> int:
        path = self.directory / f"{kind}_{label}.csv"
        n = 0
        with path.open("w", encoding="utf-8", newline="") as f:
            f.write(_header(columns) + "\n")
            for row in rows:
                where = f"{path.name} row {n + 1}"
                f.write(
                    ",".join(_field(v, c.type, where) for v, c in zip(row, columns, strict=True))
                    + "\n"
                )
                n += 1
        self.out.files.append(CsvFile(kind, label, path))
        return n


def _check_supported(bundles: Sequence[DocumentBundle]) -> None:
    ids: set[str] = set()
    for b in bundles:
        if b.images or b.tables or b.segments:
            raise BulkImportError(
                f"{b.uri}: the bulk path writes text documents only (this one has images, "
                "tables or timed segments); ingest it with the transactional writer"
            )
        if b.id in ids:
            raise BulkImportError(f"{b.uri}: document id {b.id} appears twice in the job")
        ids.add(b.id)


def _entities(bundles: Sequence[DocumentBundle]) -> dict[str, dict[str, object]]:
    """The entity rows as the transactional writer leaves them: write groups of
    :data:`TRANSACTION_DOCUMENTS` documents, the last record of an entity in a group offered,
    the type of the first group that created it, the best display name of all groups."""
    out: dict[str, dict[str, object]] = {}
    for start in range(0, len(bundles), TRANSACTION_DOCUMENTS):
        group = bundles[start : start + TRANSACTION_DOCUMENTS]
        offered = {e.id: e for b in group for e in b.extraction.entities}
        for key in sorted(offered):
            row = _entity_row(offered[key])
            have = out.get(key)
            if have is None:
                out[key] = row
                continue
            better = row["name_rank"] > have["name_rank"] or (  # type: ignore[operator]
                row["name_rank"] == have["name_rank"] and row["name"] < have["name"]  # type: ignore[operator]
            )
            if better:
                have["name"], have["name_rank"] = row["name"], row["name_rank"]
    return out


def write_import_files(
    bundles: Sequence[DocumentBundle], directory: Path, *, now: str | None = None
) -> ImportFiles:
    """Write the job's graph as ``neo4j-admin database import`` CSV files under ``directory``."""
    _check_supported(bundles)
    directory.mkdir(parents=True, exist_ok=True)
    now = now or datetime.now(UTC).isoformat()
    out = ImportFiles(directory=directory, documents=len(bundles))
    w = _Writer(directory, out)
    w.write_csv(
        "nodes",
        "Document",
        _DOCUMENT,
        (
            (
                b.id,
                b.uri,
                b.sha256,
                b.modality,
                b.mime,
                b.title,
                b.bytes,
                b.acl,
                b.tags,
                now,
                b.language,
                b.summary,
                "complete",
                len(b.chunks),
                0,
            )
            for b in bundles
        ),
    )
    # chunks the transactional writer marks as counted in RELATED (they mention 2+ entities)
    counted = {c for doc in related_increment(bundles).docs for c in doc["chunks"]}
    out.chunks = w.write_csv(
        "nodes",
        "Chunk",
        _CHUNK,
        (
            (
                c.id,
                c.text,
                c.position,
                c.page,
                c.start_s,
                c.end_s,
                b.id,
                c.embedding,
                True if c.id in counted else None,
            )
            for b in bundles
            for c in b.chunks
        ),
    )
    entities = _entities(bundles)
    w.write_csv(
        "nodes",
        "Entity",
        _ENTITY,
        ((k, r["type"], r["name"], r["name_rank"]) for k, r in sorted(entities.items())),
    )
    w.write_csv(
        "relationships",
        "PART_OF",
        [Column(":START_ID(Chunk)", ""), Column(":END_ID(Document)", "")],
        ((c.id, b.id) for b in bundles for c in b.chunks),
    )
    w.write_csv(
        "relationships",
        "NEXT",
        [Column(":START_ID(Chunk)", ""), Column(":END_ID(Chunk)", "")],
        (
            (x.id, y.id)
            for b in bundles
            for x, y in pairwise(sorted(b.chunks, key=lambda c: c.position))
        ),
    )
    # MERGE keeps one MENTIONS per (chunk, entity), its count the last written
    mentions: dict[tuple[str, str], int] = {}
    for b in bundles:
        for m in b.extraction.mentions:
            mentions[(m.chunk_id, m.entity_id)] = m.count
    w.write_csv(
        "relationships",
        "MENTIONS",
        [Column(":START_ID(Chunk)", ""), Column(":END_ID(Entity)", ""), Column("count", "long")],
        ((c, e, n) for (c, e), n in sorted(mentions.items())),
    )
    # RELATED for each related pair: the number of chunks (of the whole corpus) mentioning both
    chunks_of: dict[str, set[str]] = {}
    for c, e in mentions:
        chunks_of.setdefault(e, set()).add(c)
    pairs = {
        (min(r.source_id, r.target_id), max(r.source_id, r.target_id))
        for b in bundles
        for r in b.extraction.relations
        if r.source_id != r.target_id
    }
    w.write_csv(
        "relationships",
        "RELATED",
        [Column(":START_ID(Entity)", ""), Column(":END_ID(Entity)", ""), Column("weight", "long")],
        ((a, z, len(chunks_of.get(a, set()) & chunks_of.get(z, set()))) for a, z in sorted(pairs)),
    )
    return out


@dataclass(frozen=True)
class Neo4jServer:
    """How to stop, start and administer the target server: commands run as given. The
    defaults drive a server of ``scripts/neo4j.sh`` (``admin`` runs its ``neo4j-admin``), with
    its settings (NEO4J_DIR, ports) taken from the environment."""

    stop: tuple[str, ...]
    start: tuple[str, ...]
    admin: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    """Environment variables added for the commands (e.g. NEO4J_DIR and the ports)."""

    @classmethod
    def dev_script(cls, script: Path, env: dict[str, str] | None = None) -> Neo4jServer:
        s = str(script)
        return cls(
            ("bash", s, "stop"),
            ("bash", s, "start"),
            ("bash", s, "admin"),
            tuple(sorted((env or {}).items())),
        )

    def run(self, command: Sequence[str], what: str) -> str:
        done = subprocess.run(
            list(command),
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **dict(self.env)},
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BulkImportError(f"{what} failed (exit {done.returncode}):\n{tail}")
        return done.stdout


@dataclass
class BulkLoadResult:
    documents: int
    chunks: int
    csv_seconds: float
    import_seconds: float
    restart_seconds: float
    migrate_seconds: float
    total_seconds: float
    migrations: list[str]


def ensure_empty(store: GraphStore) -> None:
    """Refuse a target that holds any node but bookkeeping (applied migrations, embedding
    spaces, job leases, which the load writes anew): the import replaces the whole database."""
    rows = store.read_freeform(
        "MATCH (n) WHERE none(l IN labels(n) WHERE l IN $skip) RETURN count(n) AS n",
        {"skip": sorted(BOOKKEEPING_LABELS)},
    )
    if rows and rows[0]["n"]:
        raise BulkImportError(
            f"the target Neo4j database holds {rows[0]['n']} nodes: neo4j-admin database "
            "import would overwrite them. Bulk import is for a first load into an empty "
            "database; use `kgrag ingest` without --bulk-import to add to this one"
        )


def bulk_load(
    bundles: Sequence[DocumentBundle],
    directory: Path,
    server: Neo4jServer,
    store: GraphStore,
    reopen: Callable[[], GraphStore],
    spaces: Sequence[EmbeddingSpace] = (),
) -> BulkLoadResult:
    """Import ``bundles`` into the empty Neo4j database behind ``store``: write the CSV files
    to ``directory``, stop the server, import, start it, and run the schema migrations on the
    store ``reopen()`` returns, registering the job's embedding ``spaces`` (their vector indexes);
    that store is closed before returning, and so is ``store``."""
    from kgrag.graph.migrations import migrate
    from kgrag.graph.spaces import ensure_space

    t0 = time.perf_counter()
    try:
        ensure_empty(store)
        files = write_import_files(bundles, directory)
    finally:
        store.close()
    t1 = time.perf_counter()
    server.run(server.stop, "stopping Neo4j")
    server.run([*server.admin, *files.admin_arguments()], "neo4j-admin database import")
    t2 = time.perf_counter()
    server.run(server.start, "starting Neo4j")
    t3 = time.perf_counter()
    fresh = reopen()
    try:
        fresh.write("documents_fill_empty_lists")
        applied = migrate(fresh)
        for space in spaces:
            ensure_space(fresh, space)
    finally:
        fresh.close()
    t4 = time.perf_counter()
    log.info("bulk import of %d documents in %.1f s", len(bundles), t4 - t0)
    return BulkLoadResult(
        documents=files.documents,
        chunks=files.chunks,
        csv_seconds=t1 - t0,
        import_seconds=t2 - t1,
        restart_seconds=t3 - t2,
        migrate_seconds=t4 - t3,
        total_seconds=t4 - t0,
        migrations=applied,
    )


def dev_script() -> Path:
    """scripts/neo4j.sh of this checkout (or ``KGRAG_NEO4J_SCRIPT``)."""
    env = os.environ.get("KGRAG_NEO4J_SCRIPT")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "scripts" / "neo4j.sh"
