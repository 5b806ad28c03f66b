"""Lexical search folds accents (kgrag.text.folding), on both engines: a question typed without
the accents ("Aschenbrodel", "Zurich", "Bjork", "Sao Paulo", "resume") finds the passage written
with them, and one typed with them finds the passage written without; ASCII text stores no
folded copy and is found as before. A store written before the folded text existed (its chunks
without it, migration 0011_folded_text unrecorded) is folded when it is opened."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine
from tests.support.lexical import lexical_hits
from tests.support.raw import as_before, open_migrates

MIGRATION = "0011_folded_text"
READER = AccessContext(user="reader")
FILES = {
    "fairy.txt": "Aschenbrödel is a Czech fairy tale film, shot at the castle of Moritzburg.\n",
    "institute.txt": (
        "The Kestrel Institute stands in Zürich. Its founder, Björk Gudmundsdottir from São "
        "Paulo, keeps a résumé of the prizes it won.\n"
    ),
    "bridge.txt": "The Pelican Bridge of Lucerne was painted by Jose Garcia in plain letters.\n",
    # an accented word first on a wrapped line: FalkorDB's index does not split at a line break
    "lake.txt": "The ferry crosses the lake towards\nGenève and stops at Nyon.\n",
}


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    folder = tmp_path_factory.mktemp("accents")
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(folder)])
        assert report.ingested == len(FILES), report.failures
        yield a


def _lexical_files(agent: KnowledgeAgent, question: str) -> set[str]:
    return {Path(str(h.uri)).name for h in lexical_hits(agent, question, READER)}


@pytest.mark.parametrize(
    ("question", "file"),
    [
        # typed without the accents, the text written with them ...
        ("Who made Aschenbrodel?", "fairy.txt"),
        ("Where is Zurich?", "institute.txt"),
        ("Who is Bjork?", "institute.txt"),
        ("Who came from Sao Paulo?", "institute.txt"),
        ("What does the resume list?", "institute.txt"),
        ("Where does the ferry go to Geneve?", "lake.txt"),
        # ... and typed with them, the text written without (or written with them too)
        ("Who is Björk Guðmundsdóttir?", "institute.txt"),
        ("What did José García paint?", "bridge.txt"),
        ("Where is Zürich?", "institute.txt"),
    ],
)
def test_a_question_finds_the_text_whichever_way_its_accents_are_written(
    agent: KnowledgeAgent, question: str, file: str
) -> None:
    assert _lexical_files(agent, question) == {file}


def test_ascii_text_is_found_as_before_and_stores_no_folded_copy(agent: KnowledgeAgent) -> None:
    assert _lexical_files(agent, "Which bridge is in Lucerne?") == {"bridge.txt"}
    assert _lexical_files(agent, "Where is Moritzburg?") == {"fairy.txt"}
    rows = agent.store.read_freeform(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN d.uri AS uri, c.text_folded AS folded"
    )
    folded = {Path(r["uri"]).name: r["folded"] for r in rows}
    assert folded["bridge.txt"] is None
    assert folded["fairy.txt"].startswith("Aschenbrodel is a Czech")


def test_a_store_written_before_folding_is_folded_when_opened(
    agent: KnowledgeAgent, module_engine: Engine
) -> None:
    as_before(agent.store, MIGRATION, "MATCH (c:Chunk) REMOVE c.text_folded")
    assert _lexical_files(agent, "Who made Aschenbrodel?") == set()
    open_migrates(module_engine, MIGRATION)
    assert _lexical_files(agent, "Who made Aschenbrodel?") == {"fairy.txt"}
