"""The lexical stage on both engines (embedded FalkorDB, Neo4j), over six real sections of the
libtasn1 manual whose function names differ by a suffix (tests/data/libtasn1): a question naming
``asn1_der_decoding`` gets that function's description first, from the lexical stage and from
the rule plan's fused evidence, not ``asn1_der_decoding2`` or ``asn1_der_decoding_element``;
and a document the reader may not read is never a lexical hit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from kgrag.core import AccessContext
from kgrag.executor.base import StepOutcome
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from tests.support.across import shared_folder
from tests.support.corpus import run_plan
from tests.support.engines import Engine
from tests.support.lexical import lexical_hits

DATA = Path(__file__).resolve().parents[1] / "data" / "libtasn1"
FUNCTIONS = sorted(p.stem for p in DATA.glob("*.txt"))
QUESTION = "What does asn1_der_decoding do?"
#: A private note naming the function, readable by alice only.
PRIVATE = (
    "Audit note\nOur fork patches asn1_der_decoding to reject indefinite lengths; "
    "ticket SEC-4471 tracks the asn1_der_decoding change.\n"
)
ALICE = AccessContext(user="alice")
BOB = AccessContext(user="bob")


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    root = shared_folder(tmp_path_factory, "test_lexical_retrieval")
    private = root / "audit_note.txt"
    private.write_text(PRIVATE, encoding="utf-8")
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(DATA / f"{name}.txt") for name in FUNCTIONS])
        assert report.ingested == len(FUNCTIONS) == 6, report.failures
        report = a.ingest([str(private)], acl=["user:alice"])
        assert report.ingested == 1, report.failures
        yield a


def _run(
    agent: KnowledgeAgent, plan: Plan, access: AccessContext = ALICE
) -> dict[int, StepOutcome]:
    return run_plan(agent, plan, access)


def _names(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [Path(str(h.uri)).stem for h in hits]


def test_the_lexical_stage_ranks_the_named_identifier_first(agent: KnowledgeAgent) -> None:
    hits = lexical_hits(agent, QUESTION, BOB, k=10)
    names = _names(hits)
    assert names[0] == "asn1_der_decoding", names
    # the near names are candidates too (they share the parts), ranked below it
    assert {"asn1_der_decoding2", "asn1_der_decoding_element"} <= set(names)
    assert hits[0].score > hits[1].score


def test_each_similar_name_finds_its_own_section(agent: KnowledgeAgent) -> None:
    for name in FUNCTIONS:
        hits = lexical_hits(agent, f"What does {name} return?", BOB, k=10)
        assert _names(hits)[0] == name, (name, _names(hits))


def test_the_rule_plan_puts_the_named_function_first(agent: KnowledgeAgent) -> None:
    plan, _ = agent.plan(QUESTION)
    outcomes = _run(agent, plan, BOB)
    lexical = [
        s.step_id
        for s in plan.plan
        if s.type == "graph_query" and s.parameters.template == "chunks_fulltext"  # type: ignore[union-attr]
    ]
    assert len(lexical) == 1 and outcomes[lexical[0]].status == "ok"
    text, _ = final_evidence(plan, outcomes)
    assert _names(text)[0] == "asn1_der_decoding", _names(text)


def test_lexical_hits_hold_only_documents_the_reader_may_read(agent: KnowledgeAgent) -> None:
    question = "Which ticket tracks the asn1_der_decoding change?"
    as_alice = lexical_hits(agent, question, ALICE, k=10)
    assert "audit_note" in _names(as_alice)  # the note is a lexical hit for its reader ...
    as_bob = lexical_hits(agent, question, BOB, k=10)
    assert as_bob and "audit_note" not in _names(as_bob)  # ... and never for another
    plan, _ = agent.plan(question)
    for step_id, outcome in _run(agent, plan, BOB).items():
        assert all("ticket SEC-4471" not in (h.text or "") for h in outcome.result), step_id
