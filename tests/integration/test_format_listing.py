"""CSV files, spreadsheets, HTML pages and Markdown files are kinds of document one can list, on
both engines, as man pages are: each is matched on the MIME type stored for it, not on its words.
Real files (tests/data: a Go checksum CSV, two HTML pages, eSpeak NG's Markdown guide, a
reStructuredText notice, a Debian man page) and two made here: the CSV's first rows saved as a
TSV, and a note whose text talks about CSV files without being one (before, "Which CSV files do
you have?" listed documents whose words matched "csv", and "Which markdown files do you have?"
listed every text document)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.modalities.text import default_text_embedder
from tests.support.across import shared_folder
from tests.support.answered import cited_files
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = [
    DATA / "tables" / "zip_sums_head.csv",
    DATA / "formats" / "ferry.html",
    DATA / "formats" / "go_mem_head.html",
    DATA / "espeak_ng_docs" / "guide.md",
    DATA / "containers" / "good" / "turbine.rst",
    DATA / "man" / "cscope.1.gz",
]
NOTE = (
    "Export notes\n\nThe nightly job writes the module checksums as a CSV file, one row per "
    "module version. Open the CSV export in a spreadsheet to check the hashes.\n"
)


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    folder = shared_folder(tmp_path_factory, "test_format_listing")
    rows = (DATA / "tables" / "zip_sums_head.csv").read_text().splitlines()[:5]
    (folder / "sums.tsv").write_text("".join(r.replace(",", "\t") + "\n" for r in rows))
    (folder / "export-notes.txt").write_text(NOTE)
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest(
            [str(p) for p in [*REAL, folder / "sums.tsv", folder / "export-notes.txt"]]
        )
        assert report.ingested == 8, report.failures
        yield a


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which CSV files do you have?", {"zip_sums_head.csv", "sums.tsv"}),
        ("Which spreadsheets do you have?", {"zip_sums_head.csv", "sums.tsv"}),
        ("Which HTML pages do you have?", {"ferry.html", "go_mem_head.html"}),
        ("Which markdown files do you have?", {"guide.md"}),
        ("Which man pages do you have?", {"cscope.1.gz"}),
    ],
)
def test_a_listing_by_format_lists_the_files_of_that_format_alone(
    agent: KnowledgeAgent, question: str, expected: set[str]
) -> None:
    found = agent.ask(question, admin=True)
    assert cited_files(found) == expected, found.answer
