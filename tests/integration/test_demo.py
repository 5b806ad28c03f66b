"""`kgrag demo` end to end, on the embedded store with the real small models: the corpus it makes
(documents, a PDF with a figure, drawings, espeak-ng speech) is ingested without a failure, the
meeting recording is heard with the part's name, every answer cites its sources and has a stored
trace, the two-hop question crosses from the recording to the roster, the picture follow-up
shows the part's figure, and the first answer's trace page is written. Also: no espeak-ng is a
clear error, and a file that fails to ingest fails the demo."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from rich.console import Console

from kgrag.agent.answer import Answer
from kgrag.demo import corpus as demo_corpus
from kgrag.demo import run as demo_run
from kgrag.demo.corpus import SpeechSynthesisError, make_corpus, missing_keywords
from kgrag.demo.run import (
    BROWSER_CYPHER,
    CHAIN_QUESTION,
    PICTURE_QUESTION,
    QUESTIONS,
    DemoError,
    DemoResult,
    run_demo,
)
from kgrag.executor.trace import read_trace
from kgrag.graph import open_store

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is missing")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoResult, str]:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is missing")
    out = io.StringIO()
    result = run_demo(tmp_path_factory.mktemp("demo"), Console(file=out, width=100))
    return result, out.getvalue()


def _answer(result: DemoResult, text: str) -> Answer:
    return next(a for q, a in result.answers if q.text == text)


def _name(uri: str | None) -> str:
    return Path(uri or "").name


@needs_espeak
def test_every_file_is_ingested_and_the_meeting_is_heard_with_the_parts_name(
    demo: tuple[DemoResult, str],
) -> None:
    result, output = demo
    assert result.ingest.failed == 0 and not result.ingest.failures
    assert result.ingest.ingested == len(result.corpus) == 7
    assert {p.suffix for p in result.corpus} == {".md", ".txt", ".pdf", ".png", ".wav"}
    assert missing_keywords(result.transcript) == [], result.transcript
    assert "warning" not in output
    assert result.seconds < 180


@needs_espeak
def test_every_answer_cites_sources_and_has_a_stored_trace(demo: tuple[DemoResult, str]) -> None:
    result, output = demo
    assert [q for q, _ in result.answers] == list(QUESTIONS)
    with open_store(result.store) as store:
        for question, answer in result.answers:
            assert answer.citations, question.text
            trace = read_trace(store, answer.query_id)
            assert trace["query"]["id"] == answer.query_id
            assert trace["steps"] and trace["answer"]["citations"]
            # every answer prints the three ways to open its trace
            assert f"kgrag trace {answer.query_id} --store {result.store}" in output
            assert f"--html trace-{answer.query_id}.html" in output
            assert f":param id => '{answer.query_id}'" in output
    assert output.count(BROWSER_CYPHER) == len(QUESTIONS)


@needs_espeak
def test_the_chain_question_goes_from_the_recording_to_the_roster(
    demo: tuple[DemoResult, str],
) -> None:
    result, _ = demo
    answer = _answer(result, CHAIN_QUESTION.text)
    assert "Ada Lovelace" in answer.answer
    assert not any(n in answer.answer for n in ("Grace Hopper", "Alan Turing"))
    recording = [c for c in answer.citations if _name(c.uri) == "meeting.wav"]
    assert recording and all(c.kind == "segment" for c in recording)
    segment = recording[0]
    assert segment.start_s is not None and segment.end_s is not None
    assert 0 <= segment.start_s < segment.end_s
    assert "replace" in (segment.excerpt or "").lower()
    assert any(_name(c.uri) == "maintenance.md" and c.kind == "chunk" for c in answer.citations)


@needs_espeak
def test_the_picture_follow_up_shows_the_figure_linked_to_the_part(
    demo: tuple[DemoResult, str],
) -> None:
    result, _ = demo
    answer = _answer(result, PICTURE_QUESTION.text)
    assert answer.resolved_question and "pv" in answer.resolved_question.lower()
    images = sorted((c for c in answer.citations if c.kind == "image"), key=lambda c: c.marker)
    assert images, answer.answer
    # the first picture shown is the manual's figure on page 2, next to the text naming PV-7
    assert _name(images[0].uri) == "manual.pdf" and images[0].page == 2
    assert images[0].image_uri and Path(images[0].image_uri).is_file()
    # and nothing else: the pump's drawing (linked only to another part the roster names) and
    # CLIP's nearest guess for words no drawing shows are not offered as pictures of PV-7
    assert len(images) == 1, [c.uri for c in images]


@needs_espeak
def test_the_first_answers_trace_page_is_written(demo: tuple[DemoResult, str]) -> None:
    result, output = demo
    first = result.answers[0][1].query_id
    workdir = result.corpus[0].parent.parent
    assert result.trace_html.is_file() and result.trace_html.parent == workdir
    assert first in result.trace_html.read_text(encoding="utf-8")
    assert result.trace_html.name in output.replace("\n", "")


def test_without_espeak_ng_the_corpus_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_corpus.shutil, "which", lambda name: None)
    with pytest.raises(SpeechSynthesisError, match=r"Debian package espeak-ng"):
        make_corpus(tmp_path / "corpus")
    assert not (tmp_path / "corpus").exists()


def test_a_file_that_fails_to_ingest_fails_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def corpus(folder: Path) -> list[Path]:
        folder.mkdir(parents=True)
        good = folder / "notes.txt"
        good.write_text("The Feed Pump FP-2 is blue.\n", encoding="utf-8")
        broken = folder / "broken.png"
        broken.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(20))
        return [good, broken]

    monkeypatch.setattr(demo_run, "make_corpus", corpus)
    out = io.StringIO()
    with pytest.raises(DemoError, match=r"1 of 2 demo files failed to ingest"):
        run_demo(tmp_path, Console(file=out, width=100))
    assert "broken.png" in out.getvalue()


def test_answers_that_cite_nothing_fail_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo_run, "make_corpus", lambda folder: [])  # nothing to cite
    monkeypatch.setattr(demo_run, "QUESTIONS", (PICTURE_QUESTION,))
    out = io.StringIO()
    with pytest.raises(DemoError, match=r"1 demo answer\(s\) cite nothing: Show me a picture"):
        run_demo(tmp_path, Console(file=out, width=100))
    assert "warning" in out.getvalue()  # no recording: the transcript lacks the part's name
