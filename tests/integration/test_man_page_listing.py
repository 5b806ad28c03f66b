"""Man pages are a kind of document one can list, on both engines: four real Debian man pages
(tests/data/man, gzipped roff, one named ``zstd.1`` without its ``.gz``) are stored with the
MIME type ``text/troff`` (read from their content, whatever the name), and "Which man pages do
you have?" lists those four and no other document: requests' package metadata and a libtasn1
manual section, also text, are not man pages."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.modalities.text import default_text_embedder
from tests.support.across import shared_folder
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data"
MAN = DATA / "man"
OTHERS = [DATA / "metadata" / "requests" / "METADATA", DATA / "libtasn1" / "asn1_der_decoding.txt"]
PAGES = {"zstd(1)", "cscope(1)", "lwp-dump(1p)", "choom(1)"}


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    folder = shared_folder(tmp_path_factory, "test_man_page_listing")
    # one page as installed uncompressed and named by its section only
    (folder / "zstd.1").write_bytes(gzip.decompress((MAN / "zstd.1.gz").read_bytes()))
    paths = [folder / "zstd.1", *(p for p in MAN.glob("*.gz") if p.name != "zstd.1.gz")]
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(p) for p in [*paths, *OTHERS]])
        assert report.ingested == 6, report.failures
        yield a


def test_man_pages_are_stored_as_troff(agent: KnowledgeAgent) -> None:
    rows = agent.store.read("document_list", {"principals": [], "admin": True})
    mimes = {r["title"]: r["mime"] for r in rows}
    assert {t for t, m in mimes.items() if m == "text/troff"} == PAGES, mimes


@pytest.mark.parametrize(
    "question", ["Which man pages do you have?", "Which manual pages do you have?"]
)
def test_which_man_pages_lists_the_man_pages_alone(agent: KnowledgeAgent, question: str) -> None:
    found = agent.ask(question, admin=True)
    assert {c.title for c in found.citations} == PAGES, found.answer
