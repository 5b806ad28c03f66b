"""Plain text files' structure in the graph, on both engines: PostgreSQL's ``errcodes.txt`` (codes
aligned with spaces) and iso-codes' ``iso_15924.json`` (a list of flat records) are tables whose
rows answer a question naming a row; a README's underlined headings are its chunks' sections.

Found on the twelfth real folder (BENCHMARKS.md "Plain text structure"): "What is the
PostgreSQL error code for a unique violation?" quoted the file's comment and "What is the ISO
15924 numeric code of the Cyrillic script?" a chunk of other scripts' braces."""

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

DATA = Path(__file__).parents[1] / "data" / "plain_text"


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeAgent:
    folder = tmp_path_factory.mktemp("plain_text_tables")
    for name in ("errcodes.txt", "iso_15924.json", "README.freetype"):
        shutil.copy(DATA / name, folder)
    a = KnowledgeAgent(module_store, factory.text_embedder(Settings()))
    report = a.ingest([str(folder)])
    assert (report.ingested, report.failed) == (3, 0), (report.failures, report.skips)
    return a


def test_aligned_and_json_rows_are_rows_of_tables(
    module_store: GraphStore, agent: KnowledgeAgent
) -> None:
    rows = module_store.read_freeform(
        "MATCH (t:Table)-[:PART_OF]->(d:Document) "
        "OPTIONAL MATCH (c:Chunk)-[:ROW_OF]->(t) WHERE (c)-[:PART_OF]->(d) "
        "RETURN d.uri AS uri, count(DISTINCT t) AS tables, count(c) AS rows ORDER BY uri"
    )
    found = {Path(r["uri"]).name: (r["tables"], r["rows"]) for r in rows}
    assert found["errcodes.txt"] == (46, 266)
    assert found["iso_15924.json"] == (1, 182)


def test_a_question_naming_a_code_is_answered_from_its_row(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What is the PostgreSQL error code for a unique violation?")
    assert "23505" in answer.answer, answer.answer
    row = next(c for c in answer.citations if c.row is not None)
    assert row.uri is not None and row.uri.endswith("errcodes.txt"), row
    answer = agent.ask("What is the ISO 15924 numeric code of the Cyrillic script?")
    # rows quoted, not braces; which Cyrillic row leads is the sentence choice's (Cyrs, 221,
    # "Cyrillic (Old Church Slavonic variant)", is as near the question as Cyrl, 220)
    assert "name: Cyrillic" in answer.answer and "{" not in answer.answer, answer.answer
    assert all(c.row is not None for c in answer.citations), answer.citations


def test_underlined_headings_are_the_sections_of_chunks(
    module_store: GraphStore, agent: KnowledgeAgent
) -> None:
    rows = module_store.read_freeform(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) WHERE d.uri ENDS WITH 'README.freetype' "
        "AND c.table_row IS NULL RETURN c.position AS position, c.section AS section "
        "ORDER BY position"
    )
    sections = [list(r["section"] or []) for r in rows]
    assert sections[0] == ["FreeType 2.12.1"], sections
    assert all(s[0] == "FreeType 2.12.1" for s in sections), sections
    assert any(len(s) == 2 for s in sections), sections
