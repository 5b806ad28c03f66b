"""OCR on both engines: a scanned PDF (a text PDF rendered to images and wrapped back as an
image-only PDF) is searchable and its answer cited by page; a screenshot of text (drawn with
Pillow) gets its text as a chunk of its document beside its CLIP image; a picture without text
gets none."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from PIL import Image, ImageDraw, ImageFont

from kgrag.agent.agent import KnowledgeAgent
from kgrag.demo.shapes import draw_shape
from kgrag.graph.store import GraphStore
from kgrag.ingest import ocr
from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs
from tests.support.demo_agent import offline_agent
from tests.support.pdfgen import write_scanned_pdf

SCAN_PAGES = [
    "The harbour log of Port Wenlock opens in 1887 with a storm that sank two fishing boats.",
    "The lighthouse keeper Bartholomew Ashgrove lit the lamp with colza oil every evening.",
]
SCREENSHOT_LINES = [
    "Error 4711: the nightly backup of volume ORION failed",
    "because the disk quota of 500 GB was exceeded.",
    "Contact the storage team before Friday.",
]


def screenshot(path: Path) -> Path:
    image = Image.new("RGB", (1200, 400), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=28)
    for i, line in enumerate(SCREENSHOT_LINES):
        draw.text((40, 40 + 60 * i), line, fill="black", font=font)
    image.save(path)
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("ocr")
    shape = folder / "red_circle.png"
    draw_shape("red", "circle", random.Random(1)).save(shape)
    return {
        "scan": write_scanned_pdf(folder / "harbour_scan.pdf", SCAN_PAGES),
        "shot": screenshot(folder / "backup_error.png"),
        "shape": shape,
    }


@pytest.fixture(scope="module")
def store(module_store: GraphStore) -> GraphStore:
    return module_store


@pytest.fixture(scope="module")
def agent(store: GraphStore, corpus: dict[str, Path], tmp_path_factory: pytest.TempPathFactory):
    a = offline_agent(store, tmp_path_factory.mktemp("images"))
    report = a.ingest([str(p) for p in corpus.values()])
    assert (report.ingested, report.failed) == (3, 0), report.failures
    return a


def test_the_scan_has_no_text_layer_and_ocr_reads_it(corpus: dict[str, Path]) -> None:
    import pypdf

    reader = pypdf.PdfReader(corpus["scan"])
    assert all(not (p.extract_text() or "").strip() for p in reader.pages)
    doc = parse(expand_inputs([str(corpus["scan"])], ()).items[0], 10**8)
    assert [p.number for p in doc.pages] == [1, 2]
    assert "Bartholomew Ashgrove" in doc.pages[1].text
    assert not parse(
        expand_inputs([str(corpus["scan"])], ()).items[0], 10**8, ocr_enabled=False
    ).pages


def test_scanned_pdf_is_searchable_and_cited_by_page(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Who lit the lighthouse lamp with colza oil?")
    assert "Bartholomew Ashgrove" in answer.answer, answer.answer
    first = answer.citations[0]
    assert first.uri is not None and first.uri.endswith("harbour_scan.pdf")
    assert (first.kind, first.page) == ("chunk", 2)


def test_screenshot_text_is_a_chunk_beside_its_clip_image(
    agent: KnowledgeAgent, store: GraphStore
) -> None:
    answer = agent.ask("Why did the backup of volume ORION fail?")
    assert "disk quota of 500 GB" in answer.answer, answer.answer
    assert answer.citations[0].uri is not None
    assert answer.citations[0].uri.endswith("backup_error.png")
    rows = store.read_freeform(
        "MATCH (d:Document) WHERE d.uri ENDS WITH $name "
        "OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d) OPTIONAL MATCH (i:Image)-[:PART_OF]->(d) "
        "OPTIONAL MATCH (i)-[:NEAR]-(n:Chunk) "
        "RETURN count(DISTINCT c) AS chunks, count(DISTINCT i) AS images, "
        "count(DISTINCT n) AS near, collect(DISTINCT i.embedding IS NOT NULL) AS embedded",
        {"name": "backup_error.png"},
    )
    found = (rows[0]["chunks"], rows[0]["images"], rows[0]["near"], rows[0]["embedded"])
    assert found == (1, 1, 1, [True])


def test_a_picture_without_text_gets_no_ocr_text(corpus: dict[str, Path]) -> None:
    shape = corpus["shape"]
    assert ocr.image_text(shape, shape.read_bytes()) is None
    shot = corpus["shot"]
    assert "ORION" in (ocr.image_text(shot, shot.read_bytes()) or "")
