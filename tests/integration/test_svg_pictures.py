"""SVG drawings are pictures (both engines): drawn by resvg, embedded by CLIP, listed among the
pictures, and found by the words they hold.

Before, every ``.svg`` was skipped ("unsupported file type '.svg'": the eleventh real folder's
two diagrams). A real drawing from this machine (tests/data/svg: postgresql-common's package
dependency diagram, whose labels are ``<text>`` elements) and a logo made here (a ``<title>``, a
``<desc>`` and a ``<text>``) are ingested as images; bad SVGs (not XML, cut short, a PNG under an
``.svg`` name, an HTML page under one) each fail alone, named with what is wrong, storing nothing.
A gzipped drawing (``.svgz``: LibreOffice Basic's icon of this machine, gzipped as icon themes
ship them) is read as its ``.svg`` (before: skipped as an unsupported type); a gzip bomb and an
``.svgz`` that is not gzip fail alone, named.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")
pytest.importorskip("resvg_py", reason="the image extra (resvg-py) is not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.ingest.pipeline import IngestReport
from tests.integration.ingest_media import drawing
from tests.support.answered import cited_files
from tests.support.demo_agent import offline_agent
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data" / "svg"
LOGO = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">
  <title>Kestrel Harbour lighthouse logo</title>
  <desc>A red lighthouse on a rock, drawn for the ferry company.</desc>
  <rect width="64" height="64" fill="#bfe3ff"/>
  <polygon points="26,54 38,54 35,14 29,14" fill="#d22"/>
  <rect x="27" y="8" width="10" height="7" fill="#ffd400"/>
  <text x="4" y="62" font-size="6">Quayside Marine</text>
</svg>
"""
NOTES = "# Station notes\n\nThe pump room is cleaned every Monday by the night shift.\n"


def _bad_svgs(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (a bad .svg, words its reason must contain)."""
    folder.mkdir()
    real = (DATA / "dependencies.svg").read_bytes()
    cut = folder / "cut.svg"
    cut.write_bytes(real[: len(real) // 2])
    prose = folder / "prose.svg"
    prose.write_text("These are meeting notes, not a drawing.\n", "utf-8")
    png = folder / "really-a-png.svg"
    png.write_bytes(drawing(folder / "circle.png", "red", "circle").read_bytes())
    html = folder / "page.svg"
    html.write_text("<html><body><p>A saved page.</p></body></html>", "utf-8")
    for p in folder.iterdir():
        if p.suffix != ".svg":
            p.unlink()
    bomb = folder / "bomb.svgz"
    bomb.write_bytes(gzip.compress(b" " * 20_000_000, 9))
    noise = folder / "noise.svgz"
    noise.write_bytes(bytes(range(256)))
    return {
        "a gzip bomb": (bomb, "a gzip bomb?"),
        "not gzip": (noise, "not gzip data"),
        "cut short": (cut, "not valid XML"),
        "not XML": (prose, "not valid XML"),
        "a PNG": (png, "a PNG image"),
        "another XML root": (html, "root element is <html>"),
    }


@pytest.fixture(scope="module")
def ingested(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[KnowledgeAgent, IngestReport, dict[str, tuple[Path, str]]]]:
    folder = tmp_path_factory.mktemp("svg-pictures")
    (folder / "dependencies.svg").write_bytes((DATA / "dependencies.svg").read_bytes())
    (folder / "harbour-logo.svg").write_text(LOGO, "utf-8")
    (folder / "notes.md").write_text(NOTES, "utf-8")
    (folder / "libreoffice-basic.svgz").write_bytes((DATA / "libreoffice-basic.svgz").read_bytes())
    bad = _bad_svgs(tmp_path_factory.mktemp("svg-bad") / "bad")
    agent = offline_agent(module_engine.open(), tmp_path_factory.mktemp("svg-images"))
    good = agent.ingest([str(folder)])
    assert good.failed == 0 and good.ingested == 4, good
    report = agent.ingest([str(p) for p, _ in bad.values()])
    yield agent, report, bad
    agent.store.close()


def _documents(agent: KnowledgeAgent) -> dict[str, dict[str, object]]:
    rows = agent.store.read("document_list", {"principals": [], "admin": True})
    return {Path(str(r["uri"])).name: r for r in rows}


def test_svg_drawings_are_stored_as_pictures(
    ingested: tuple[KnowledgeAgent, IngestReport, dict[str, tuple[Path, str]]],
) -> None:
    agent, _, _ = ingested
    documents = _documents(agent)
    assert documents["dependencies.svg"]["modality"] == "image"
    assert documents["harbour-logo.svg"]["modality"] == "image"
    assert documents["harbour-logo.svg"]["title"] == "Kestrel Harbour lighthouse logo"
    images = agent.store.read_freeform(
        "MATCH (i:Image)-[:PART_OF]->(d:Document) RETURN d.uri AS uri, i.width AS width, "
        "i.height AS height, i.caption AS caption"
    )
    drawn = {Path(str(r["uri"])).name: r for r in images}
    assert drawn["harbour-logo.svg"]["width"] == drawn["harbour-logo.svg"]["height"] == 1024
    assert drawn["harbour-logo.svg"]["caption"] == "Kestrel Harbour lighthouse logo"
    assert drawn["dependencies.svg"]["width"] == 1024  # 65 x 24 cm, fitted into 1024 pixels
    assert documents["libreoffice-basic.svgz"]["modality"] == "image"
    assert documents["libreoffice-basic.svgz"]["mime"] == "image/svg+xml"
    assert drawn["libreoffice-basic.svgz"]["width"] == 1024


def test_the_pictures_listed_are_the_drawings(
    ingested: tuple[KnowledgeAgent, IngestReport, dict[str, tuple[Path, str]]],
) -> None:
    agent, _, _ = ingested
    answer = agent.ask("Which pictures do you have?", admin=True)
    assert cited_files(answer) == {
        "dependencies.svg",
        "harbour-logo.svg",
        "libreoffice-basic.svgz",
    }, answer.answer


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which picture shows the Kestrel Harbour lighthouse?", "harbour-logo.svg"),  # <title>
        ("Which picture says Quayside Marine?", "harbour-logo.svg"),  # <text>
        ("Which drawing shows postgresql-client-common?", "dependencies.svg"),  # <text>
    ],
)
def test_a_drawing_is_found_by_its_own_words(
    ingested: tuple[KnowledgeAgent, IngestReport, dict[str, tuple[Path, str]]],
    question: str,
    expected: str,
) -> None:
    agent, _, _ = ingested
    answer = agent.ask(question, admin=True)
    assert expected in cited_files(answer), answer.answer


def test_each_bad_svg_fails_alone_with_what_is_wrong(
    ingested: tuple[KnowledgeAgent, IngestReport, dict[str, tuple[Path, str]]],
) -> None:
    agent, report, bad = ingested
    assert report.ingested == 0 and report.failed == len(bad), report
    reasons = {Path(f.path).name: f.reason for f in report.failures}
    for label, (path, words) in bad.items():
        assert words in reasons[path.name], (label, reasons)
    assert not set(_documents(agent)) & {p.name for p, _ in bad.values()}
