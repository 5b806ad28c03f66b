"""Documents on both engines: the pandoc-made DOCX, ODT, PPTX and EPUB and the hand-written HTML
page of tests/data/formats are ingested from one folder; their text, titles, headings, tables
(``Table`` nodes with rows), images and page (slide, chapter) numbers are in the graph, and a
question is answered from a DOCX table row and from PPTX speaker notes with a citation naming the
file and the row or slide. Bad documents (truncated, zip bombs, a million empty cells, a 50 MB
page) fail by name in the same run as a good one, which is ingested."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")
pytest.importorskip("selectolax", reason="the docs extra (selectolax, lxml) is not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.graph.store import GraphStore
from tests.support.demo_agent import offline_agent
from tests.support.documents_bad import (
    FORMATS,
    huge_html,
    million_cell_odt,
    one_byte_bomb,
    truncated,
)

NAMES = ("clockmaker.epub", "ferry.html", "lighthouse.docx", "orchard.odt", "review.pptx")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("documents")
    for name in NAMES:
        shutil.copy(FORMATS / name, target / name)
    return target


@pytest.fixture(scope="module")
def store(module_store: GraphStore) -> GraphStore:
    return module_store


@pytest.fixture(scope="module")
def agent(
    store: GraphStore, folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> KnowledgeAgent:
    a = offline_agent(store, tmp_path_factory.mktemp("images"))
    report = a.ingest([str(folder)])
    assert (report.ingested, report.failed, report.skipped) == (5, 0, 0), report
    return a


def _by_file(rows: list[dict[str, object]]) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        out.setdefault(Path(str(row["uri"])).name, []).append(row)
    return out


def test_documents_have_their_titles_and_types(store: GraphStore, agent: KnowledgeAgent) -> None:
    rows = store.read_freeform(
        "MATCH (d:Document) RETURN d.uri AS uri, d.title AS title, d.mime AS mime"
    )
    found = {Path(r["uri"]).name: (r["title"], r["mime"]) for r in rows}
    assert found == {
        "clockmaker.epub": ("The Clockmaker’s Guide", "application/epub+zip"),
        "ferry.html": ("Estuary Ferry Timetable", "text/html"),
        "lighthouse.docx": (
            "Lighthouse Keeping Manual",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ),
        "orchard.odt": (
            "Orchard Survey of Pellworth Farm",
            "application/vnd.oasis.opendocument.text",
        ),
        "review.pptx": (
            "Quarterly Review of the Ferry Service",
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        ),
    }


def test_text_keeps_headings_and_pages_and_drops_boilerplate(
    store: GraphStore, agent: KnowledgeAgent
) -> None:
    rows = store.read_freeform(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) WHERE NOT (c)-[:ROW_OF]->(:Table) "
        "RETURN d.uri AS uri, c.page AS page, c.text AS text ORDER BY c.position"
    )
    chunks = _by_file(rows)
    html = " ".join(str(r["text"]) for r in chunks["ferry.html"])
    assert "Departures" in html and "Bicycles travel free of charge" in html
    assert "All routes" not in html and "Download our app" not in html
    docx = " ".join(str(r["text"]) for r in chunks["lighthouse.docx"])
    assert "Daily Checks" in docx and "- Trim the wick to a flat edge" in docx
    # slides and chapters are pages: the speaker notes of slide 2 are on page 2
    slides = {r["page"]: str(r["text"]) for r in chunks["review.pptx"]}
    assert set(slides) == {1, 2, 3, 4}
    assert "Speaker notes: The Kestrel pump contract" in slides[2]
    chapters = {r["page"] for r in chunks["clockmaker.epub"]}
    assert chapters == {1, 2, 3, 4}
    assert all(r["page"] is None for r in chunks["orchard.odt"] + chunks["lighthouse.docx"])


def test_tables_and_images_are_stored_with_their_places(
    store: GraphStore, agent: KnowledgeAgent
) -> None:
    tables = store.read_freeform(
        "MATCH (t:Table)-[:PART_OF]->(d:Document) OPTIONAL MATCH (c:Chunk)-[:ROW_OF]->(t) "
        "RETURN d.uri AS uri, t.page AS page, t.caption AS caption, t.header AS header, "
        "t.row_count AS rows, count(c) AS chunks"
    )
    found = {
        Path(r["uri"]).name: (r["page"], r["caption"], list(r["header"]), r["rows"], r["chunks"])
        for r in tables
    }
    assert found == {
        "clockmaker.epub": (3, "Mainsprings", ["Movement", "Mainspring turns"], 2, 2),
        "ferry.html": (
            None,
            "Weekday departures",
            ["Sailing", "Saltmarsh Quay", "Heron Point"],
            2,
            2,
        ),
        "lighthouse.docx": (None, "Lamp Wattage", ["Lamp", "2022", "2023"], 2, 2),
        "orchard.odt": (None, "Harvest Yields", ["Variety", "Trees", "Tonnes in 2023"], 2, 2),
        "review.pptx": (3, "Crossings per Vessel", ["Vessel", "Q1", "Q2"], 2, 2),
    }
    images = store.read_freeform(
        "MATCH (i:Image)-[:PART_OF]->(d:Document) RETURN d.uri AS uri, i.page AS page, "
        "i.width AS width"
    )
    placed = sorted((Path(r["uri"]).name, r["page"], r["width"]) for r in images)
    assert placed == [
        ("clockmaker.epub", 4, 96),
        ("lighthouse.docx", None, 96),
        ("orchard.odt", None, 96),
        ("review.pptx", 4, 96),
    ]


def test_a_docx_table_cell_is_answered_and_cited_by_table_and_row(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What is the wattage of the Main beacon in the 2023 column?")
    assert "2023: 1200 W" in answer.answer, answer.answer
    first = answer.citations[0]
    assert first.uri is not None and first.uri.endswith("lighthouse.docx"), first
    assert (first.table, first.row, first.page) == (1, 2, None), first


def test_speaker_notes_are_answered_and_cited_by_slide(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Who renewed the Kestrel pump contract?")
    assert "Barrowdale Engineering" in answer.answer, answer.answer
    first = answer.citations[0]
    assert first.uri is not None and first.uri.endswith("review.pptx"), first
    assert first.page == 2, first
    assert "p. 2" in answer.answer


def test_bad_documents_fail_by_name_and_the_good_one_is_ingested(
    agent: KnowledgeAgent, store: GraphStore, tmp_path: Path
) -> None:
    before = store.read_freeform("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    truncated(FORMATS / "lighthouse.docx", tmp_path / "partial.docx")
    one_byte_bomb(FORMATS / "clockmaker.epub", tmp_path / "bomb.epub", "EPUB/text/ch002.xhtml")
    million_cell_odt(tmp_path / "grid.odt")
    huge_html(tmp_path / "dump.html")
    (tmp_path / "notice.html").write_text(
        "<html><head><title>Quay notice</title></head><body><nav>Home</nav><main>"
        "<p>The Saltmarsh Quay gangway is repainted by Odalys Penhallow in March.</p>"
        "</main></body></html>",
        encoding="utf-8",
    )
    report = agent.ingest([str(tmp_path)])
    reasons = {Path(f.path).name: f.reason for f in report.failures}
    assert set(reasons) == {"partial.docx", "bomb.epub", "grid.odt", "dump.html"}, reasons
    assert reasons["partial.docx"].startswith("corrupt or unreadable DOCX")
    assert "(a zip bomb)" in reasons["bomb.epub"]
    assert reasons["grid.odt"].startswith("too many table cells")
    assert reasons["dump.html"].startswith("HTML page is ")
    assert report.ingested == 1
    after = store.read_freeform("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    per_file = store.read_freeform(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN d.uri AS uri, count(c) AS n"
    )
    assert after == before + 1, (before, per_file)
    answer = agent.ask("Who repaints the Saltmarsh Quay gangway?")
    assert "Odalys Penhallow" in answer.answer, answer.answer
    assert answer.citations[0].uri is not None
    assert answer.citations[0].uri.endswith("notice.html")
