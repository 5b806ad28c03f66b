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
from kgrag.agent.evaluate import OfflineJudge
from kgrag.agent.loop import final_evidence
from kgrag.core import AccessContext, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.duplicates import CopyFinder, collapse
from kgrag.executor.scheduler import Executor
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from kgrag.planner.rule import rule_plan
from kgrag.text import key_terms, stem, term_set
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


def _run(agent: KnowledgeAgent, steps: list[dict[str, object]]) -> dict[int, list[Hit]]:
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=ALICE)
    outcomes = Executor(env).run(Plan.parse({"plan": steps}))
    assert all(o.status == "ok" for o in outcomes.values()), outcomes
    return {i: list(o.result) for i, o in outcomes.items()}


def _search(step_id: int, query: str, k: int) -> dict[str, object]:
    return {
        "step_id": step_id,
        "type": "vector_search",
        "parameters": {"index": "chunk_embedding", "query": query, "k": k},
    }


def test_rerank_gives_each_passage_one_slot(agent: KnowledgeAgent) -> None:
    """A search's hits keep their copies in place (down to the k-th distinct passage); the
    rerank over them gives each passage one slot, held by its best-scored copy, the other
    carried (before: both copies of a passage took two of the four slots)."""
    rerank = {
        "step_id": 2,
        "type": "rerank",
        "dependencies": [1],
        "parameters": {"sources": [1], "query": QUESTION, "k": K, "method": "embedding"},
    }
    found = _run(agent, [_search(1, QUESTION, K), rerank])
    assert len(found[1]) > K  # the copies, in their places
    ranked = found[2]
    assert len(ranked) == K, _names(ranked)
    finder = CopyFinder()
    pairs = [
        (a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :] if finder.are_copies(a, b)
    ]
    assert not pairs, [(_names([a]), _names([b])) for a, b in pairs]
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)
    # each passage carries exactly the copies of it the search found, and some have copies
    for hit in ranked:
        expected = {c.id for c in found[1] if c.id != hit.id and finder.are_copies(hit, c)}
        assert {c.id for c in hit.copies} == expected, _names(ranked)
    assert sum(bool(h.copies) for h in ranked) >= 2, _names(ranked)


def test_the_offline_judge_reads_passages_not_copies(agent: KnowledgeAgent) -> None:
    """The judge reads the best 10 passages of the evidence, not its best 10 hits: given a
    search's hits with their copies in place (6 passages, more than 10 hits), a question term
    that only the sixth passage holds is found (before: the copies took the 10 places, and the
    term was reported missing)."""
    evidence = _run(agent, [_search(1, QUESTION, 6)])[1]
    passages = collapse(evidence)
    assert len(evidence) > 10 and len(passages) == 6, _names(evidence)
    read_before = term_set(h.text or "" for h in evidence[:10])
    word = next(w for w in key_terms(passages[5].text or "") if stem(w) not in read_before)
    question = f"How do I use eSpeak NG as a library, and what about {word}?"
    judgement = OfflineJudge().judge(question, [], evidence, [])
    assert judgement.coverage == 1.0, (word, judgement)
