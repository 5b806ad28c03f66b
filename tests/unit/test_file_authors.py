"""A file's authors read at ingestion (kgrag.ingest.file_authors), from real files: those of
tests/data/authors (made with LibreOffice, see its SOURCE.md), a Markdown front matter and an
e-mail message."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.ingest.containers.mail import read_message
from kgrag.ingest.file_authors import author_names, author_words, file_authors

DATA = Path(__file__).resolve().parents[1] / "data" / "authors"


@pytest.mark.parametrize(
    ("name", "authors"),
    [
        ("harbour.pdf", ("Maria Schmidt",)),  # the information dictionary's /Author
        ("kiln.docx", ("Ken Thompson",)),  # docProps/core.xml dc:creator
        ("apiary.odt", ("Jane Doe",)),  # meta.xml dc:creator
        ("pruning.html", ("Ada Lovelace",)),  # <meta name="author">, its address dropped
        ("greenhouse.docx", ()),  # "Administrator" names no one
    ],
)
def test_the_authors_a_files_own_metadata_names(name: str, authors: tuple[str, ...]) -> None:
    path = DATA / name
    assert file_authors(path.read_bytes(), suffix=path.suffix, mime="") == authors


def test_names_are_normalised_and_placeholders_dropped() -> None:
    raw = [
        "  Ken   Thompson <ken@example.org>",
        "dmr@example.org (Dennis Ritchie)",
        "ftpmaster@example.org",
        "Thompson, Ken; Unknown",
        "openpyxl",
        "KEN THOMPSON",
        None,
        "",
    ]
    assert author_names(raw) == (
        "Ken Thompson",
        "Dennis Ritchie",
        "ftpmaster@example.org",
        "Thompson, Ken",
    )


def test_a_markdown_front_matter_names_its_authors() -> None:
    single = b"---\ntitle: Release notes\nauthor: Grace Hopper\n---\n# Notes\n"
    listed = (
        b"---\nauthors:\n  - name: Ada Lovelace\n    email: ada@example.org\n"
        b"  - Alan Turing\n---\nText\n"
    )
    flow = b"---\nauthor: [Ada Lovelace, Alan Turing]\n---\nText\n"
    assert file_authors(single, suffix=".md", mime="text/markdown") == ("Grace Hopper",)
    assert file_authors(listed, suffix=".md", mime="text/markdown") == (
        "Ada Lovelace",
        "Alan Turing",
    )
    assert file_authors(flow, suffix=".md", mime="text/markdown") == (
        "Ada Lovelace",
        "Alan Turing",
    )
    assert file_authors(b"# No front matter\n", suffix=".md", mime="text/markdown") == ()


def test_damaged_metadata_gives_no_author_and_no_failure() -> None:
    assert file_authors(b"%PDF-1.4\n" + b"\x00" * 100, suffix=".pdf", mime="") == ()
    assert file_authors(b"PK\x03\x04 not really", suffix=".docx", mime="") == ()


def test_a_messages_author_is_its_sender() -> None:
    message = read_message(
        b"From: Maria Schmidt <maria@example.org>\r\nTo: ops@example.org\r\n"
        b"Subject: Dredging\r\n\r\nThe channel is clear.\r\n"
    )
    assert message.authors == ("Maria Schmidt",)


def test_the_words_an_author_is_matched_by() -> None:
    assert author_words("Debian's FTP masters") == ["debian", "ftp", "masters"]
    assert author_words("Thompson, Ken") == ["thompson", "ken"]
