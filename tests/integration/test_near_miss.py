"""A question whose name is in the folder only in passing, and whose other words are in another
file, is not answered from that other file, on both engines: pandas' real ``pyproject.toml``
names ``postgresql`` in a list of optional dependencies, and lsof's real quick start says
"-P list port numbers instead of port service names." (tests/data/near_miss). Before, "What is
the default port of PostgreSQL?" was answered by quoting lsof's options: the evidence held every
name and term of the question, the quoted passages none of its names. Questions those files do
answer are still answered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.support import ABSTENTION
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "near_miss"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(DATA / "pandas-pyproject.toml"), str(DATA / "00QUICKSTART.gz")])
        assert report.ingested == 2, report.failures
        yield a


def test_a_name_only_in_passing_does_not_let_another_file_answer(agent: KnowledgeAgent) -> None:
    found = agent.ask("What is the default port of PostgreSQL?", admin=True)
    assert found.answer.startswith(ABSTENTION), found.answer
    assert not found.citations


@pytest.mark.parametrize(
    ("question", "words", "file"),
    [
        ("Which licence does pandas use?", "BSD-3-Clause", "pandas-pyproject.toml"),
        ("How do I make lsof list port numbers?", "port numbers", "00QUICKSTART.gz"),
    ],
)
def test_questions_the_files_answer_are_answered(
    agent: KnowledgeAgent, question: str, words: str, file: str
) -> None:
    found = agent.ask(question, admin=True)
    assert words in found.answer, found.answer
    assert file in {Path(c.uri or "").name for c in found.citations}, found.answer
