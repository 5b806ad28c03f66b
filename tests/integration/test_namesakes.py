"""A passage about a namesake of what the question names is not quoted as the answer, on both
engines (tests/data/namesakes): "Where was Corey Taylor born?" over a passage about "John H.
Taylor" ("Born in Salt Lake City, Utah Territory, Taylor was the son of ...") and one naming
Corey Taylor in passing. Before, the answer quoted John H. Taylor's birthplace: the evidence held
every name and term of the question, and the quotes one of its names ("Taylor"). A question whose
passages shorten its name without naming anyone else ("GNU Make" in Debian's real make NEWS,
which says "GNU make" and "make"; "Sed" in sed's) is still answered (kgrag.agent.namesakes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from tests.support.answered import assert_abstained, assert_answered_from, folder_agent
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "namesakes"
FILES = ["john-h-taylor.txt", "stone-sour.txt", "sed-NEWS.gz", "make-NEWS.gz"]


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    yield from folder_agent(module_engine, DATA, FILES)


@pytest.mark.parametrize(
    "question", ["Where was Corey Taylor born?", "In which city was Corey Taylor born?"]
)
def test_a_namesakes_passage_does_not_answer(agent: KnowledgeAgent, question: str) -> None:
    found = agent.ask(question, admin=True)
    assert_abstained(found)
    assert found.support is not None and found.support.namesake


@pytest.mark.parametrize(
    ("question", "words", "file"),
    [
        ("Which band does Corey Taylor sing in?", "Stone Sour", "stone-sour.txt"),
        (
            "What does the .EXTRA_PREREQS variable of GNU Make do?",
            "considered prerequisites",
            "make-NEWS.gz",
        ),
        (
            "What does GNU Make do with number signs inside a macro reference?",
            "Number signs",
            "make-NEWS.gz",
        ),
        (
            "What does Sed now print in a corner case of POSIX-unspecified behavior?",
            "POSIX",
            "sed-NEWS.gz",
        ),
    ],
)
def test_a_shortened_name_is_still_answered(
    agent: KnowledgeAgent, question: str, words: str, file: str
) -> None:
    assert_answered_from(agent.ask(question, admin=True), words, file)
