"""Near-duplicate passages on both engines: eSpeak NG's documentation as Debian installs it, each
document as Markdown and as the HTML page built from it (tests/data/espeak_ng_docs). Without the
collapse, both copies of each near passage take a slot of the evidence, so for "How do I use eSpeak
NG as a library?" the best four hits are the contents of the integration guide and of the user
guide, twice each; with it, each passage takes one slot (its other format carried as a copy) and
the search looks deeper, so the evidence holds four distinct passages, the guide's steps among
them. A copy a reader may not read never stands in for one
they may."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from kgrag.core import AccessContext, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.duplicates import CopyFinder
from kgrag.executor.scheduler import Executor
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.rule import rule_plan
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "espeak_ng_docs"
QUESTION = "How do I use eSpeak NG as a library?"
#: The evidence's size here: small, so that the copies of the two nearest passages fill it.
K = 4
ALICE = AccessContext(user="alice")


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    """The three documents as Markdown and HTML, all public but ``integration.md``, which only
    alice may read."""
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        public = sorted(str(p) for p in DATA.glob("*.*") if p.name not in (*_PRIVATE, "SOURCE.md"))
        assert a.ingest(public).ingested == 5
        assert a.ingest([str(DATA / n) for n in _PRIVATE], acl=["user:alice"]).ingested == 1
        yield a


_PRIVATE = ("integration.md",)


def _evidence(agent: KnowledgeAgent, access: AccessContext) -> list[Hit]:
    plan = rule_plan(QUESTION, k=K)
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=access)
    outcomes = Executor(env).run(plan)
    assert all(o.status in ("ok", "skipped") for o in outcomes.values()), outcomes
    text, _ = final_evidence(plan, outcomes)
    return text


def _names(hits: list[Hit]) -> list[str]:
    return [Path(str(h.uri)).name for h in hits]


def test_each_passage_takes_one_slot_and_the_next_ones_enter(agent: KnowledgeAgent) -> None:
    text = _evidence(agent, ALICE)
    assert len(text) == K, _names(text)
    finder = CopyFinder()
    pairs = [(a, b) for i, a in enumerate(text) for b in text[i + 1 :] if finder.are_copies(a, b)]
    assert not pairs, [(_names([a]), _names([b])) for a, b in pairs]
    # the guide's steps (build the example, then "./test-espeak"), below both copies of the
    # integration guide's contents and of the user guide's in the dense ranking, now enter
    assert any("./test-espeak" in (h.text or "") for h in text), [h.text for h in text]
    # the other format of a passage comes with it
    copied = [h for h in text if h.copies]
    assert copied, _names(text)
    for hit in copied:
        assert all(finder.are_copies(hit, c) for c in hit.copies)
        assert {Path(str(c.uri)).stem for c in hit.copies} == {Path(str(hit.uri)).stem}


def test_a_copy_the_reader_may_not_read_never_stands_in(agent: KnowledgeAgent) -> None:
    public = _evidence(agent, AccessContext())
    seen = [c for h in public for c in h.and_copies()]
    assert "integration.md" not in _names(seen), _names(seen)
    assert "integration.html" in _names(public)  # the copy the reader may read
    # alice may read both: one stands for the passage, the other is its copy
    both = [c for h in _evidence(agent, ALICE) for c in h.and_copies()]
    assert {"integration.md", "integration.html"} <= set(_names(both)), _names(both)
