"""Two causes of wrong answers found on the fourteenth real folder (BENCHMARKS.md "A fourteenth
folder"), on real files of this machine and both engines:

- a question naming a table row by the values of adjacent columns run together ("Ubuntu 22.04
  LTS Jammy Jellyfish", where the row reads "version: 22.04 LTS; codename: Jammy Jellyfish")
  abstained with that row first: the support test looked for the name phrase's parts whole in
  the row's text, where a column's name stands between them (kgrag.agent.rows.row_values);
- a plain text converted to .docx or .odt by LibreOffice has one paragraph per line, and its
  sentences were cut at every line, so the answer quoted "... while in a Linux console, your
  current" without "application will likely dump core." (kgrag.ingest.formats._common:
  ``TextBuilder(wrapped_lines=True)``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.graph.store import GraphStore
from tests.support.folders import ingested_copy

DATA = Path(__file__).parents[1] / "data" / "fourteenth_folder"
FILES = ("ubuntu.csv", "ncurses FAQ.docx", "xml catalogs.odt")


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeAgent:
    return ingested_copy(module_store, tmp_path_factory, DATA, FILES)


def test_a_row_named_by_its_adjacent_values_answers(agent: KnowledgeAgent) -> None:
    answer = agent.ask("When was Ubuntu 22.04 LTS Jammy Jellyfish released?")
    assert answer.exit_reason != "not_found", answer.answer
    assert "release: 2022-04-21" in answer.answer, answer.answer
    assert answer.citations[0].row == 37, answer.citations


def test_a_release_the_table_does_not_hold_still_abstains(agent: KnowledgeAgent) -> None:
    answer = agent.ask("When was Ubuntu 27.04 Stately Stoat released?")
    assert answer.exit_reason == "not_found", answer.answer


def _chunk_texts(store: GraphStore, file_name: str) -> str:
    rows = store.read_freeform(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) WHERE d.uri ENDS WITH $name "
        "RETURN c.text AS text ORDER BY c.position",
        {"name": "/" + file_name},
    )
    return "\n".join(str(r["text"]) for r in rows)


def test_lines_of_a_converted_text_are_one_paragraph(
    module_store: GraphStore, agent: KnowledgeAgent
) -> None:
    faq = " ".join(_chunk_texts(module_store, "ncurses FAQ.docx").split())
    assert "your current application will likely dump core." in faq, faq
    catalogs = " ".join(_chunk_texts(module_store, "xml catalogs.odt").split())
    assert "the de-facto standard tool to be used to maintain XML catalog files" in catalogs
    answer = agent.ask(
        "Why does an ncurses application dump core when I press Print Screen in the Linux console?"
    )
    sentence = next(line for line in answer.answer.splitlines() if "Print Screen" in line)
    assert "application will likely dump core" in sentence, answer.answer
