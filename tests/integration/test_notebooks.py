"""A Jupyter notebook in a folder is a document of its cells and outputs, and its plots are its
images (both engines). Before, a notebook was JSON read as plain text (its source quoted line by
line), or not read at all when a plot's base64 made a line of the first 8 KiB over 4,096
characters."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.modalities.clip import tiny_clip_embedder
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine
from tests.support.notebooks import write_notebook


def test_a_notebook_answers_from_its_cells_and_keeps_its_plot(engine: Engine) -> None:
    folder = engine.folder / "experiments"
    folder.mkdir(parents=True)
    write_notebook(folder / "churn.ipynb")
    with KnowledgeAgent(
        engine.fresh(), default_text_embedder(), image_embedder=cache(tiny_clip_embedder)
    ) as agent:
        report = agent.ingest([str(folder)])
        assert report.ingested == 1 and report.failed == 0, report
        rows = agent.store.read_freeform(
            "MATCH (i:Image)-[:PART_OF]->(d:Document) RETURN d.title AS title, d.mime AS mime, "
            "i.caption AS caption, i.width AS width"
        )
        assert rows == [
            {
                "title": "Churn model experiment",
                "mime": "application/x-ipynb+json",
                "caption": "Validation loss",
                "width": 200,
            }
        ], rows
        answer = agent.ask("What learning rate did the churn model experiment use?")
    assert answer.exit_reason != "not_found", answer.answer
    assert [Path(str(c.uri)).name for c in answer.citations][:1] == ["churn.ipynb"]
    assert "0.003" in answer.answer
