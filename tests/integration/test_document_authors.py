"""Documents' authors, read from real files' own metadata (tests/data/authors: a PDF's /Author,
a DOCX's and an ODT's dc:creator, an HTML page's author meta tag, made with LibreOffice; a
Markdown front matter), stored on the Document on both engines and asked about: "who wrote X?"
answers from the stored authors citing the document, "which documents did X write?" lists by
author. Every read filters by the caller's ACL: a private document by the same author is neither
listed nor named to an outsider."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import default_text_embedder
from tests.support.across import compared_across_engines, shared_folder  # noqa: F401 (a fixture)
from tests.support.engines import Engine
from tests.support.raw import raw_write

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

DATA = Path(__file__).resolve().parents[1] / "data" / "authors"
PRIVATE = (
    "---\ntitle: Kiln budget\nauthor: Ken Thompson\n---\n"
    "# Kiln budget\n\nThe new kiln elements cost four thousand euros. Only the board sees this.\n"
)


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return default_text_embedder()


def _folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = shared_folder(tmp_path_factory, "test_document_authors")
    for name in ("harbour.pdf", "kiln.docx", "apiary.odt", "pruning.html", "greenhouse.docx"):
        shutil.copyfile(DATA / name, root / name)
    return root


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, embedder: TextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    root = _folder(tmp_path_factory)
    private = root / "private" / "kiln-budget.md"
    private.parent.mkdir(exist_ok=True)
    private.write_text(PRIVATE, encoding="utf-8")
    store = module_engine.open()
    try:
        found = KnowledgeAgent(store, embedder)
        names = [str(root / n) for n in sorted(p.name for p in root.glob("*.*"))]
        assert found.ingest(names).ingested == 5
        assert found.ingest([str(private)], acl=["group:board"]).ingested == 1
        yield found
    finally:
        store.close()


def _authors(store: GraphStore) -> dict[str, list[str] | None]:
    rows = store.read("document_list", {"principals": [], "admin": True})
    return {Path(str(r["uri"])).name: r["authors"] for r in rows}


def _steps(agent: KnowledgeAgent, query_id: str) -> list[str]:
    return [s["type"] for s in read_trace(agent.store, query_id, OPERATOR).to_json()["steps"]]


def test_each_files_own_authors_are_stored(agent: KnowledgeAgent) -> None:
    assert _authors(agent.store) == {
        "harbour.pdf": ["Maria Schmidt"],
        "kiln.docx": ["Ken Thompson"],
        "apiary.odt": ["Jane Doe"],
        "pruning.html": ["Ada Lovelace"],  # "Ada Lovelace <ada@example.org>"
        "greenhouse.docx": [],  # "Administrator" names no one
        "kiln-budget.md": ["Ken Thompson"],  # its front matter
    }


def test_who_wrote_a_document_is_answered_from_its_authors_citing_it(
    agent: KnowledgeAgent,
) -> None:
    answer = agent.ask("Who wrote the harbour dredging report?", user="eve")
    assert _steps(agent, answer.query_id) == ["document_authors"]
    assert "written by Maria Schmidt (the document's own metadata)" in answer.answer
    (cited,) = answer.citations
    assert Path(str(cited.uri)).name == "harbour.pdf"
    assert cited.authors == ("Maria Schmidt",)

    unknown = agent.ask("Who is the author of the greenhouse irrigation plan?", user="eve")
    assert _steps(agent, unknown.query_id) == ["document_authors"]
    assert "no author is stored for it" in unknown.answer
    assert [Path(str(c.uri)).name for c in unknown.citations] == ["greenhouse.docx"]


def test_a_listing_by_author_lists_only_what_the_reader_may_read(agent: KnowledgeAgent) -> None:
    question = "Which documents did Ken Thompson write?"
    outsider = agent.ask(question, user="eve")
    assert _steps(agent, outsider.query_id) == ["metadata_search"]
    assert [Path(str(c.uri)).name for c in outsider.citations] == ["kiln.docx"]
    assert "(by Ken Thompson)" in outsider.answer
    assert "budget" not in outsider.answer.lower()

    board = agent.ask(question, user="bob", groups=["board"])
    listed = sorted(Path(str(c.uri)).name for c in board.citations)
    assert listed == ["kiln-budget.md", "kiln.docx"]

    by_first_name = agent.ask("files by Jane", user="eve")
    assert [Path(str(c.uri)).name for c in by_first_name.citations] == ["apiary.odt"]

    private = agent.ask("Who wrote the kiln budget?", user="eve")
    assert "Ken Thompson" not in private.answer
    assert all("kiln-budget" not in str(c.uri) for c in private.citations)


def test_a_document_stored_before_authors_were_kept_says_so(
    engine: Engine, embedder: TextEmbedder, tmp_path: Path
) -> None:
    shutil.copyfile(DATA / "apiary.odt", tmp_path / "apiary.odt")
    store = engine.fresh()
    try:
        agent = KnowledgeAgent(store, embedder)
        assert agent.ingest([str(tmp_path / "apiary.odt")]).ingested == 1
        raw_write(store, "MATCH (d:Document) REMOVE d.authors")
        answer = agent.ask("Who wrote the apiary inspection notes?")
        assert "ingested before kgrag kept authors" in answer.answer
        assert "Jane Doe" not in answer.answer  # not guessed from anything else
    finally:
        store.close()


def test_a_changed_file_ingested_again_has_its_new_authors(
    engine: Engine, embedder: TextEmbedder, tmp_path: Path
) -> None:
    page = tmp_path / "pruning.html"
    shutil.copyfile(DATA / "pruning.html", page)
    store = engine.fresh()
    try:
        agent = KnowledgeAgent(store, embedder)
        assert agent.ingest([str(page)]).ingested == 1
        assert _authors(store) == {"pruning.html": ["Ada Lovelace"]}
        text = page.read_text(encoding="utf-8")
        page.write_text(
            text.replace("Ada Lovelace &lt;ada@example.org&gt;", "Grace Hopper; Alan Turing"),
            encoding="utf-8",
        )
        assert agent.ingest([str(page)]).ingested == 1
        assert _authors(store) == {"pruning.html": ["Grace Hopper", "Alan Turing"]}
        rows = store.read("document_list", {"principals": [], "admin": True})
        assert len(rows) == 1  # the same document, refreshed
        answer = agent.ask("Which documents did Alan Turing write?")
        assert [Path(str(c.uri)).name for c in answer.citations] == ["pruning.html"]
        assert not agent.ask("Which documents did Ada Lovelace write?").citations
    finally:
        store.close()
