"""A picture is found by what its file name says, on a lexical match only (both engines).

"Show me a photo of a flower." did not find flower.jpg: the tiny CLIP ranks it under the depicts
threshold and the picture has no text. The rule plan now adds the pictures whose file names have
every content word of the question (``named_images``), stemmed, so "flowers" meets "flower". A
camera's name (IMG_2041.JPG) says nothing, "cauliflower" is no "flower", a picture the asker
cannot read is never found by name, and a question about something else is answered as before:
the names are no passages, so no other question's evidence changes. Real pictures drawn with
Pillow, real store, real models.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from PIL import Image, ImageDraw

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.answer import Answer
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.planner.rule import rule_plan
from tests.support.answered import cited_files
from tests.support.demo_agent import offline_agent
from tests.support.engines import Engine

FLOWER = "Show me a photo of a flower."
NOTES = (
    "# Station notes\n\nThe pump room is cleaned every Monday by the night shift.\n\n"
    "The spare keys are kept in the top drawer of the front desk.\n"
)


def _flower(path: Path, petals: tuple[int, int, int]) -> None:
    """A drawn flower (petals round a yellow heart, a stem), saved in the format of ``path``."""
    img = Image.new("RGB", (160, 160), (235, 240, 230))
    d = ImageDraw.Draw(img)
    d.rectangle((76, 90, 84, 155), fill=(40, 130, 50))
    for dx, dy in (
        (0, -28),
        (0, 28),
        (-28, 0),
        (28, 0),
        (-20, -20),
        (20, 20),
        (-20, 20),
        (20, -20),
    ):
        d.ellipse((80 + dx - 16, 70 + dy - 16, 80 + dx + 16, 70 + dy + 16), fill=petals)
    d.ellipse((66, 56, 94, 84), fill=(240, 200, 30))
    img.save(path)


def _boxes(path: Path, xs: tuple[int, ...]) -> None:
    """Boxes in a row (a board's layout, a dependency diagram), saved as ``path``."""
    img = Image.new("RGB", (160, 120), (250, 250, 250))
    d = ImageDraw.Draw(img)
    for x in xs:
        d.rectangle((x, 20, x + 40, 90), outline=(20, 20, 20), width=3)
    img.save(path)


def _dots(path: Path) -> None:
    """Red and orange dots along a wave (libjs-rickshaw's screenshots/scatterplot.png)."""
    img = Image.new("RGB", (300, 100), (255, 255, 255))
    d = ImageDraw.Draw(img)
    for x in range(5, 295, 4):
        y = 50 + int(30 * ((x // 4) % 7 - 3) / 3)
        d.ellipse((x - 3, y - 3, x + 3, y + 3), fill=(240, 60, 40) if x % 8 else (250, 150, 30))
    img.save(path)


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    folder = tmp_path_factory.mktemp("picture-names")
    _flower(folder / "flower.jpg", (200, 60, 160))
    _flower(folder / "IMG_2041.JPG", (190, 70, 150))  # a flower too, named by the camera
    _flower(folder / "red_rose-2019.png", (210, 30, 40))
    _flower(folder / "cauliflower_soup.jpg", (240, 240, 235))
    _boxes(folder / "BoardLayout.png", (10, 60, 110))
    _boxes(folder / "deps.png", (10, 110))
    _dots(folder / "scatterplot.png")
    (folder / "notes.md").write_text(NOTES, encoding="utf-8")
    secret = tmp_path_factory.mktemp("botany")
    _flower(secret / "orchid_flower.png", (150, 80, 200))
    agent = offline_agent(module_engine.open())
    report = agent.ingest([str(folder)])
    assert report.failed == 0 and report.ingested == 8, report
    report = agent.ingest([str(secret)], acl=["group:botany"])
    assert report.failed == 0 and report.ingested == 1, report
    yield agent
    agent.store.close()


def _pictures(answer: Answer) -> list[str]:
    return [Path(c.uri or "").name for c in answer.citations if c.kind == "image"]


def _returned(agent: KnowledgeAgent, answer: Answer) -> list[dict[str, object]]:
    """Every hit any step of the answer's plan returned (as an operator sees the trace)."""
    trace = read_trace(agent.store, answer.query_id, OPERATOR).to_json()
    return [hit for step in trace["steps"] for hit in step["returned"]]


def test_a_photo_of_a_flower_is_the_picture_named_flower(agent: KnowledgeAgent) -> None:
    answer = agent.ask(FLOWER)
    # the camera's flower, the cauliflower and the picture only the botany group reads are not
    assert _pictures(answer) == ["flower.jpg"], answer.answer
    assert answer.exit_reason != "not_found"
    plural = agent.ask("Show me pictures of flowers.")
    assert _pictures(plural) == ["flower.jpg"], plural.answer


def test_a_picture_the_asker_cannot_read_is_never_found_by_name(agent: KnowledgeAgent) -> None:
    answer = agent.ask(FLOWER, user="ann")
    titles = {str(hit.get("title")) for hit in _returned(agent, answer)}
    assert not titles & {"orchid flower", "orchid_flower"}
    assert "orchid_flower.png" not in _pictures(answer)
    botanist = agent.ask(FLOWER, user="bea", groups=["botany"])
    assert set(_pictures(botanist)) == {"flower.jpg", "orchid_flower.png"}, botanist.answer


def test_names_in_other_words_and_named_files(agent: KnowledgeAgent) -> None:
    assert _pictures(agent.ask("Show me a photo of red roses.")) == ["red_rose-2019.png"]
    assert _pictures(agent.ask("Show me a picture of the board layout.")) == ["BoardLayout.png"]
    assert _pictures(agent.ask("What does deps.png show?"))[:1] == ["deps.png"]


def test_two_words_of_the_question_written_together_in_the_name(agent: KnowledgeAgent) -> None:
    """Found on a real folder: "Show me a picture of a scatter plot." was not found, the
    picture being named scatterplot.png."""
    answer = agent.ask("Show me a picture of a scatter plot.")
    assert _pictures(answer) == ["scatterplot.png"], answer.answer
    assert answer.exit_reason != "not_found"


def test_a_question_about_something_else_is_answered_as_before(agent: KnowledgeAgent) -> None:
    question = "When is the pump room cleaned?"
    assert not [
        s
        for s in rule_plan(question, want_images=True).plan
        if getattr(s.parameters, "template", None) == "named_images"
        and "pump" not in s.parameters.params["terms"]
    ]
    answer = agent.ask(question)
    assert cited_files(answer) == {"notes.md"}, answer.answer
    # no picture's name reached any step's hits: the names are no passages
    assert not [hit for hit in _returned(agent, answer) if hit.get("kind") == "image"]
    texts = [str(hit.get("text") or "").lower() for hit in _returned(agent, answer)]
    assert texts and not [t for t in texts if "flower" in t or ".png" in t or ".jpg" in t], texts
    giraffe = agent.ask("Show me a picture of a giraffe.")
    assert giraffe.exit_reason == "not_found" and giraffe.citations == (), giraffe.answer
