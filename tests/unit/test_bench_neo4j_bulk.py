"""bench/neo4j_bulk.py's CSV files (``scale.py --neo4j-bulk``): every row has the header's
columns, each vector reads back as the same float32 values, texts with quotes, commas and line
breaks round-trip, and a line break makes neo4j-admin read the chunk files as multi-line."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
neo4j_bulk = pytest.importorskip("neo4j_bulk")


def _rows(files: object, label: str) -> list[list[str]]:
    (entry,) = [f for f in files.files if f.label == label]  # type: ignore[attr-defined]
    rows: list[list[str]] = []
    for path in (entry.path, *entry.parts):
        with path.open(encoding="utf-8", newline="") as f:
            rows += list(csv.reader(f))
    return rows


@pytest.mark.parametrize("workers", [1, 2])
def test_chunk_files_round_trip_vectors_and_texts(tmp_path: Path, workers: int) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((2005, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"text {i}" for i in range(len(vectors))]
    texts[7] = 'a "quoted", comma\nand a line break'
    files = neo4j_bulk.write_files(vectors, texts, tmp_path, workers)

    chunks = _rows(files, "Chunk")
    header, body = chunks[0], chunks[1:]
    assert len(body) == len(vectors) == files.chunks
    assert all(len(row) == len(header) for row in body)
    col = {name.split(":")[0]: i for i, name in enumerate(header)}
    by_id = {row[col["id"]]: row for row in body}
    assert by_id["w7"][col["text"]] == texts[7]
    for i in (0, 999, 1000, 2004):
        got = np.array(by_id[f"w{i}"][col["embedding"]].split("\x1f"), dtype=np.float64)
        assert np.array_equal(got.astype(np.float32), vectors[i])
        assert by_id[f"w{i}"][col["document_id"]] == f"bench_doc_{i // 1000}"
    assert files.multiline  # the line break in text 7

    docs = _rows(files, "Document")
    assert [row[0] for row in docs[1:]] == ["bench_doc_0", "bench_doc_1", "bench_doc_2"]
    chunk_count = docs[0].index("chunk_count:long")
    assert [int(row[chunk_count]) for row in docs[1:]] == [1000, 1000, 5]
    part_of = _rows(files, "PART_OF")[1:]
    assert len(part_of) == len(vectors)
    assert ["w1500", "bench_doc_1"] in part_of


def test_files_without_line_breaks_are_read_in_parallel(tmp_path: Path) -> None:
    vectors = np.eye(3, dtype=np.float32)
    files = neo4j_bulk.write_files(vectors, ["a", "b", "c"], tmp_path, 1)
    assert files.multiline == []
    assert "--multiline-fields=false" in files.admin_arguments()


def test_rows_follow_the_columns_by_name_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench writes chunk and document rows by column name from bulk_import's one
    definition: a column added or moved there (as ``section`` was) moves its values too."""
    reordered = list(reversed(neo4j_bulk._CHUNK))
    monkeypatch.setattr(neo4j_bulk, "_CHUNK", reordered)
    monkeypatch.setattr(neo4j_bulk, "_DOCUMENT", list(reversed(neo4j_bulk._DOCUMENT)))
    vectors = np.eye(3, dtype=np.float32)
    files = neo4j_bulk.write_files(vectors, ["alpha", "beta", "gamma"], tmp_path, 1)
    chunks = _rows(files, "Chunk")
    col = {name.split(":")[0]: i for i, name in enumerate(chunks[0])}
    assert [(r[col["id"]], r[col["text"]], r[col["position"]]) for r in chunks[1:]] == [
        ("w0", "alpha", "0"),
        ("w1", "beta", "1"),
        ("w2", "gamma", "2"),
    ]
    assert all(r[col["document_id"]] == "bench_doc_0" and not r[col["section"]] for r in chunks[1:])
    docs = _rows(files, "Document")
    doc_col = {name.split(":")[0]: i for i, name in enumerate(docs[0])}
    assert (
        docs[1][doc_col["chunk_count"]] == "3" and docs[1][doc_col["uri"]] == "bench://bench_doc_0"
    )
