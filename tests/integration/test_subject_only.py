"""Evidence that holds only what a question is about, and nothing of what it asks about it, does
not answer it, on both engines (BENCHMARKS.md, "A ninth folder").

- "What is the capital of Australia?" on the tz database's real ``zone1970.tab``: the rows name
  Australia ("AU -4253+14719 Australia/Hobart Tasmania"), none says "capital". With one name and
  one other content word, the evidence scored 0.75 (all names, half the terms), over the 0.7
  floor, and the Hobart row was quoted; with two other words missing it falls under the floor.
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
from kgrag.agent.support import ABSTENTION
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "subject_only"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(DATA / "zone1970.tab"), str(DATA / "espeak-ng.1.gz")])
        assert report.ingested == 2, report.failures
        yield a


@pytest.mark.parametrize(
    "question",
    ["What is the capital of Australia?", "Which version of espeak-ng introduced SSML support?"],
)
def test_evidence_about_the_subject_alone_does_not_answer(
    agent: KnowledgeAgent, question: str
) -> None:
    found = agent.ask(question, admin=True)
    assert found.answer.startswith(ABSTENTION), found.answer
    assert not found.citations


@pytest.mark.parametrize(
    ("question", "words", "file"),
    [
        ("What are the coordinates of the Asia/Kabul time zone?", "+3431+06912", "zone1970.tab"),
        ("Which time zone covers Tasmania?", "Australia/Hobart", "zone1970.tab"),
        ("How do I make espeak-ng read SSML?", "SSML", "espeak-ng.1.gz"),
    ],
)
def test_questions_the_files_answer_are_answered(
    agent: KnowledgeAgent, question: str, words: str, file: str
) -> None:
    found = agent.ask(question, admin=True)
    assert words in found.answer, found.answer
    assert file in {Path(c.uri or "").name for c in found.citations}, found.answer
