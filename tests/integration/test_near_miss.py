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
from tests.support.answered import assert_abstained, assert_answered_from, folder_agent
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "near_miss"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    yield from folder_agent(module_engine, DATA, ["pandas-pyproject.toml", "00QUICKSTART.gz"])


def test_a_name_only_in_passing_does_not_let_another_file_answer(agent: KnowledgeAgent) -> None:
    found = agent.ask("What is the default port of PostgreSQL?", admin=True)
    assert_abstained(found)


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
    assert_answered_from(agent.ask(question, admin=True), words, file)
