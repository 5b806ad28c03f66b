"""A folder of good files and damaged ones ingested into each engine: the job finishes, each
damaged file is named in the report with its reason, the good files are answerable, and a second
run adds nothing. A document that breaks a later stage (entity extraction) fails alone; a store
error there still stops the job, and is recorded as no file's failure; a re-run after either
stores every good document exactly once.

The damaged files are real files of tests/data damaged as the fuzzer of
tests/support/fuzz_readers.py damages them: a zip archive whose members' start was cut away (its
central directory points before the file's start: zipfile raised ValueError "negative seek
value", which stopped the whole job, exit 1), a DOCX, a PDF and a PNG cut in half, bytes of an
ODT flipped, an e-mail whose Content-Disposition header was repeated to 200 KB (Python's header
parser is quadratic: 2 MB took minutes), and a JSON file nested 5,000 deep (read as text)."""

from __future__ import annotations

import random
import shutil
import struct
from collections.abc import Sequence
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.errors import StoreError
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import ExtractionResult, RuleEntityExtractor
from kgrag.modalities import factory
from tests.integration.ingest_media import drawing
from tests.support.engines import Engine
from tests.support.fuzz_readers import flip

DATA = Path(__file__).resolve().parent.parent / "data"

GOOD = {
    "turbine.rst": DATA / "containers" / "good" / "turbine.rst",
    "tides.docx": DATA / "formats" / "tides_lo.docx",
    "ferry.html": DATA / "formats" / "ferry.html",
}
#: in the text of ferry.html only: the extractor of these tests breaks on it
MARKER = "ferry"


def _cut_zip(source: Path, target: Path) -> Path:
    """``source`` without the start of its members: what a download resumed at the wrong
    offset leaves. The central directory is intact and points before the file's start."""
    data = source.read_bytes()
    end = data.rfind(b"PK\x05\x06")
    (cd_offset,) = struct.unpack("<I", data[end + 16 : end + 20])
    target.write_bytes(b"PK" + data[cd_offset - 40 :])
    return target


def _half(source: Path, target: Path) -> Path:
    data = source.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    return target


def bad_files(folder: Path) -> dict[str, Path]:
    """name -> a damaged real file in ``folder``."""
    folder.mkdir()
    formats = DATA / "formats"
    eml = (DATA / "containers" / "good" / "inspection.eml").read_text("utf-8")
    long_header = "Content-Disposition: attachment; " + "fi;le=x;" * 25_000 + "\n"
    (folder / "long-header.eml").write_text(long_header + eml, "utf-8")
    odt = (formats / "orchard.odt").read_bytes()
    (folder / "flipped.odt").write_bytes(flip(random.Random(3), odt[:40], (), "odt") + odt[40:])
    (folder / "nested.json").write_text("[\n" * 5_000 + "]\n" * 5_000, "utf-8")
    picture = drawing(folder / "picture.png", "red", "circle")
    _half(picture, folder / "half.png")
    picture.unlink()
    return {
        "cut.zip": _cut_zip(DATA / "containers" / "good" / "docs.zip", folder / "cut.zip"),
        "half.docx": _half(formats / "orchard_lo.docx", folder / "half.docx"),
        "half.pdf": _half(DATA / "first_lines" / "deprecated utilities.pdf", folder / "half.pdf"),
        "half.png": folder / "half.png",
        "flipped.odt": folder / "flipped.odt",
        "long-header.eml": folder / "long-header.eml",
    }


class _Breaking(RuleEntityExtractor):
    """The offline extractor, breaking on any chunk that holds :data:`MARKER` (as an extractor
    with a bug does on some text) with ``error``."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def extract(self, chunks: Sequence[tuple[str, str]], **kwargs: object) -> ExtractionResult:
        if any(MARKER in text.lower() for _, text in chunks):
            raise self.error
        return super().extract(chunks, **kwargs)  # type: ignore[arg-type]


def _agent(store: GraphStore, extractor: RuleEntityExtractor | None = None) -> KnowledgeAgent:
    if extractor is None:
        return KnowledgeAgent(store, factory.text_embedder(Settings()))
    return KnowledgeAgent(
        store, factory.text_embedder(Settings()), entity_extractor=lambda: extractor
    )


def _stored(store: GraphStore, root: Path) -> list[str]:
    rows = store.read_freeform(
        "MATCH (d:Document) WHERE d.uri STARTS WITH $root RETURN d.uri AS uri",
        {"root": str(root) + "/"},
    )
    return sorted(r["uri"].removeprefix(str(root) + "/") for r in rows)


def _counts(store: GraphStore) -> tuple[int, int, int]:
    rows = store.read_freeform(
        "MATCH (d:Document) OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d) "
        "RETURN count(DISTINCT d) AS d, count(c) AS c",
        {},
    )
    entities = store.read_freeform("MATCH (e:Entity) RETURN count(e) AS n", {})
    return rows[0]["d"], rows[0]["c"], entities[0]["n"]


@pytest.fixture
def folder(engine: Engine) -> Path:
    root = engine.folder / "mixed"
    root.mkdir()
    for name, source in GOOD.items():
        shutil.copyfile(source, root / name)
    bad_files(root / "bad")
    return root


def test_damaged_files_fail_by_name_and_the_job_goes_on(engine: Engine, folder: Path) -> None:
    bad = {p.name for p in (folder / "bad").iterdir()}
    with engine.open() as store:
        agent = _agent(store)
        report = agent.ingest([str(folder)])
        reasons = {Path(f.path.split("!")[0]).name: f.reason for f in report.failures}
        assert set(reasons) == bad - {"nested.json"}, report.failures
        assert "corrupt member" in reasons["cut.zip"] or "zip" in reasons["cut.zip"]
        assert "DOCX" in reasons["half.docx"] and "image" in reasons["half.png"]
        assert "header" in reasons["long-header.eml"]
        assert all(f.path.startswith(str(folder / "bad")) for f in report.failures)
        stored = _stored(store, folder)
        # the good files and the deep JSON (read as text) are stored
        assert {"turbine.rst", "tides.docx", "ferry.html"} <= set(stored)
        assert "bad/nested.json" in stored
        assert len(stored) == len(set(stored))

        answer = agent.ask("What is the vibration limit of turbine T-9?")
        assert any(c.uri and c.uri.endswith("turbine.rst") for c in answer.citations)
        assert "4.5 mm/s" in answer.answer

        before = _counts(store)
        again = agent.ingest([str(folder)])
        assert again.ingested == 0 and {f.path for f in again.failures} == {
            f.path for f in report.failures
        }
        assert _counts(store) == before


def test_a_document_breaking_the_extractor_fails_alone(engine: Engine, folder: Path) -> None:
    shutil.rmtree(folder / "bad")
    with engine.open() as store:
        broken = _Breaking(IndexError("list index out of range"))
        report = _agent(store, broken).ingest([str(folder)])
        (failure,) = report.failures
        assert failure.path == str(folder / "ferry.html")
        assert failure.reason == (
            "its entities could not be extracted (IndexError: list index out of range)"
        )
        assert _stored(store, folder) == ["tides.docx", "turbine.rst"]

        rerun = _agent(store).ingest([str(folder)])  # the extractor fixed: only ferry.html
        assert rerun.failures == [] and rerun.ingested == 1
        assert _stored(store, folder) == sorted(GOOD)
        before = _counts(store)
        assert _agent(store).ingest([str(folder)]).ingested == 0
        assert _counts(store) == before


def test_a_store_error_in_a_later_stage_stops_the_job(engine: Engine, folder: Path) -> None:
    shutil.rmtree(folder / "bad")
    with engine.open() as store:
        broken = _Breaking(StoreError("the store went away while entities were resolved"))
        with pytest.raises(StoreError, match="went away"):
            _agent(store, broken).ingest([str(folder)])
        report = _agent(store).ingest([str(folder)])
        assert report.failures == []
        assert _stored(store, folder) == sorted(GOOD)  # each exactly once
        before = _counts(store)
        assert _agent(store).ingest([str(folder)]).ingested == 0
        assert _counts(store) == before
