"""CSV files, spreadsheets, HTML pages and Markdown files are kinds of document one can list, on
both engines, as man pages are: each is matched on the MIME type stored for it, not on its words.
Real files (tests/data: a Go checksum CSV, two HTML pages, eSpeak NG's Markdown guide, a
reStructuredText notice, a Debian man page) and two made here: the CSV's first rows saved as a
TSV, and a note whose text talks about CSV files without being one (before, "Which CSV files do
you have?" listed documents whose words matched "csv", and "Which markdown files do you have?"
listed every text document). JSON, YAML, XML and TOML files are kinds too (tests/data/data_formats:
Prometheus' sample configuration, polkit's XML catalog; before, "Which YAML files do you have?"
found the documents whose metadata held the word "yaml": none)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.ingest.roff import ROFF_MIME
from kgrag.modalities.text import default_text_embedder
from tests.support.across import shared_folder
from tests.support.answered import cited_files
from tests.support.engines import Engine
from tests.support.raw import as_before, open_migrates, raw_write

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = [
    DATA / "tables" / "zip_sums_head.csv",
    DATA / "formats" / "ferry.html",
    DATA / "formats" / "go_mem_head.html",
    DATA / "espeak_ng_docs" / "guide.md",
    DATA / "containers" / "good" / "turbine.rst",
    DATA / "man" / "cscope.1.gz",
    DATA / "data_formats" / "prometheus.yml",
    DATA / "data_formats" / "polkit-catalog.xml",
    DATA / "plain_text" / "iso_15924.json",
    DATA / "near_miss" / "pandas-pyproject.toml",
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
        assert report.ingested == 12, report.failures
        yield a


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which CSV files do you have?", {"zip_sums_head.csv", "sums.tsv"}),
        ("Which spreadsheets do you have?", {"zip_sums_head.csv", "sums.tsv"}),
        ("Which HTML pages do you have?", {"ferry.html", "go_mem_head.html"}),
        ("Which markdown files do you have?", {"guide.md"}),
        ("Which man pages do you have?", {"cscope.1.gz"}),
        ("Which YAML files do you have?", {"prometheus.yml"}),
        ("List the JSON files.", {"iso_15924.json"}),
        ("Which XML documents are stored?", {"polkit-catalog.xml"}),
        ("Show me the TOML files", {"pandas-pyproject.toml"}),
    ],
)
def test_a_listing_by_format_lists_the_files_of_that_format_alone(
    agent: KnowledgeAgent, question: str, expected: set[str]
) -> None:
    found = agent.ask(question, admin=True)
    assert cited_files(found) == expected, found.answer


#: Man pages as stores ingested before man pages had a type of their own hold them: as plain
#: text, read from roff (titled "cscope(1)") or, before kgrag read roff, their source as their
#: text (titled by its first line). A rotated log named like a man page stays plain text.
_OLD_DOCUMENTS = [
    {
        "id": "old-zstd",
        "uri": "/usr/share/man/man1/zstd.1.gz",
        "title": '.TH "ZSTD" "1" "February 2023" "zstd 1.5.4" "User Commands"',
        "text": gzip.decompress((DATA / "man" / "zstd.1.gz").read_bytes()).decode()[:2000],
    },
    {
        "id": "old-syslog",
        "uri": "/var/log/syslog.1",
        "title": "syslog",
        "text": "Nov 26 06:25:01 host CRON[1042]: (root) CMD (test -x /usr/sbin/anacron)\n",
    },
]
_AS_BEFORE = """
MATCH (d:Document {mime: $troff}) SET d.mime = $plain
WITH count(d) AS downgraded
UNWIND $old AS old
CREATE (d:Document {id: old.id, uri: old.uri, title: old.title, modality: 'text',
                    mime: $plain, status: 'complete', acl: ['*'], ingested_at: $at,
                    bytes: size(old.text), chunk_count: 1, image_count: 0, tags: []})
CREATE (:Chunk {id: old.id + '-0', text: old.text, position: 0, document_id: old.id})
       -[:PART_OF]->(d)
"""


def test_man_pages_a_store_held_as_plain_text_are_listed_once_it_is_opened(
    agent: KnowledgeAgent, module_engine: Engine
) -> None:
    """Migration 0013_man_page_types: the store as an older kgrag wrote it (before: "No readable
    document matches."), opened again, lists its man pages, by name and content: not the log."""
    params = {"troff": ROFF_MIME, "plain": "text/plain", "old": _OLD_DOCUMENTS}
    raw_write(agent.store, _AS_BEFORE, {**params, "at": "2026-11-26T19:00:00+00:00"})
    as_before(agent.store, "0013_man_page_types", "RETURN 1")
    assert cited_files(agent.ask("Which man pages do you have?", admin=True)) == set()
    open_migrates(module_engine, "0013_man_page_types")
    found = agent.ask("Which man pages do you have?", admin=True)
    assert cited_files(found) == {"cscope.1.gz", "zstd.1.gz"}, found.answer
    rows = agent.store.read_freeform("MATCH (d:Document {id: 'old-syslog'}) RETURN d.mime AS m")
    assert [r["m"] for r in rows] == ["text/plain"]


def test_data_files_a_store_held_as_plain_text_are_listed_once_it_is_opened(
    agent: KnowledgeAgent, module_engine: Engine
) -> None:
    """Migration 0014_data_format_types: a YAML file as an older kgrag stored it (plain text) is
    not listed as YAML; the store opened again lists it, and the plain-text note stays plain."""
    undo = "MATCH (d:Document) WHERE d.uri ENDS WITH '.yml' SET d.mime = 'text/plain'"
    as_before(agent.store, "0014_data_format_types", undo)
    assert cited_files(agent.ask("Which YAML files do you have?", admin=True)) == set()
    open_migrates(module_engine, "0014_data_format_types")
    found = agent.ask("Which YAML files do you have?", admin=True)
    assert cited_files(found) == {"prometheus.yml"}, found.answer
    rows = agent.store.read_freeform(
        "MATCH (d:Document) WHERE d.uri ENDS WITH 'export-notes.txt' RETURN d.mime AS m"
    )
    assert [r["m"] for r in rows] == ["text/plain"]
