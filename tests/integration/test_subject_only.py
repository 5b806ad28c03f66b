"""Evidence that holds only what a question is about, and nothing of what it asks about it, on
both engines (BENCHMARKS.md, "A ninth folder").

- "What is the capital of Australia?" on the tz database's real ``zone1970.tab``: the rows name
  Australia ("AU -4253+14719 Australia/Hobart Tasmania"), none says "capital"; "Who founded
  NVIDIA?" on pci.ids' vendor line ("10de NVIDIA Corporation"). Both were answered from those
  lines (the ninth folder's Q18 and Q19); they abstain: the evidence holds the one thing each
  names and no word it asks with besides, as written or written otherwise (kgrag.agent.relation:
  "Who keeps ...?" over "... is kept by ..." is still answered, tests/integration/
  test_async_api.py).
- "Which version of espeak-ng introduced SSML support?" on eSpeak NG's real man page: the quoted
  lines name neither espeak-ng's SSML nor a version of it ("espeak-ng --voices List all voices"),
  and the quote-names gate let them pass as a hop from the page's own SSML paragraph, which
  names "espeak-ng", the quoted passage's title. A passage of the same document is no hop.

Questions the files answer are still answered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from tests.support.answered import assert_abstained, assert_answered_from, folder_agent
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "subject_only"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    yield from folder_agent(module_engine, DATA, ["zone1970.tab", "espeak-ng.1.gz", "pci.ids"])


def test_quotes_from_the_subjects_own_document_are_no_hop(agent: KnowledgeAgent) -> None:
    found = agent.ask("Which version of espeak-ng introduced SSML support?", admin=True)
    assert_abstained(found)


@pytest.mark.parametrize("question", ["What is the capital of Australia?", "Who founded NVIDIA?"])
def test_evidence_holding_the_name_alone_does_not_answer(
    agent: KnowledgeAgent, question: str
) -> None:
    found = agent.ask(question, admin=True)
    assert_abstained(found)
    assert found.support is not None and found.support.beyond_names is False, found.support


@pytest.mark.parametrize(
    ("question", "words", "file"),
    [
        ("What are the coordinates of the Asia/Kabul time zone?", "+3431+06912", "zone1970.tab"),
        ("Which time zone covers Tasmania?", "Australia/Hobart", "zone1970.tab"),
        ("How do I make espeak-ng read SSML?", "SSML", "espeak-ng.1.gz"),
        ("Which vendor has the PCI vendor ID 10de?", "NVIDIA Corporation", "pci.ids"),
    ],
)
def test_questions_the_files_answer_are_answered(
    agent: KnowledgeAgent, question: str, words: str, file: str
) -> None:
    assert_answered_from(agent.ask(question, admin=True), words, file)
