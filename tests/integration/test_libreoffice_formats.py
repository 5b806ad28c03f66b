"""Legacy Office and OpenDocument files read through LibreOffice, on both engines: a .doc, .xls,
.ppt, .ods and .odp (tests/data/formats, saved by LibreOffice 7.4 from the DOCX, XLSX and PPTX
fixtures) are ingested from one folder with a damaged .doc and a damaged .xls; the good ones are
stored under their own file names and types and answered with citations naming them (a workbook
row, a slide's speaker notes); the damaged ones fail by name and store nothing; ingesting the
folder again adds nothing."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.graph.store import GraphStore
from kgrag.ingest.formats.libreoffice import soffice
from tests.support.demo_agent import offline_agent
from tests.support.documents_bad import FORMATS, truncated

if soffice() is None:  # scripts/setup.sh installs it; say so rather than pass without testing
    pytest.fail("LibreOffice (soffice) is not installed: run make setup", pytrace=False)

GOOD = {
    "orchard_lo.doc": ("Orchard Survey of Pellworth Farm", "application/msword"),
    "orchard_yield.xls": ("orchard yield", "application/vnd.ms-excel"),
    "orchard_yield.ods": ("orchard yield", "application/vnd.oasis.opendocument.spreadsheet"),
    "review_lo.ppt": ("Quarterly Review of the Ferry Service", "application/vnd.ms-powerpoint"),
    "review_lo.odp": (
        "Quarterly Review of the Ferry Service",
        "application/vnd.oasis.opendocument.presentation",
    ),
}


def _scrambled(source: Path, target: Path) -> Path:
    """``source`` with every byte after its OLE header replaced: the header still says Excel."""
    data = bytearray(source.read_bytes())
    rng = random.Random(7)
    for i in range(512, len(data)):
        data[i] = rng.randrange(256)
    target.write_bytes(bytes(data))
    return target


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("office")
    for name in GOOD:
        shutil.copy(FORMATS / name, target / name)
    truncated(FORMATS / "orchard_lo.doc", target / "partial.doc")
    _scrambled(FORMATS / "orchard_yield.xls", target / "scrambled.xls")
    return target


@pytest.fixture(scope="module")
def agent(
    module_store: GraphStore, folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> KnowledgeAgent:
    a = offline_agent(module_store, tmp_path_factory.mktemp("images"))
    report = a.ingest([str(folder)])
    reasons = {Path(f.path).name: f.reason for f in report.failures}
    assert (report.ingested, report.skipped) == (5, 0), report
    assert set(reasons) == {"partial.doc", "scrambled.xls"}, reasons
    assert reasons["partial.doc"].startswith(
        "LibreOffice could not read it as a Word 97-2003 document"
    ), reasons
    assert reasons["scrambled.xls"].startswith(
        "LibreOffice could not read it as an Excel 97-2003 workbook"
    ), reasons
    return a


def test_each_file_is_stored_under_its_own_name_and_type(
    module_store: GraphStore, agent: KnowledgeAgent
) -> None:
    rows = module_store.read_freeform(
        "MATCH (d:Document) RETURN d.uri AS uri, d.title AS title, d.mime AS mime"
    )
    assert {Path(r["uri"]).name: (r["title"], r["mime"]) for r in rows} == GOOD
    tables = module_store.read_freeform(
        "MATCH (t:Table)-[:PART_OF]->(d:Document) RETURN d.uri AS uri, count(t) AS n"
    )
    per_file = {Path(r["uri"]).name: r["n"] for r in tables}
    # both sheets of each workbook, the .doc's table, each deck's table on slide 3
    assert per_file == {
        "orchard_yield.xls": 2,
        "orchard_yield.ods": 2,
        "orchard_lo.doc": 1,
        "review_lo.ppt": 1,
        "review_lo.odp": 1,
    }, per_file


def test_a_workbook_row_is_answered_and_cited_by_its_legacy_file(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Who is the orchard manager?")
    assert "Mara Quill" in answer.answer, answer.answer
    cited = {Path(c.uri).name for c in answer.citations if c.uri}
    assert cited & {"orchard_yield.xls", "orchard_yield.ods"}, answer.citations


def test_speaker_notes_of_a_ppt_are_answered_and_cited_by_slide(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Who renewed the Kestrel pump contract?")
    assert "Barrowdale Engineering" in answer.answer, answer.answer
    first = answer.citations[0]
    assert first.uri is not None and Path(first.uri).name in {"review_lo.ppt", "review_lo.odp"}
    assert first.page == 2, first


def test_ingesting_the_folder_again_adds_nothing(
    module_store: GraphStore, agent: KnowledgeAgent, folder: Path
) -> None:
    count = "MATCH (n) WHERE n:Document OR n:Chunk OR n:Table RETURN count(n) AS n"
    before = module_store.read_freeform(count)[0]["n"]
    report = agent.ingest([str(folder)])
    assert report.ingested == 0 and len(report.failures) == 2, report
    assert module_store.read_freeform(count)[0]["n"] == before
