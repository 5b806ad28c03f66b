"""Each chunk knows the section it is in (kgrag.ingest.sections), from real files of this
machine: Valgrind's PDF manual (its outline and running headers), its HTML manual, a Markdown
README and a man page. The chunk's text is what it was; only the text its vector is computed
from names the document and the section."""

from __future__ import annotations

import gzip
from functools import cache
from pathlib import Path

import pytest

from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.models import ParsedDocument, SourceItem
from kgrag.ingest.parsers import parse
from kgrag.ingest.sections import MAX_CONTEXT_TOKENS, context_text
from tests.support.valgrind_manual import manual_excerpt

DOC = Path("/usr/share/doc")


def words(text: str) -> int:
    return len(text.split())


def _item(path: Path) -> SourceItem:
    pdf = path.suffix == ".pdf"
    return SourceItem(
        path=path, modality="pdf" if pdf else "text", mime="application/pdf" if pdf else "text"
    )


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    return path


@cache
def _excerpt_document(folder: str) -> ParsedDocument:
    return parse(_item(manual_excerpt(Path(folder))), 50_000_000)


def test_a_page_deep_in_a_pdf_chapter_knows_its_chapter_and_section(tmp_path: Path) -> None:
    """Page 141 of the manual ("By comparison, Helgrind's detection ...") sits under the
    running header "Helgrind: a thread error detector" (left out of the text) and the outline's
    "7.5. Hints and Tips for Effective Use of Helgrind"; a Memcheck page under its own."""
    doc = _excerpt_document(str(tmp_path))
    chunks = chunk_text(doc.pages, words, 180, 20)
    memcheck = next(c for c in chunks if "You don't want the two blocks to overlap" in c.text)
    assert memcheck.section[0] == "Memcheck: a memory error detector", memcheck.section
    assert memcheck.section[-1].startswith("4.2."), memcheck.section
    helgrind = next(c for c in chunks if "the same inter-thread dependency, but this" in c.text)
    assert helgrind.section[0] == "Helgrind: a thread error detector", helgrind.section
    assert helgrind.section[-1] == "7.5. Hints and Tips for Effective Use of Helgrind"
    # the chunks' text is the page's text, sections or not
    bare = [p.model_copy(update={"headings": ()}) for p in doc.pages]
    assert [c.text for c in chunks] == [c.text for c in chunk_text(bare, words, 180, 20)]
    assert not any(c.text.startswith("Helgrind: a thread error detector") for c in chunks)
    embedded = context_text(doc.title, helgrind.section, helgrind.text)
    assert embedded.startswith(
        "Valgrind Documentation › Helgrind: a thread error detector › 7.5. Hints and Tips"
    )
    assert embedded.endswith(helgrind.text)


def test_html_markdown_and_man_page_headings_give_the_section(tmp_path: Path) -> None:
    """The Helgrind chapter of the HTML manual (<h1>-<h3>; its table of contents repeats the
    headings as links, which are not the sections), apt's README.md and zstd's man page."""
    html = parse(_item(_need(DOC / "valgrind/html/hg-manual.html")), 10_000_000)
    chunks = chunk_text(html.pages, words, 150, 20)
    race = next(c for c in chunks if "Did you perhaps forget the locking" in c.text)
    assert race.section == (
        "7. Helgrind: a thread error detector",
        "7.4. Detected errors: Data Races",
        "7.4.3. Interpreting Race Error Messages",
    )
    markdown = tmp_path / "README.md"
    markdown.write_bytes(gzip.decompress(_need(DOC / "apt/README.md.gz").read_bytes()))
    chunks = chunk_text(parse(_item(markdown), 10_000_000).pages, words, 150, 20)
    resolver = next(c for c in chunks if "It is the job of the pkgProblemResolver" in c.text)
    # "Debugging" over "---------" is a heading of level 2 (CommonMark), the "###" under it
    assert resolver.section == ("APT", "Debugging", "Dependency resolution")
    man = tmp_path / "zstd.1"
    man.write_bytes(gzip.decompress(_need(Path("/usr/share/man/man1/zstd.1.gz")).read_bytes()))
    chunks = chunk_text(parse(_item(man), 10_000_000).pages, words, 150, 20)
    output = next(c for c in chunks if "save result into FILE" in c.text)
    assert output.section == ("OPTIONS", "Operation Modifiers")


def test_the_embedded_text_names_what_the_chunk_does_not() -> None:
    """A chunk's title and section are not repeated when its text starts with them (a passage
    whose first line is its title, a chunk opening on its section's heading); a chunk outside
    any section is embedded as it is; a long path keeps the title and the innermost heading
    within MAX_CONTEXT_TOKENS."""
    passage = "Lake Tahoe\nLake Tahoe is a freshwater lake in the Sierra Nevada."
    assert context_text("Lake Tahoe", ("Geography",), passage) == f"Geography\n\n{passage}"
    # a document without headings: its chunks are embedded as they are, the title left out
    assert context_text("Lake Tahoe", (), "Its depth is 501 m.") == "Its depth is 501 m."
    chunk = "7.1. Overview\nHelgrind is a Valgrind tool for detecting synchronisation errors."
    section = ("Helgrind: a thread error detector", "7.1. Overview")
    assert context_text("Valgrind Documentation", section, chunk, words) == (
        f"Valgrind Documentation › Helgrind: a thread error detector\n\n{chunk}"
    )
    deep = (
        "Using and understanding the Valgrind core",
        "2.7. Core Command-line Options",
        "2.7.3. Error-related Options that change how errors are reported",
        "2.7.3.1. Suppression files and the way they are read at startup",
    )
    line = context_text("Valgrind Documentation", deep, "Text.", words).split("\n\n")[0]
    assert words(line) <= MAX_CONTEXT_TOKENS
    assert line.startswith("Valgrind Documentation › ") and line.endswith(deep[-1])
