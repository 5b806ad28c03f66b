"""The bulk path's CSV files (kgrag.graph.bulk_import.write_import_files), without a server: the
per-document files written in forked shards hold the same rows whatever the number of shards,
neo4j-admin is told to read each label's header file then its shards, and the files with a line
break inside a field are known. The import itself, and the graph it gives
against the transactional writer's, are tested on Neo4j (tests/integration/test_bulk_import.py)."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from kgrag.graph.bulk_import import (
    BulkImportError,
    ImportFiles,
    available_cpus,
    import_memory,
    write_import_files,
)
from kgrag.ingest.entities import EntityRecord, ExtractionResult, Mention, Relation
from kgrag.ingest.file_dates import FileDates
from kgrag.ingest.records import ChunkRecord, DocumentBundle


def _bundle(n: int, title: str = "plain") -> DocumentBundle:
    doc = f"doc_{n:02d}"
    chunks = tuple(
        ChunkRecord(id=f"{doc}:c{p}", text=f'chunk "{p}", of {doc}', position=p,
                    embedding=(0.1 * p, -1.5e-7, float(n)))
        for p in range(3)
    )  # fmt: skip
    names = ["ada", "babbage", f"only_{n}"]
    return DocumentBundle(
        id=doc,
        uri=f"/corpus/{doc}.md",
        sha256=doc,
        modality="text",
        mime="text/markdown",
        title=title,
        bytes=10,
        acl=("*",),
        chunks=chunks,
        extraction=ExtractionResult(
            entities=tuple(EntityRecord(id=e, name=e.title()) for e in names),
            mentions=(
                *(Mention(chunk_id=c.id, entity_id="ada", count=2) for c in chunks),
                Mention(chunk_id=chunks[0].id, entity_id="babbage"),
                Mention(chunk_id=chunks[1].id, entity_id=f"only_{n}"),
            ),
            relations=(
                Relation(source_id="ada", target_id="babbage"),
                Relation(source_id="ada", target_id=f"only_{n}"),
            ),
        ),
    )


def _rows(files: ImportFiles) -> dict[str, tuple[list[str], Counter[tuple[str, ...]]]]:
    """label -> (header, rows): each label's files read as neo4j-admin reads them, one file."""
    out = {}
    for f in files.files:
        header: list[str] = []
        rows: Counter[tuple[str, ...]] = Counter()
        for path in (f.path, *f.parts):
            with path.open(newline="", encoding="utf-8") as fh:
                for row in csv.reader(fh):
                    if not header:
                        header = row
                    else:
                        rows[tuple(row)] += 1
        out[f.label] = (header, rows)
    return out


def test_shards_hold_the_rows_of_one_writer(tmp_path: Path) -> None:
    bundles = [_bundle(n) for n in range(5)]
    one = write_import_files(bundles, tmp_path / "one", now="t", workers=1)
    three = write_import_files(bundles, tmp_path / "three", now="t", workers=3)
    assert _rows(one) == _rows(three)
    assert (one.documents, one.chunks) == (three.documents, three.chunks) == (5, 15)
    rows = _rows(three)
    # the corpus-wide RELATED weight: chunks (of all documents) mentioning both ends
    assert rows["RELATED"][1][("ada", "babbage", "5")] == 1
    assert rows["RELATED"][1][("ada", "only_3", "1")] == 1
    assert sum(rows["MENTIONS"][1].values()) == 25
    assert rows["Chunk"][1][
        ("doc_03:c1", 'chunk "1", of doc_03', "", "", "1", "", "", "", "doc_03",
         "0.1\x1f-1.5e-07\x1f3.0", "true")
    ] == 1  # fmt: skip
    chunk_file = next(f for f in three.files if f.label == "Chunk")
    assert len(chunk_file.parts) == 3
    assert chunk_file.path.read_text(encoding="utf-8").count("\n") == 1  # the header alone
    argument = f"--nodes=Chunk={chunk_file.path}," + ",".join(map(str, chunk_file.parts))
    assert argument in three.admin_arguments()


def test_the_files_with_line_breaks_are_known(tmp_path: Path) -> None:
    plain = write_import_files([_bundle(0), _bundle(1)], tmp_path / "plain", workers=2)
    assert plain.multiline == []
    assert "--multiline-fields=false" in plain.admin_arguments()  # read in parallel
    broken = write_import_files(
        [_bundle(0), _bundle(1, title="two\r\nlines")], tmp_path / "broken", workers=2
    )
    names = {p.name for p in broken.multiline or []}
    # the header file and the shard holding the title; neo4j-admin reads the group as one file
    assert {"nodes_Document.csv", "nodes_Document.000.csv", "nodes_Document.001.csv"} <= names
    assert not any(n.startswith("relationships_") for n in names)
    assert "--multiline-fields=true" in broken.admin_arguments()  # one switch for all (5.26)


def test_a_value_neo4j_admin_cannot_read_back_names_its_document(tmp_path: Path) -> None:
    bad = _bundle(1).model_copy(update={"tags": ("a\x1fb",)})
    with pytest.raises(BulkImportError, match=r"/corpus/doc_01\.md \(document doc_01\).*U\+001F"):
        write_import_files([_bundle(0), bad], tmp_path, workers=2)


def test_neo4j_admin_gets_the_cores_and_half_the_available_memory(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 24000000 kB\nMemFree: 900000 kB\nMemAvailable: 16384000 kB\n")
    assert import_memory(meminfo) == "8000m"
    meminfo.write_text("MemTotal: 24000000 kB\nMemAvailable: 100 kB\n")
    assert import_memory(meminfo) == "256m"
    assert import_memory(tmp_path / "missing") is None
    args = write_import_files([_bundle(0)], tmp_path / "csv").admin_arguments()
    assert f"--threads={available_cpus()}" in args


def test_a_documents_file_dates_are_written_by_column_name(tmp_path: Path) -> None:
    """The bulk path stores the dates a file gave at ingestion as the transactional writer does
    (Document.file_modified_at, content_created_at, content_modified_at)."""
    dates = FileDates(file_modified_at="2020-05-06T07:08:09+00:00", content_created_at="2019")
    bundle = _bundle(1).model_copy(update={"dates": dates})
    header, rows = _rows(write_import_files([bundle], tmp_path))["Document"]
    (row,) = rows
    by_name = dict(zip((h.split(":")[0] for h in header), row, strict=True))
    assert by_name["file_modified_at"] == "2020-05-06T07:08:09+00:00"
    assert by_name["content_created_at"] == "2019"
    assert by_name["content_modified_at"] == ""  # none: no property
    assert by_name["id"] == "doc_01" and by_name["chunk_count"] == "3"
