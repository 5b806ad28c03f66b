"""Versions on both engines: "What changed in Valgrind 3.19?" over four real release sections
of Valgrind's NEWS (tests/data/valgrind_news: 3.19.0, 3.18.0, 3.17.0, 3.16.0, which share their
platform lists and headings word for word). An embedding scores the four alike; the lexical
stage matches "3.19" inside "3.19.0" and leads the fusion (a version counts as an identifier),
and the answer cites the 3.19.0 section instead of abstaining for want of "Valgrind 3.19" written
together."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from kgrag.core import AccessContext
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.rule import fulltext_query
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "valgrind_news"
QUESTION = "What changed in Valgrind 3.19?"
RELEASE = "release_a"  # Release 3.19.0 (11 Apr 2022)


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        report = a.ingest(sorted(str(p) for p in DATA.glob("release_*.txt")))
        assert (report.ingested, report.failed) == (4, 0), report
        yield a


def _stems(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [Path(str(h.uri)).stem for h in hits]


def test_the_plans_evidence_puts_the_release_asked_about_first(agent: KnowledgeAgent) -> None:
    assert "3.19*" in fulltext_query(QUESTION).split(" | ")  # a prefix: Lucene reads 3.19.0 whole
    plan, _ = agent.plan(QUESTION)
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=AccessContext())
    outcomes = Executor(env).run(plan)
    assert all(o.status in ("ok", "skipped") for o in outcomes.values()), outcomes
    text, _ = final_evidence(plan, outcomes)
    assert _stems(text)[0] == RELEASE, _stems(text)


def test_the_answer_cites_the_release_asked_about(agent: KnowledgeAgent) -> None:
    answer = agent.ask(QUESTION)
    assert answer.exit_reason != "not_found", answer.answer
    assert answer.citations and Path(str(answer.citations[0].uri)).stem == RELEASE, [
        str(c.uri) for c in answer.citations
    ]
