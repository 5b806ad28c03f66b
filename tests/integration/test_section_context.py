"""Chunks retrieved with their section, on both engines (embedded FalkorDB, Neo4j), from two
chapters of Valgrind's real PDF manual (tests/support/valgrind_manual.py): every chunk is
stored with the headings of its section (the page's running header, the outline's headings),
dense and lexical hits and the answer's citations carry them, and the stored and cited text is
the page's own text, never the context line its vector was computed from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.executor.trace import read_trace
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from kgrag.planner.rule import fulltext_query
from tests.support.across import shared_folder
from tests.support.engines import Engine
from tests.support.raw import raw_write
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


def _relationship_sections(agent: KnowledgeAgent, query_id: str, pattern: str) -> list[Any]:
    """The ``section`` property of the trace's relationships matching ``pattern`` (what Neo4j
    Browser shows on them), read past kgrag's statements."""
    text = f"MATCH (q:Query {{id: $id}}){pattern}(:Chunk) RETURN r.section AS section"
    result = raw_write(agent.store, text, {"id": query_id})
    rows = result if agent.store.dialect == "neo4j" else result.result_set
    return [tuple(row[0]) if row[0] is not None else None for row in rows]


def test_the_trace_keeps_the_section_of_the_evidence(agent: KnowledgeAgent) -> None:
    """Each chunk a step returned, and each one the answer cites, is linked in the trace with
    its section (``RETURNED.section``, ``CITES.section``); ``kgrag trace`` reads them back."""
    answer = agent.ask("How does Memcheck handle fishy argument values?")
    cited = {c.node_id: c.section for c in answer.citations if c.kind == "chunk"}
    assert cited and all(cited.values()), answer.citations
    returned = _relationship_sections(
        agent, answer.query_id, "-[:PLANNED]->(:Plan)-[:HAS_STEP]->(:Step)-[r:RETURNED]->"
    )
    # every page of the excerpt is in a chapter: "Memcheck: ..." or "4. Memcheck: ..."
    assert returned and all(s and ("Memcheck" in s[0] or "Helgrind" in s[0]) for s in returned)
    cites = _relationship_sections(agent, answer.query_id, "-[:ANSWERED_BY]->(:Answer)-[r:CITES]->")
    assert sorted(cites, key=str) == sorted(cited.values(), key=str)
    trace = read_trace(agent.store, answer.query_id, OPERATOR)
    assert {c.node_id: c.section for c in trace.answer.citations} == cited
    items = [x for step in trace.steps for x in step.returned if x.kind == "Chunk"]
    assert items and all(x.section for x in items)
    assert "section" in trace.to_json()["steps"][0]["returned"][0]


def test_graph_query_templates_return_the_section(
    agent: KnowledgeAgent, excerpt: tuple[str, dict[int, str]]
) -> None:
    name = Path(excerpt[0]).name.lower()
    params = {"template": "file_chunks", "params": {"names": [name]}, "k": 5}
    hits = _run(agent, {"step_id": 1, "type": "graph_query", "parameters": params})
    assert hits and any(h.section and h.section[0] in (HELGRIND, MEMCHECK) for h in hits), hits
