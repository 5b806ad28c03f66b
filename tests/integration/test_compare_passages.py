"""A comparison quotes, under each side's name, the sentences of that side's passages nearest
the question, each cited (both engines; kgrag/executor/compare_sides.py).

Tried on a folder of compression tools' manual pages: the ``compare`` tool answered with an
entity profile ("XZ (ORG): mentioned in XZ Utils FAQ; mentioned with ...") or each side's first
sentences, and most comparison phrasings ("is xz better than bzip2?", "which is faster, A or
B?") were not read as comparisons at all. A side nothing readable names is said to be so, and a
side whose document the asker may not read is not quoted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

FILES = Path(__file__).resolve().parents[1] / "data" / "compare_tools"
PUBLIC = ("xz.1.gz", "bzip2.1.gz", "Apache-2.0.txt")
PRIVATE = "BSD.txt"
LEGAL = "legal"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        assert a.ingest([str(FILES / name) for name in PUBLIC]).ingested == len(PUBLIC)
        assert a.ingest([str(FILES / PRIVATE)], acl=[f"group:{LEGAL}"]).ingested == 1
        yield a


def _step_types(agent: KnowledgeAgent, query_id: str) -> list[str]:
    steps = read_trace(agent.store, query_id, OPERATOR).to_json()["steps"]
    return [str(s["type"]) for s in steps]


def _files(answer_citations: object) -> set[str]:
    return {Path(str(c.uri)).name for c in answer_citations}  # type: ignore[attr-defined]


def test_each_side_is_quoted_from_its_own_manual(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Is xz better than bzip2 at compressing?")
    assert _step_types(agent, answer.query_id) == ["compare"]
    lines = answer.answer.splitlines()
    assert "xz:" in lines and "bzip2:" in lines
    xz = "\n".join(lines[lines.index("xz:") : lines.index("bzip2:")])
    assert "comparable or better compression ratio" in xz
    assert "XZ (ORG)" not in answer.answer  # no entity profile
    assert _files(answer.citations) == {"xz.1.gz", "bzip2.1.gz"}


def test_a_side_nothing_names_is_said_to_be_so(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Which is faster, xz or brotli?")
    assert _step_types(agent, answer.query_id) == ["compare"]
    assert "brotli: I found nothing you are allowed to read about it." in answer.answer
    assert _files(answer.citations) == {"xz.1.gz"}


def test_a_side_the_asker_may_not_read_is_not_quoted(agent: KnowledgeAgent) -> None:
    question = "What distinguishes the Apache License from the BSD license?"
    member = agent.ask(question, user="ada", groups=[LEGAL])
    assert _step_types(agent, member.query_id) == ["compare"]
    assert {"Apache-2.0.txt", PRIVATE} <= _files(member.citations)
    assert "Redistributions" in member.answer  # the BSD licence's own conditions
    outsider = agent.ask(question, user="brian")
    assert PRIVATE not in _files(outsider.citations)
    assert "Redistributions" not in outsider.answer
    assert "Apache-2.0.txt" in _files(outsider.citations)
