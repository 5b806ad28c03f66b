"""British and American spellings meet in the document tools too (listings, summaries,
comparisons match terms against titles, tags, summaries and paths), on both engines: Bootstrap's
real documentation page "Colors" (tests/data/spellings, American spelling throughout) is listed
for "documents about colour" and resolved for a summary of "the colour utilities", beside two
other real documents (requests' package metadata, the zstd man page) that name no colour. A
question term and its other spelling count as one term: the page's title holds "colour" once,
not twice, and a term of the question that no document holds still keeps a listing from
claiming full coverage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.executor.document_handlers import documents_about, metadata_coverage
from kgrag.modalities.text import default_text_embedder
from tests.security.principals import ReadAs
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[1] / "data"
COLORS = DATA / "spellings" / "colors.md"
OTHERS = [DATA / "metadata" / "requests" / "METADATA", DATA / "man" / "zstd.1.gz"]


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as a:
        report = a.ingest([str(p) for p in [COLORS, *OTHERS]])
        assert report.ingested == 3, report.failures
        yield a


def _colors_title(agent: KnowledgeAgent) -> str:
    rows = agent.store.read("document_list", {"principals": [], "admin": True})
    titles = [str(r["title"]) for r in rows if str(r["uri"]).endswith("colors.md")]
    assert len(titles) == 1, rows
    assert "colour" not in COLORS.read_text(encoding="utf-8").lower()
    return titles[0]


@pytest.mark.parametrize(
    "question", ["Which documents are about colour?", "List the documents about colours."]
)
def test_a_listing_about_colour_lists_the_color_page(agent: KnowledgeAgent, question: str) -> None:
    found = agent.ask(question, admin=True)
    # the listing itself (before: it matched nothing, and the content plan's search quoted
    # sentences of the page after three rounds)
    assert found.answer.startswith("1 document(s):"), found.answer
    assert {c.title for c in found.citations} == {_colors_title(agent)}, found.answer


def test_a_summary_of_the_colour_utilities_resolves_the_color_page(agent: KnowledgeAgent) -> None:
    found = agent.ask("Summarise the colour utilities page.", admin=True)
    title = _colors_title(agent)
    assert found.answer.startswith(f"{title} [1]: "), found.answer
    assert [c.title for c in found.citations][:1] == [title], found.answer


def test_a_term_and_its_other_spelling_are_one_term(agent: KnowledgeAgent) -> None:
    reader = ReadAs(agent.store, AccessContext(admin=True))
    rows = documents_about(reader, ["colour", "background"], [], 10)
    page = next(r for r in rows if str(r["uri"]).endswith("colors.md"))
    # "Colors" / "Background color ..." / ".../colors.md": each term counted once per field
    assert (page["title_hits"], page["summary_hits"], page["uri_hits"]) == (1, 2, 1), page
    assert metadata_coverage(page, ["colour", "background"]) == 1.0
    assert metadata_coverage(page, ["colour", "zeppelin"]) == 0.5
