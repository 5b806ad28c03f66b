"""Chunks retrieved with their section, on both engines (embedded FalkorDB, Neo4j), from two
chapters of Valgrind's real PDF manual (tests/support/valgrind_manual.py): every chunk is
stored with the headings of its section (the page's running header, the outline's headings),
dense and lexical hits and the answer's citations carry them, and the stored and cited text is
the page's own text, never the context line its vector was computed from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from kgrag.planner.rule import fulltext_query
from tests.support.across import shared_folder
from tests.support.engines import Engine
from tests.support.valgrind_manual import manual_excerpt

HELGRIND = "Helgrind: a thread error detector"
MEMCHECK = "Memcheck: a memory error detector"


@pytest.fixture(scope="module")
def excerpt(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[int, str]]:
    """The excerpt's path and its pages' text as parsed (what chunks are cut from)."""
    path = manual_excerpt(shared_folder(tmp_path_factory, "test_section_context"))
    doc = parse(SourceItem(path=path, modality="pdf", mime="application/pdf"), 50_000_000)
    return str(path), {p.number or 0: p.text for p in doc.pages}


@pytest.fixture(scope="module")
def agent(module_engine: Engine, excerpt: tuple[str, dict[int, str]]) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([excerpt[0]])
        assert report.ingested == 1, report.failures
        yield a


def _run(agent: KnowledgeAgent, step: dict[str, object]) -> list[Hit]:
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=OPERATOR)
    return list(Executor(env).run(Plan.parse({"plan": [step]}))[1].result)


def _dense(agent: KnowledgeAgent, question: str) -> list[Hit]:
    step = {"step_id": 1, "type": "vector_search", "parameters": {"query": question, "k": 5}}
    return _run(agent, step)


def _lexical(agent: KnowledgeAgent, question: str) -> list[Hit]:
    params = {"template": "chunks_fulltext", "params": {"query": fulltext_query(question)}, "k": 5}
    return _run(agent, {"step_id": 1, "type": "graph_query", "parameters": params})


def test_dense_and_lexical_hits_carry_their_section_and_their_own_text(
    agent: KnowledgeAgent, excerpt: tuple[str, dict[int, str]]
) -> None:
    pages = excerpt[1]
    question = "What does Helgrind report for inconsistent lock orderings?"
    dense, lexical = _dense(agent, question), _lexical(agent, question)
    for hit in (*dense, *lexical):
        assert hit.section, hit.id  # every page of the excerpt is in a chapter
        assert hit.section[0] in (HELGRIND, MEMCHECK), hit.section
        assert hit.text in pages[hit.page], hit.id  # the page's text, no context line
        assert not hit.text.startswith("Valgrind Documentation ›"), hit.text[:80]
    assert dense[0].section[0] == HELGRIND, dense[0].section
    assert "7.3. Detected errors: Inconsistent Lock Orderings" in dense[0].section


def test_an_answer_cites_the_section_beside_the_unchanged_text(
    agent: KnowledgeAgent, excerpt: tuple[str, dict[int, str]]
) -> None:
    answer = agent.ask("How does Memcheck handle fishy argument values?")
    cited = [c for c in answer.citations if c.kind == "chunk"]
    assert cited, answer.answer
    first = cited[0]
    assert first.section[0] == MEMCHECK, first.section
    assert first.excerpt and first.excerpt in excerpt[1][first.page or 0]
    assert "›" not in answer.answer  # the label and the quotes are the document's, as before
