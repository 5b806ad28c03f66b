"""A quantity asked without "how many": the sixteenth real folder's configuration files and
hardware notes (tests/data/sixteenth_folder: PulseAudio's client.conf, libusb's and the i965
driver's READMEs, four files under /etc), both engines.

"What is the default PulseAudio shared memory size in megabytes on macOS?", which nothing there
answers (client.conf says "usually 64 MiB", of no system in particular), quoted libusb's "...
access from Linux, macOS, Windows ..." and PulseAudio's licence: no amount. A question naming
the quantity's noun after a few words ("the default ... size") or the unit it wants ("in
megabytes") asks a quantity (kgrag.agent.quantity), and an answer stating none abstains.
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
FILES = (
    "libusb README",
    "i965 va driver README",
    "pulse client.conf",
    "debconf.conf",
    "e2scrub.conf",
    "wgetrc",
    "xattr.conf",
)


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeAgent:
    return ingested_copy(module_store, tmp_path_factory, DATA, FILES)


def test_a_size_asked_in_megabytes_is_not_answered_without_an_amount(
    agent: KnowledgeAgent,
) -> None:
    answer = agent.ask("What is the default PulseAudio shared memory size in megabytes on macOS?")
    assert answer.exit_reason == "not_found", answer.answer
    assert not answer.citations, answer.answer


def test_a_count_the_files_state_is_still_answered(agent: KnowledgeAgent) -> None:
    answer = agent.ask("How many times does wget retry a download by default?")
    assert answer.exit_reason != "not_found", answer.answer
    assert "20" in answer.answer, answer.answer
