"""A FAQ's questions and answers stored one to a passage, on both engines (embedded FalkorDB,
Neo4j), from the real zlib FAQ as Debian installs it (/usr/share/doc/zlib1g-dev/FAQ.gz). The
tenth real folder's "Can zlib handle .zip archives?" was answered from passages each holding
parts of several questions and answers (kgrag/ingest/faq.py): the passage that answers it now
holds its question and answer alone, under the question as its section, and is the first dense
and lexical hit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from kgrag.planner.rule import fulltext_query
from tests.support.engines import Engine

FAQ = Path("/usr/share/doc/zlib1g-dev/FAQ.gz")
QUESTION = "Can zlib handle .zip archives?"
SECTION = ("11. Can zlib handle .zip archives?",)

pytestmark = pytest.mark.skipif(not FAQ.exists(), reason="zlib1g-dev's FAQ is not installed")


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(FAQ)])
        assert report.ingested == 1, report.failures
        yield a


def _run(agent: KnowledgeAgent, step: dict[str, object]) -> list[Hit]:
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=OPERATOR)
    return list(Executor(env).run(Plan.parse({"plan": [step]}))[1].result)


def test_the_answering_passage_holds_its_question_and_answer_alone(
    agent: KnowledgeAgent,
) -> None:
    dense = _run(
        agent,
        {"step_id": 1, "type": "vector_search", "parameters": {"query": QUESTION, "k": 5}},
    )
    params = {"template": "chunks_fulltext", "params": {"query": fulltext_query(QUESTION)}}
    lexical = _run(agent, {"step_id": 1, "type": "graph_query", "parameters": {**params, "k": 5}})
    for first in (dense[0], lexical[0]):
        assert first.section == SECTION, (first.section, first.text)
        text = " ".join((first.text or "").split())
        assert text == (
            "11. Can zlib handle .zip archives? Not by itself, no. See the directory "
            "contrib/minizip in the zlib distribution."
        )
