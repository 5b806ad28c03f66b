"""A question asking for a quantity ("How much does ... cost?", "How many ...?") is answered
only by quotes stating one, on both engines, over real files of this machine: the Prometheus
node exporter's README and NOTICE (/usr/share/doc/prometheus-node-exporter) and savelog(8).
Before, "How much does a commercial support contract for the Prometheus node exporter cost?"
was answered by quoting the README's build commands (the twelfth real folder, BENCHMARKS.md);
the README names no price. A quantity the files state is still quoted."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from tests.support.answered import assert_abstained, assert_answered_from, folder_agent
from tests.support.engines import Engine

FILES = [
    Path("/usr/share/doc/prometheus-node-exporter/README.md.gz"),
    Path("/usr/share/doc/prometheus-node-exporter/NOTICE"),
    Path("/usr/share/man/man8/savelog.8.gz"),
]


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    missing = [str(p) for p in FILES if not p.exists()]
    if missing:
        pytest.skip(f"not installed on this machine: {missing}")
    folder = tmp_path_factory.mktemp("quantity")
    for path in FILES:
        shutil.copy(path, folder / path.name)
    yield from folder_agent(module_engine, folder, [p.name for p in FILES])


def test_a_price_no_file_states_is_not_answered(agent: KnowledgeAgent) -> None:
    question = "How much does a commercial support contract for the Prometheus node exporter cost?"
    found = agent.ask(question, admin=True)
    assert_abstained(found)
    assert found.exit_reason == "not_found"


def test_a_number_a_file_states_is_quoted(agent: KnowledgeAgent) -> None:
    found = agent.ask("How many versions of a log file does savelog keep by default?", admin=True)
    assert_answered_from(found, "(default: 7)", "savelog.8.gz")
