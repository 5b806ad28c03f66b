"""A word at the start of a wrapped line is found by the lexical stage, and a question that names
nothing is answered from the passage holding its word, on both engines (tests/data/line_words:
moreutils' real README, OpenSSH's real README.dns; the eighth folder of BENCHMARKS.md).

Before: RediSearch (FalkorDB's full-text index) does not split words at a line break, so in
"... a file\\nsponge: soak up standard input ..." "sponge" was no term of its own, the full-text
query found no chunk, and "What does sponge do?" was not found (the dense search ranks other
files' passages first). The dense passages then held no word of the question, and the answer
quoted the whole list of tools as one sentence. The OpenSSH question quoted the sentence
announcing the option ("... add the following option to the ssh configuration file ...:") and
not the option line after it, which has a heading's shape."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.support import ABSTENTION
from kgrag.core import AccessContext
from kgrag.executor.lexical import LEXICAL_TEMPLATE
from kgrag.modalities.text import default_text_embedder
from tests.support.answered import assert_abstained, cited_files
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "line_words"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(DATA / "moreutils-README"), str(DATA / "README.dns")])
        assert report.ingested == 2, report.failures
        yield a


@pytest.mark.parametrize("word", ["sponge", "vidir", "pee", "implementations"])
def test_the_first_word_of_a_line_is_found_by_the_full_text_index(
    agent: KnowledgeAgent, word: str
) -> None:
    rows = agent.store.read(
        f"templates/{LEXICAL_TEMPLATE}",
        {"query": word, "k": 10, **AccessContext(admin=True).params()},
    )
    assert any(word in r["text"] for r in rows), rows


@pytest.mark.parametrize(
    ("question", "quote"),
    [
        ("What does sponge do?", "sponge: soak up standard input and write to a file"),
        ("What does vidir do?", "vidir: edit a directory in your text editor"),
    ],
)
def test_a_question_naming_a_tool_in_lower_case_quotes_its_line(
    agent: KnowledgeAgent, question: str, quote: str
) -> None:
    found = agent.ask(question, admin=True)
    assert not found.answer.startswith(ABSTENTION), found.answer
    assert quote in found.answer, found.answer
    assert "combine: combine the lines" not in found.answer, found.answer
    assert cited_files(found) == {"moreutils-README"}


def test_what_a_colon_announces_is_quoted_even_when_it_looks_like_a_heading(
    agent: KnowledgeAgent,
) -> None:
    found = agent.ask("How do I make ssh verify host keys using DNS?", admin=True)
    assert "add the following option" in found.answer, found.answer
    assert "VerifyHostKeyDNS yes" in found.answer, found.answer


def test_a_question_about_nothing_there_is_still_not_found(agent: KnowledgeAgent) -> None:
    found = agent.ask("What is the boiling point of mercury?", admin=True)
    assert_abstained(found)
