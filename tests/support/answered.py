"""Answer tests over a folder of real files (tests/data/NAME): an agent over them on one engine,
and the two outcomes such a test asserts: answered from a given file, or abstained."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.answer import Answer
from kgrag.agent.support import ABSTENTION
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

__all__ = ["assert_abstained", "assert_answered_from", "cited_files", "folder_agent"]


def folder_agent(engine: Engine, folder: Path, names: Sequence[str]) -> Iterator[KnowledgeAgent]:
    """An agent over ``names`` of ``folder`` in ``engine``'s store (for a module fixture:
    ``yield from folder_agent(...)``); every file must be ingested."""
    store = engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as agent:
        report = agent.ingest([str(folder / name) for name in names])
        assert report.ingested == len(names), report.failures
        yield agent


def cited_files(found: Answer) -> set[str]:
    """The names of the files the answer cites."""
    return {Path(c.uri or "").name for c in found.citations}


def assert_answered_from(found: Answer, words: str, file: str) -> None:
    """The answer says ``words`` and cites the file named ``file``."""
    assert words in found.answer, found.answer
    assert file in cited_files(found), found.answer


def assert_abstained(found: Answer) -> None:
    """The answer is the abstention, citing nothing."""
    assert found.answer.startswith(ABSTENTION), found.answer
    assert not found.citations
