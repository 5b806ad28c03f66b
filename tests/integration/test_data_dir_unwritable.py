"""A data folder that cannot be written fails, naming ``KGRAG_DATA_DIR`` and the path, only the
documents that write there (a PDF's figures go to ``<data_dir>/images``); the others are
ingested. Before, the ``OSError`` of the first write ended the whole job."""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from tests.support.pdfgen import figure, write_pdf


def test_an_unwritable_data_dir_fails_only_the_documents_that_write_there(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    data_dir = tmp_path / "a-file" / "data"
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "manual.pdf", ["The red valve.", "Page two."], [(1, figure())])
    (docs / "note.md").write_text("# Note\n\nThe valve is red.\n", encoding="utf-8")
    settings = Settings(store=f"falkordb-lite:///{tmp_path}/kg.db", data_dir=data_dir)
    with KnowledgeAgent.open(settings) as agent:
        report = agent.ingest([str(docs)])
    assert report.ingested == 1, report
    (failure,) = report.failures
    assert failure.path.endswith("manual.pdf")
    assert "KGRAG_DATA_DIR: cannot create the folder" in failure.reason, failure.reason
    assert str(data_dir / "images") in failure.reason
