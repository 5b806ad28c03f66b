"""JSON written on one line is ingested and answers, on both engines (real files:
tests/data/minified_json/SOURCE.md). Before, both files were skipped as machine-made text (a
line over 4,096 characters) and the script code's question found nothing; a file that starts
like JSON on a long line but is none is still skipped, its reason named."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from tests.support.demo_agent import offline_agent
from tests.support.engines import Engine

DATA = Path(__file__).parents[1] / "data" / "minified_json"


@pytest.fixture(scope="module")
def ingested(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[KnowledgeAgent, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("minified-json")
    for name in ("status.json", "iso_15924.min.json"):
        shutil.copy(DATA / name, folder)
    (folder / "cut.json").write_bytes((DATA / "status.json").read_bytes()[:5000])
    agent = offline_agent(module_engine.open())
    report = agent.ingest([str(folder)])
    assert (report.ingested, report.failed) == (2, 0), (report.failures, report.skips)
    yield agent, {Path(s.path).name: s.detail for s in report.skips}
    agent.store.close()


def test_json_on_one_line_answers(ingested: tuple[KnowledgeAgent, dict[str, str]]) -> None:
    agent, _ = ingested
    answer = agent.ask("What is the ISO 15924 numeric code of the Cyrillic script?")
    assert "Cyrillic" in answer.answer and "{" not in answer.answer, answer.answer
    assert {Path(c.uri or "").name for c in answer.citations} == {"iso_15924.min.json"}


def test_a_long_line_that_is_no_json_is_skipped_with_its_reason(
    ingested: tuple[KnowledgeAgent, dict[str, str]],
) -> None:
    _, skipped = ingested
    assert list(skipped) == ["cut.json"]
    assert "a line over 4,096 characters that is not JSON" in skipped["cut.json"]
