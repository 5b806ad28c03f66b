"""Two sentence choices of the extractive answer that missed on the sixteenth real folder
(BENCHMARKS.md "A sixteenth folder"), on real files of this machine and both engines:

- the right document first, and its first line quoted: "https://github.com/google/double-conversion"
  holds, of "Which build tools can double-conversion be built with?", only the name its file
  bears (``double-conversion README.md``), as does every sentence naming the project, and it is
  nearest in meaning; "This library can be built with scons or cmake." was fourth. A sentence
  holding only its file's name no longer leads (kgrag.agent.synthesis.names_only_document);
- "What is libidn2 used for?" quoted "Libidn2 is a free software implementation of IDNA2008,
  ..." and then sentences of another file, not the next sentence "Its purpose is to encode and
  decode internationalized domain names.": a possessive ("Its", "Their") now refers back to the
  sentence before it as "It" and "This" did.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.graph.store import GraphStore
from tests.support.folders import ingested_copy

DATA = Path(__file__).parents[1] / "data" / "sixteenth_folder"
FILES = ("double-conversion README.md", "libidn2 README.md.gz", "errorref.txt.gz")


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeAgent:
    return ingested_copy(module_store, tmp_path_factory, DATA, FILES)


def _quoted(answer: str) -> list[str]:
    return [line for line in answer.splitlines() if line.startswith("- ")]


def test_a_line_naming_only_its_file_does_not_lead(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Which build tools can double-conversion be built with?")
    assert answer.exit_reason != "not_found", answer.answer
    first = _quoted(answer.answer)[0]
    assert "can be built with scons or cmake" in first, answer.answer


def test_a_possessive_continues_the_sentence_before(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What is libidn2 used for?")
    quoted = _quoted(answer.answer)
    assert "Libidn2 is a free software implementation" in quoted[0], answer.answer
    assert "Its purpose is to encode and decode internationalized" in quoted[1], answer.answer
