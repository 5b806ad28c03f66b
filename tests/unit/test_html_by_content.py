"""A web page under another name is read as HTML, not as its markup.

Found on a folder of real files (BENCHMARKS.md, "A ninth folder"): libffi's manual page
``Closure-Example.html`` saved as ``closure example.txt`` was a plain-text document of tags,
style rules and entities (``<p>A trivial example that creates a new <code>puts</code> ...``,
``#include &lt;stdio.h&gt;``), and "What does the libffi closure example do?" quoted another
page."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.ingest.parsers import parse
from kgrag.ingest.sniff import is_html_document
from kgrag.ingest.sources import expand_inputs

PAGE = Path(__file__).parents[1] / "data" / "html_by_content" / "Closure-Example.html"
LIMIT = 10_000_000


def _parse(path: Path) -> tuple[str, str, str]:
    (found,) = expand_inputs([str(path)]).items
    doc = parse(found, LIMIT)
    return doc.title, doc.source.mime, "\n".join(p.text for p in doc.pages)


@pytest.mark.parametrize("name", ["closure example.txt", "Closure-Example"])
def test_a_web_page_under_another_name_is_read_as_html(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(PAGE.read_bytes())
    title, mime, text = _parse(path)
    assert mime == "text/html"
    assert title.startswith("Closure Example")
    flat = " ".join(text.split())
    assert "A trivial example that creates a new puts by binding fputs with stdout." in flat
    assert "#include <stdio.h>" in flat
    assert "<p>" not in text and "&lt;" not in text and "font-family" not in text
    # the same page under its own name reads the same
    assert _parse(PAGE)[2] == text


def test_text_that_only_mentions_html_stays_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Start each page with <!DOCTYPE html> and an <html> element.\n")
    _, mime, text = _parse(path)
    assert mime == "text/plain"
    assert "<!DOCTYPE html>" in text
    assert not is_html_document(b"<p>a fragment</p>")
    assert is_html_document(b"\xef\xbb\xbf\n<!-- saved -->\n<HTML lang=en>")
