"""A Markdown pipe table's rows are table rows in the graph, on both engines, and a question
naming a row is answered from it with a citation naming the table and row.

Found on the eleventh real folder (BENCHMARKS.md): a README that is one pipe table (ONNX
Runtime's ``nnapi_supported_ops.md``) was one text document titled ``|Operator|Note|``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory

DATA = Path(__file__).parents[1] / "data" / "markdown_tables"


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeAgent:
    folder = tmp_path_factory.mktemp("markdown_tables")
    shutil.copy(DATA / "nnapi_supported_ops.md", folder)
    (folder / "compressor.md").write_text(
        "# Compressor levels\n\nEach level trades speed for size.\n\n"
        "| Level | Window | Speed |\n|---|---|---|\n| fast | 64 KiB | 410 MB/s |\n"
        "| balanced | 1 MiB | 120 MB/s |\n| ultra | 128 MiB | 9 MB/s |\n\n"
        "Levels above balanced need more memory.\n",
        encoding="utf-8",
    )
    a = KnowledgeAgent(module_store, factory.text_embedder(Settings()))
    report = a.ingest([str(folder)])
    assert (report.ingested, report.failed) == (2, 0), (report.failures, report.skips)
    return a


def test_pipe_table_rows_are_rows_of_a_table(
    module_store: GraphStore, agent: KnowledgeAgent
) -> None:
    rows = module_store.read_freeform(
        "MATCH (t:Table)-[:PART_OF]->(d:Document) "
        "OPTIONAL MATCH (c:Chunk)-[:ROW_OF]->(t) WHERE (c)-[:PART_OF]->(d) "
        "RETURN d.uri AS uri, d.title AS title, t.header AS header, count(c) AS chunks "
        "ORDER BY uri"
    )
    found = {Path(r["uri"]).name: r for r in rows}
    assert set(found) == {"compressor.md", "nnapi_supported_ops.md"}
    assert list(found["nnapi_supported_ops.md"]["header"]) == ["Operator", "Note"]
    assert found["nnapi_supported_ops.md"]["title"] == "nnapi supported ops"
    assert found["nnapi_supported_ops.md"]["chunks"] > 40
    assert (list(found["compressor.md"]["header"]), found["compressor.md"]["chunks"]) == (
        ["Level", "Window", "Speed"],
        3,
    )


def test_a_question_naming_a_row_is_answered_from_it(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What is the window of the ultra compressor level?")
    assert "Window: 128 MiB" in answer.answer, answer.answer
    row = next(c for c in answer.citations if c.row is not None)
    assert row.uri is not None and row.uri.endswith("compressor.md")
    assert (row.table, row.row) == (1, 4), row
