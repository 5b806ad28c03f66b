"""A file skipped as a copy of a stored document is another name of it (both engines).

Found on a real folder: the Debian logo was kept as ``archive/swirl.png`` and its copy
``debian-logo.png`` skipped as a duplicate; "Show me the Debian logo." then found nothing, the
copy's name being kept nowhere. The skipped path is now one of the stored document's other names
(``also_uris``): picture names and the document listing read them, no second document is
stored, a reader outside the ACL finds nothing by them, ingesting the folder again adds nothing,
and a copy changed into another picture becomes a document of its own and no longer a name of
the first. Real pictures (tests/data/other_names/SOURCE.md), real store, real models.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR, AccessContext
from kgrag.executor.document_handlers import documents_about
from tests.security.principals import ReadAs
from tests.support.demo_agent import offline_agent
from tests.support.engines import Engine

DATA = Path(__file__).parents[1] / "data" / "other_names"
LOGO = "Show me the Debian logo."
ACL = ["group:design"]
DESIGNER = {"user": "dee", "groups": ["design"]}


def _copies(agent: KnowledgeAgent, folder: Path) -> Path:
    """The logo as ``old copies/swirl.png``, ingested first (kept), then as ``debian-logo.png``
    in the folder holding it, ingested whole."""
    (folder / "old copies").mkdir()
    shutil.copyfile(DATA / "debian-logo.png", folder / "old copies" / "swirl.png")
    report = agent.ingest([str(folder / "old copies")], acl=ACL)
    assert report.failed == 0 and report.ingested == 1, report
    shutil.copyfile(DATA / "debian-logo.png", folder / "debian-logo.png")
    return folder


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    agent = offline_agent(module_engine.open())
    report = agent.ingest([str(_copies(agent, tmp_path_factory.mktemp("names")))], acl=ACL)
    assert report.failed == 0 and report.ingested == 0, report
    skips = sorted((Path(s.path).name, s.kind) for s in report.skips)
    assert skips == [("debian-logo.png", "duplicate"), ("swirl.png", "unchanged")]
    yield agent
    agent.store.close()


def _pictures(agent: KnowledgeAgent, **who: object) -> list[str]:
    answer = agent.ask(LOGO, **who)  # type: ignore[arg-type]
    return [Path(c.uri or "").name for c in answer.citations if c.kind == "image"]


def _about(agent: KnowledgeAgent, access: AccessContext) -> list[dict[str, object]]:
    return documents_about(ReadAs(agent.store, access), ["debian", "logo"], [], 10)


def test_the_name_of_a_skipped_copy_finds_the_stored_picture(agent: KnowledgeAgent) -> None:
    assert _pictures(agent, **DESIGNER) == ["swirl.png"]
    rows = _about(agent, OPERATOR)
    assert [Path(str(r["uri"])).name for r in rows] == ["swirl.png"]  # one document, not two
    assert [Path(u).name for u in rows[0]["also_uris"]] == ["debian-logo.png"]  # type: ignore[attr-defined]


def test_a_reader_outside_the_acl_finds_nothing_by_the_other_name(agent: KnowledgeAgent) -> None:
    assert _pictures(agent, user="ann") == []
    assert _about(agent, AccessContext(user="ann")) == []


def test_ingesting_again_adds_the_name_once_and_a_changed_copy_is_a_name_no_more(
    engine: Engine, tmp_path: Path
) -> None:
    agent = offline_agent(engine.open())
    try:
        folder = tmp_path / "files"
        folder.mkdir()
        folder = _copies(agent, folder)
        for _ in range(2):
            report = agent.ingest([str(folder)], acl=ACL)
            assert report.failed == 0 and report.skipped == 2, report
        assert [len(r["also_uris"]) for r in _about(agent, OPERATOR)] == [1]  # type: ignore[arg-type]
        shutil.copyfile(DATA / "chromium.png", folder / "debian-logo.png")
        report = agent.ingest([str(folder)], acl=ACL)
        assert report.ingested == 1 and report.failed == 0, report
        by_name = {Path(str(r["uri"])).name: r["also_uris"] for r in _about(agent, OPERATOR)}
        assert by_name == {"debian-logo.png": []}  # swirl.png has no name with these words
        assert _pictures(agent, **DESIGNER) == ["debian-logo.png"]
    finally:
        agent.store.close()
