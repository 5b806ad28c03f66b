"""An e-mail whose HTML body breaks the HTML reader is read all the same, the reason named.

Found with a real page: libffi's manual index (tests/data/mail_html/SOURCE.md) sent as a
message's only body, one of its table spans written ``colspan="⁴"``, made the HTML reader raise
``ValueError`` and the whole message failed (its headers, sender and date lost). The body is now
read with its tags dropped, and the report names the part and the reader that broke on it, as a
skip; a message whose HTML reads well is read by the HTML reader as before. The reader no longer
breaks on that span (a superscript digit is no number: span 1); that it broke is kept here by a
registered HTML reader raising what it raised (the registry is the extension point a plugin
reader uses, as in tests/unit/test_unexpected_reader_errors.py)."""

from __future__ import annotations

import gzip
from email.message import EmailMessage
from pathlib import Path

import pytest

from kgrag.ingest import formats
from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.formats import registry
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent
from kgrag.ingest.models import SourceItem
from kgrag.ingest.sources import expand_inputs

PAGE = Path(__file__).parents[1] / "data" / "mail_html" / "libffi-index.html.gz"


def _message(folder: Path, html: str) -> Path:
    msg = EmailMessage()
    msg["From"] = "Ada Lovelace <ada@example.org>"
    msg["To"] = "team@example.org"
    msg["Subject"] = "The libffi manual's index"
    msg["Date"] = "Fri, 01 Mar 2024 09:30:00 +0000"
    msg.set_content(html, subtype="html")
    path = folder / "index.eml"
    path.write_bytes(msg.as_bytes())
    return path


def _parsed(path: Path):  # type: ignore[no-untyped-def]
    (item,) = expand_inputs([str(path)]).items
    return parse_all(item, 1_000_000)


def _damaged() -> str:
    page = gzip.decompress(PAGE.read_bytes()).decode("utf-8")
    damaged = page.replace('colspan="4"', 'colspan="\u2074"', 1)
    assert damaged != page
    return damaged


@pytest.fixture
def breaking_html_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The HTML reader, raising on a span written ``"⁴"`` what the reader raised before."""
    html = formats.for_suffix(".html")
    assert html is not None

    def parse(item: SourceItem, data: bytes) -> ParsedContent:
        if 'colspan="\u2074"'.encode() in data:
            int("\u2074")  # ValueError: invalid literal for int() with base 10: '⁴'
        return html.parse(item, data)

    breaking = DocumentFormat(name=html.name, suffixes=html.suffixes, mime=html.mime, parse=parse)
    for suffix in html.suffixes:
        monkeypatch.setitem(registry._BY_SUFFIX, suffix, breaking)


@pytest.mark.usefixtures("breaking_html_reader")
def test_a_body_that_breaks_the_html_reader_is_read_with_its_tags_dropped(
    tmp_path: Path,
) -> None:
    path = _message(tmp_path, _damaged())
    parsed = _parsed(path)
    (doc,) = parsed.documents
    text = "\n".join(p.text for p in doc.pages)
    assert "Subject: The libffi manual's index" in text
    assert "ffi_prep_cif" in text and "<td" not in text
    (refused,) = parsed.refused
    assert refused.path == f"{path}!HTML body" and not refused.explicit  # a skip, not a failure
    assert refused.kind == "unreadable"
    assert refused.reason.startswith("the HTML reader failed (ValueError: invalid literal")
    assert refused.reason.endswith("the message's HTML body was read with its tags dropped")


def test_a_body_the_html_reader_reads_is_read_by_it(tmp_path: Path) -> None:
    parsed = _parsed(_message(tmp_path, gzip.decompress(PAGE.read_bytes()).decode("utf-8")))
    (doc,) = parsed.documents
    assert "Jump to:" in "\n".join(p.text for p in doc.pages)
    assert parsed.refused == ()


def test_the_html_reader_reads_a_span_written_with_a_superscript_digit(tmp_path: Path) -> None:
    parsed = _parsed(_message(tmp_path, _damaged()))
    (doc,) = parsed.documents
    assert "Jump to:" in "\n".join(p.text for p in doc.pages)
    assert parsed.refused == ()
    page = tmp_path / "Index.html"
    page.write_text(_damaged(), "utf-8")
    (read,) = _parsed(page).documents
    assert any("ffi_prep_cif" in cell for t in read.tables for row in t.rows for cell in row)
