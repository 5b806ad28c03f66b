"""Which document a summary question names, on both engines: "What does the index example
document explain?" names ``index_example.txt``, whose title (its first line, "HEADING1", as in
LibreOffice's own index example document) holds neither word, in a folder where five other
documents have "index" in their titles. The documents holding the most of the question's words
anywhere in their metadata (here the file name) are resolved first; before, the five titles
holding one word filled the candidates and the question found no document."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.analysis import analyse
from kgrag.planner.document_plans import document_plan
from tests.support.across import shared_folder
from tests.support.engines import Engine

FILES = {
    "glossary/index.md": "# Index of terms\n\nA pump moves fluid. A valve stops it.\n",
    "api/index.txt": "API index\n\nThe start call opens a session; stop closes it.\n",
    "faq/index.txt": "Index of questions\n\nHow do I reset the panel? Hold the red button.\n",
    "search/index.txt": "Search index settings\n\nThe index is rebuilt every night at two.\n",
    "reports/index.txt": "Index of reports\n\nThe yearly reports are filed by quarter.\n",
    "office/index_example.txt": (
        "HEADING1\n\nThis example shows how an alphabetical index is built from marked "
        "entries: each entry names a page, and entries of the same word are merged under one "
        "heading.\n"
    ),
}


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    root = shared_folder(tmp_path_factory, "test_document_resolution")
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        report = a.ingest([str(root)])
        assert (report.ingested, report.failed) == (len(FILES), 0), report
        yield a


QUESTION = "What does the index example document explain?"


def test_the_summary_step_resolves_the_document_its_file_name_names(
    agent: KnowledgeAgent,
) -> None:
    plan = document_plan(QUESTION, analyse(QUESTION))
    assert plan is not None and plan.plan[0].type == "document_summary", plan
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=AccessContext())
    (outcome,) = Executor(env).run(plan).values()
    assert [Path(str(h.uri)).name for h in outcome.result] == ["index_example.txt"], [
        h.uri for h in outcome.result
    ]


def test_the_answer_cites_it(agent: KnowledgeAgent) -> None:
    answer = agent.ask(QUESTION)
    assert answer.exit_reason != "not_found", answer.answer
    assert [Path(str(c.uri)).name for c in answer.citations] == ["index_example.txt"], [
        str(c.uri) for c in answer.citations
    ]
    assert "alphabetical index" in answer.answer


def test_a_listing_keeps_the_documents_holding_every_word_of_its_topic(
    agent: KnowledgeAgent,
) -> None:
    """Five documents hold "index" in their titles, one holds "search" too: a listing of the
    documents about the search index lists that one, not every document about an index."""
    answer = agent.ask("Which documents are about the search index?")
    names = [Path(str(c.uri)).name for c in answer.citations]
    assert names == ["index.txt"] and "search" in str(answer.citations[0].uri), [
        str(c.uri) for c in answer.citations
    ]
    # a topic no document holds whole still lists the best partial matches
    answer = agent.ask("Which documents are about the index of recipes?")
    assert len(answer.citations) >= 2, answer.answer
