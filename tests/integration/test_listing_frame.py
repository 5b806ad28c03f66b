"""A content question whose words name files is answered from the passages, not by a listing
(both engines; kgrag/planner/listing_frame.py).

Tried on a folder of man pages: "Which files does the avahi daemon read at startup?" was read as
a listing (the intent classifier weighs its words, "which files"), and the answer was the list
of documents about "daemon read startup": avahi-daemon(8) and the first words of its NAME
section, not the files the daemon reads. The grammar says the files are what the daemon reads:
an object question whose subject is not the collection.
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

PAGES = Path(__file__).resolve().parents[1] / "data" / "listing_frame"


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        report = a.ingest([str(p) for p in sorted(PAGES.glob("*.gz"))])
        assert report.ingested == 2, report.failures
        yield a


def _step_types(agent: KnowledgeAgent, query_id: str) -> list[str]:
    steps = read_trace(agent.store, query_id, OPERATOR).to_json()["steps"]
    return [str(s["type"]) for s in steps]


def test_what_the_daemon_reads_is_quoted_from_its_manual(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Which files does the avahi daemon read at startup?")
    assert "list_documents" not in _step_types(agent, answer.query_id)
    assert "Upon startup avahi-daemon interprets its configuration file" in answer.answer
    assert "/etc/avahi/avahi-daemon.conf" in answer.answer
    assert answer.citations and answer.citations[0].title == "avahi-daemon(8)"


def test_which_files_the_collection_holds_is_still_a_listing(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What files do you have about avahi?")
    assert _step_types(agent, answer.query_id) == ["list_documents"]
    assert {c.title for c in answer.citations} == {"avahi-daemon(8)", "avahi.hosts(5)"}
