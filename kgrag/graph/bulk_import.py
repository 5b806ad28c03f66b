"""The bulk path for a first load of a large corpus into Neo4j: ``neo4j-admin database import``.

:func:`write_import_files` turns the job's :class:`~kgrag.ingest.records.DocumentBundle` objects
into the CSV files of ``neo4j-admin database import full``: the same nodes, properties and
relationships :class:`~kgrag.ingest.writer.GraphWriter` creates with its MERGEs (documents with
their ACLs, chunks with vectors, entities with their best display name, MENTIONS counts, NEXT
chains and RELATED weights computed over the whole corpus), written by forked processes side by
side (the per-document files in one shard per core, the entity and RELATED files whole).
:func:`bulk_load` checks that the target database is empty (the import overwrites it: a
non-empty one is refused), stops the server while the files are written, runs the import,
starts the server, creates the job's vector indexes and applies kgrag's schema migrations
(constraints, full-text indexes), all populating over the imported data side by side, and
returns once every index is ONLINE.

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
import multiprocessing
import os
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from operator import attrgetter
from pathlib import Path

from kgrag.errors import StoreError
from kgrag.graph.dump import BOOKKEEPING_LABELS
from kgrag.graph.spaces import EmbeddingSpace
from kgrag.graph.store import GraphStore
from kgrag.ingest.records import DocumentBundle
from kgrag.ingest.writer import TRANSACTION_DOCUMENTS, _entity_row
from kgrag.text.search_properties import chunk_search_properties

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

    @property
    def key(self) -> str:
        """The property the column holds: its name before any ``:`` (``id`` of
        ``id:ID(Chunk)``); rows are written by it (:func:`csv_row`)."""
        return self.name.split(":", 1)[0]


def csv_row(columns: Sequence[Column], fields: Mapping[str, str]) -> str:
    """One row of ``columns``' file from fields already written as CSV (:func:`_field`,
    :func:`_quoted`, or a caller's faster formatting), by column key, whatever the columns'
    order; a column not given is empty (no property). A key that names no column raises: a
    renamed or removed column is not dropped silently."""
    keys = [c.key for c in columns]
    unknown = fields.keys() - set(keys)
    if unknown:
        raise ValueError(f"no column {', '.join(sorted(unknown))} among {', '.join(keys)}")
    return ",".join(fields.get(key, "") for key in keys)


def csv_values(columns: Sequence[Column], values: Mapping[str, object], where: str) -> str:
    """:func:`csv_row` of ``values``, each written as its column's type (``where`` names the
    document in an error)."""
    types = {c.key: c.type for c in columns}
    return csv_row(columns, {k: _field(v, types.get(k, ""), where) for k, v in values.items()})


@dataclass(frozen=True)
class CsvFile:
    """One file of the import: a node label or a relationship type, its header and path."""

    kind: str  # "nodes" | "relationships"
    label: str
    path: Path
    parts: tuple[Path, ...] = ()
    """Further files of the same label or type without a header line (the shards written in
    parallel): neo4j-admin reads ``path`` and then these as one file."""

    def argument(self) -> str:
        return f"--{self.kind}={self.label}=" + ",".join(str(p) for p in (self.path, *self.parts))


@dataclass
class ImportFiles:
    directory: Path
    files: list[CsvFile] = field(default_factory=list)
    documents: int = 0
    chunks: int = 0
    multiline: list[Path] | None = None
    """The files that may hold a line break inside a field (None: any file may)."""

    def admin_arguments(self, database: str = DATABASE) -> list[str]:
        """The ``neo4j-admin database import full`` arguments for these files."""
        args = [
            "database",
            "import",
            "full",
            database,
            "--overwrite-destination=true",
            f"--array-delimiter={ARRAY_DELIMITER}",
            "--delimiter=,",
            '--quote="',
            "--skip-bad-relationships=false",
            "--skip-duplicate-nodes=false",
            f"--report-file={self.directory / 'import.report'}",
            f"--threads={available_cpus()}",
        ]
        memory = import_memory()
        if memory is not None:
            args.append(f"--max-off-heap-memory={memory}")
        # Files without a line break inside a field are cut into pieces read in parallel. The
        # list form (--multiline-fields-format=v2 with the files) failed on 2,000 documents'
        # chunk files in 5.26 ("found CR outside a text cell"): a break anywhere makes every
        # file read as multi-line.
        multiline = self.multiline is None or bool(self.multiline)
        args.append(f"--multiline-fields={'true' if multiline else 'false'}")
        args += [f.argument() for f in self.files]
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
    Column("duration_s", "double"),
    Column("file_modified_at", ""),
    Column("content_created_at", ""),
    Column("content_modified_at", ""),
    Column("authors", "string[]"),
    Column("status", ""),
    Column("chunk_count", "long"),
    Column("image_count", "long"),
]
_CHUNK = [
    Column("id:ID(Chunk)", ""),
    Column("text", ""),
    Column("text_folded", ""),
    Column("section", "string[]"),
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
    Column("name_folded", ""),
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
                for prop in ("name", "name_folded", "name_rank"):
                    have[prop] = row[prop]
    return out


def available_cpus() -> int:
    """The cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover (not Linux)
        return max(1, os.cpu_count() or 1)


def import_memory(meminfo: Path = Path("/proc/meminfo")) -> str | None:
    """neo4j-admin's off-heap memory: half of what the kernel says is available (page cache
    included, which neo4j-admin's default, 90% of *free* memory, leaves out: on a machine whose
    memory is mostly cache that default was 757 MiB of 24 GB), at least 256 MiB; None when
    unknown (neo4j-admin's default applies)."""
    try:
        for line in meminfo.read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                kib = int(line.split()[1])
                return f"{max(256, kib // 2048)}m"
    except (OSError, ValueError, IndexError):
        return None
    return None


def _breaks_line(text: str) -> bool:
    return "\n" in text or "\r" in text


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _vector(values: Sequence[float]) -> str:
    """A ``double[]`` field: each float's shortest round-trip form (``repr``), as :func:`_field`
    writes them, but formatted by ``repr`` of the whole tuple in C rather than float by float."""
    if len(values) == 1:
        return f'"{float(values[0])!r}"'
    floats = values if type(values) is tuple else tuple(float(v) for v in values)
    return '"' + repr(floats)[1:-1].replace(", ", ARRAY_DELIMITER) + '"'


#: The files every document contributes rows to on its own: written in shards, in parallel.
_PER_DOCUMENT: tuple[tuple[str, str, tuple[Column, ...]], ...] = (
    ("nodes", "Document", tuple(_DOCUMENT)),
    ("nodes", "Chunk", tuple(_CHUNK)),
    ("relationships", "PART_OF", (Column(":START_ID(Chunk)", ""), Column(":END_ID(Document)", ""))),
    ("relationships", "NEXT", (Column(":START_ID(Chunk)", ""), Column(":END_ID(Chunk)", ""))),
    (
        "relationships",
        "MENTIONS",
        (Column(":START_ID(Chunk)", ""), Column(":END_ID(Entity)", ""), Column("count", "long")),
    ),
)

#: The bundles the forked shard writers read (set before the fork, so nothing is pickled).
_SHARD_INPUT: Sequence[DocumentBundle] = ()


@dataclass(frozen=True)
class _Shard:
    """What one shard writer wrote: its files by label or type, its chunk count, and which of
    its files hold a field with a line break (neo4j-admin reads those as multi-line)."""

    paths: dict[str, Path]
    chunks: int
    multiline: frozenset[str]


def _write_shard(directory: Path, index: int, start: int, stop: int, now: str) -> _Shard:
    """The per-document files of documents ``start:stop`` of :data:`_SHARD_INPUT`, without
    header lines: ``<kind>_<label>.<index>.csv``."""
    bundles = _SHARD_INPUT[start:stop]
    paths = {
        label: directory / f"{kind}_{label}.{index:03d}.csv" for kind, label, _ in _PER_DOCUMENT
    }
    files = {label: path.open("w", encoding="utf-8", newline="") for label, path in paths.items()}
    multiline: set[str] = set()
    chunks = 0
    try:
        doc_out, chunk_out = files["Document"], files["Chunk"]
        part_of, next_out, mentions_out = files["PART_OF"], files["NEXT"], files["MENTIONS"]
        for b in bundles:
            where = f"{b.uri} (document {b.id})"
            doc_row = csv_values(
                _DOCUMENT,
                {
                    "id": b.id, "uri": b.uri, "sha256": b.sha256, "modality": b.modality,
                    "mime": b.mime, "title": b.title, "bytes": b.bytes, "acl": b.acl,
                    "tags": b.tags, "ingested_at": now, "language": b.language,
                    "summary": b.summary, "duration_s": b.duration_s,
                    **b.dates.model_dump(), "status": "complete",
                    "chunk_count": len(b.chunks), "image_count": 0,
                },
                where,
            )  # fmt: skip
            if _breaks_line(doc_row):
                multiline.add("Document")
            doc_out.write(doc_row + "\n")
            # chunks the transactional writer marks as counted in RELATED (2+ entities mentioned)
            mentioned: dict[str, set[str]] = {}
            for m in b.extraction.mentions:
                mentioned.setdefault(m.chunk_id, set()).add(m.entity_id)
            doc_id = _quoted(b.id)
            for c in b.chunks:
                cid = _quoted(c.id)
                row = csv_row(
                    _CHUNK,
                    {
                        "id": cid,
                        "text": _quoted(c.text),
                        "text_folded": _field(
                            chunk_search_properties(c.text).text_folded, "", where
                        ),
                        "section": _field(c.section or None, "string[]", where),
                        "position": str(int(c.position)),
                        "page": _field(c.page, "long", where),
                        "start_s": _field(c.start_s, "double", where),
                        "end_s": _field(c.end_s, "double", where),
                        "document_id": doc_id,
                        "embedding": _vector(c.embedding),
                        "related_counted": "true" if len(mentioned.get(c.id, ())) > 1 else "",
                    },
                )
                if _breaks_line(row):
                    multiline.add("Chunk")
                chunk_out.write(row + "\n")
                part_of.write(f"{cid},{doc_id}\n")
            if _breaks_line(doc_id):
                multiline.update(("PART_OF", "NEXT", "MENTIONS"))
            ordered = sorted(b.chunks, key=lambda c: c.position)
            for x, y in pairwise(ordered):
                next_out.write(f"{_quoted(x.id)},{_quoted(y.id)}\n")
            # one MENTIONS per (chunk, entity): a bundle holds each pair once (ExtractionResult)
            for m in b.extraction.mentions:
                row = f"{_quoted(m.chunk_id)},{_quoted(m.entity_id)},{int(m.count)}"
                if _breaks_line(row):
                    multiline.update(("PART_OF", "NEXT", "MENTIONS"))
                mentions_out.write(row + "\n")
            chunks += len(b.chunks)
    finally:
        for f in files.values():
            f.close()
    return _Shard(paths, chunks, frozenset(multiline))


def _write_entities(directory: Path) -> _Shard:
    """The Entity file of all of :data:`_SHARD_INPUT` (an entity's name and type depend on
    every document that offers it)."""
    entities = _entities(_SHARD_INPUT)
    out = ImportFiles(directory=directory)
    _Writer(directory, out).write_csv(
        "nodes",
        "Entity",
        _ENTITY,
        (
            (k, r["type"], r["name"], r["name_folded"], r["name_rank"])
            for k, r in sorted(entities.items())
        ),
    )
    multiline: set[str] = set()
    if any(_breaks_line(f"{k}{r['name']}{r['type']}") for k, r in entities.items()):
        multiline.add("Entity")
    if any(_breaks_line(key) for key in entities):  # an id is in MENTIONS and RELATED too
        multiline.update(("MENTIONS", "RELATED"))
    return _Shard({"Entity": out.files[0].path}, 0, frozenset(multiline))


def _write_related(directory: Path) -> _Shard:
    """The RELATED file of all of :data:`_SHARD_INPUT` (weights count the whole corpus)."""
    path = directory / "relationships_RELATED.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(":START_ID(Entity),:END_ID(Entity),weight:long\n")
        f.writelines(f"{_quoted(a)},{_quoted(z)},{w}\n" for a, z, w in _related(_SHARD_INPUT))
    return _Shard({"RELATED": path}, 0, frozenset())


def _write_all(
    bundles: Sequence[DocumentBundle], directory: Path, now: str, workers: int
) -> list[_Shard]:
    """Every file: the per-document ones in ``workers`` shards of consecutive documents, the
    Entity and RELATED ones whole, each by a process forked from this one (the bundles are not
    copied: the children read :data:`_SHARD_INPUT`); in this process, one after the other, when
    ``workers`` is 1 or the platform cannot fork."""
    global _SHARD_INPUT
    n = len(bundles)
    shards = max(1, min(workers, n))
    bounds = [(n * i // shards, n * (i + 1) // shards) for i in range(shards)]
    tasks: list[tuple[Callable[..., _Shard], tuple[object, ...]]] = [
        (_write_entities, (directory,)),
        (_write_related, (directory,)),
        *((_write_shard, (directory, i, a, z, now)) for i, (a, z) in enumerate(bounds)),
    ]
    _SHARD_INPUT = bundles
    try:
        if workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
            return [task(*args) for task, args in tasks]
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(len(tasks), mp_context=multiprocessing.get_context("fork"))
        with pool:
            futures = [pool.submit(task, *args) for task, args in tasks]
            return [f.result() for f in futures]
    finally:
        _SHARD_INPUT = ()


def _related(bundles: Sequence[DocumentBundle]) -> Iterable[tuple[str, str, int]]:
    """RELATED for each related pair, smaller id first: the number of chunks (of the whole
    corpus) mentioning both, as the transactional writer's increments add up to."""
    chunks_of: dict[str, set[str]] = {}
    for b in bundles:
        for m in b.extraction.mentions:
            chunks_of.setdefault(m.entity_id, set()).add(m.chunk_id)
    # a Relation holds source_id < target_id (its validator): the pair as it is, read in C
    pairs: set[tuple[str, str]] = set()
    ends = attrgetter("source_id", "target_id")
    for b in bundles:
        pairs.update(map(ends, b.extraction.relations))
    empty: set[str] = set()
    for a, z in pairs:
        yield a, z, len(chunks_of.get(a, empty) & chunks_of.get(z, empty))


def write_import_files(
    bundles: Sequence[DocumentBundle],
    directory: Path,
    *,
    now: str | None = None,
    workers: int | None = None,
) -> ImportFiles:
    """Write the job's graph as ``neo4j-admin database import`` CSV files under ``directory``.

    The files of what each document holds on its own (its node, chunks, PART_OF, NEXT, MENTIONS)
    are written in ``workers`` shards (default: one per available core), and the entities and
    RELATED (which need the whole corpus) beside them, each by a forked process. Which rows
    land in which file, and in which order, changes nothing in the imported graph."""
    _check_supported(bundles)
    directory.mkdir(parents=True, exist_ok=True)
    now = now or datetime.now(UTC).isoformat()
    out = ImportFiles(directory=directory, documents=len(bundles))
    headers: dict[str, Path] = {}
    for kind, label, columns in _PER_DOCUMENT:
        headers[label] = directory / f"{kind}_{label}.csv"
        headers[label].write_text(_header(columns) + "\n", encoding="utf-8")
    written = _write_all(bundles, directory, now, workers or available_cpus())
    out.files.append(CsvFile("nodes", "Entity", written[0].paths["Entity"]))
    shards = written[2:]
    for kind, label, _ in _PER_DOCUMENT:
        out.files.append(
            CsvFile(kind, label, headers[label], tuple(s.paths[label] for s in shards))
        )
    out.files.append(CsvFile("relationships", "RELATED", written[1].paths["RELATED"]))
    out.chunks = sum(s.chunks for s in shards)
    # the files with a line break inside a field (see ImportFiles.admin_arguments)
    multiline = {label for s in written for label in s.multiline}
    out.multiline = [p for f in out.files if f.label in multiline for p in (f.path, *f.parts)]
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
    """What a bulk load did and how long each stage took (seconds of wall time)."""

    documents: int
    chunks: int
    csv_seconds: float
    """Writing the CSV files (the server's shutdown runs meanwhile)."""
    import_seconds: float
    """From the CSV files written to neo4j-admin done: the rest of the shutdown, the import."""
    restart_seconds: float
    migrate_seconds: float
    """Schema migrations and vector indexes, until every index is ONLINE."""
    total_seconds: float
    migrations: list[str]
    stop_seconds: float = 0.0
    """The server's shutdown (from its start, beside the CSV writing, to its end)."""
    csv_bytes: int = 0


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
    *,
    workers: int | None = None,
) -> BulkLoadResult:
    """Import ``bundles`` into the empty Neo4j database behind ``store``: write the CSV files
    to ``directory`` (in ``workers`` processes, default one per core) while the server shuts
    down, import, start it, and on the store ``reopen()`` returns create the vector indexes of
    the job's embedding ``spaces`` and apply kgrag's schema migrations, all populating side by
    side, returning once every index is ONLINE (the database answers as after transactional
    writes). ``reopen`` should open the store without migrating (it may migrate: the indexes are
    then built one after the other). That store is closed before returning, and so is
    ``store``. When the CSV files cannot be written the server is started again, untouched."""
    from concurrent.futures import ThreadPoolExecutor

    from kgrag.graph.migrations import migrate
    from kgrag.graph.spaces import ensure_space

    t0 = time.perf_counter()
    try:
        ensure_empty(store)
    finally:
        store.close()
    stopped_at: list[float] = []

    def stop() -> None:
        server.run(server.stop, "stopping Neo4j")
        stopped_at.append(time.perf_counter())

    with ThreadPoolExecutor(1) as shutdown:
        stopping = shutdown.submit(stop)
        try:
            files = write_import_files(bundles, directory, workers=workers)
        except BaseException:
            stopping.result()
            server.run(server.start, "starting Neo4j again")
            raise
        t1 = time.perf_counter()
        stopping.result()
    server.run([*server.admin, *files.admin_arguments()], "neo4j-admin database import")
    t2 = time.perf_counter()
    server.run(server.start, "starting Neo4j")
    t3 = time.perf_counter()
    fresh = reopen()
    try:
        fresh.write("documents_fill_empty_lists")
        for space in spaces:  # first: the vector indexes populate while the rest is built
            ensure_space(fresh, space)
        applied = migrate(fresh, together=True)
        fresh.await_schema([])  # the vector indexes too, when no migration was pending
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
        stop_seconds=stopped_at[0] - t0,
        csv_bytes=sum(p.stat().st_size for f in files.files for p in (f.path, *f.parts)),
    )


def dev_script() -> Path:
    """scripts/neo4j.sh of this checkout (or ``KGRAG_NEO4J_SCRIPT``)."""
    env = os.environ.get("KGRAG_NEO4J_SCRIPT")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "scripts" / "neo4j.sh"
