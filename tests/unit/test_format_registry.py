"""A registered document format is accepted by source expansion and parsed by its own parser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.errors import IngestError
from kgrag.ingest import parsers, sources
from kgrag.ingest.decoding import decode_utf8
from kgrag.ingest.formats import registry
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent
from kgrag.ingest.models import ParsedPage, SourceItem


def _shout(item: SourceItem, data: bytes) -> ParsedContent:
    text = decode_utf8(item.path, data)
    return ParsedContent(title=None, pages=(ParsedPage(text=text.upper()),))


@pytest.fixture
def shout_format() -> Iterator[DocumentFormat]:
    fmt = registry.register(DocumentFormat("shout", (".shout",), "text/x-shout", _shout))
    try:
        yield fmt
    finally:
        registry._BY_SUFFIX.pop(".shout", None)


def test_a_registered_suffix_is_expanded_and_parsed_by_its_format(
    shout_format: DocumentFormat, tmp_path: Path
) -> None:
    note = tmp_path / "Note.SHOUT"
    note.write_text("quiet words\n")
    assert sources.unsupported_reason(".x").count(".shout") == 1
    expanded = sources.expand_inputs([str(tmp_path)])
    (item,) = expanded.items
    assert (item.modality, item.mime) == ("text", "text/x-shout")
    doc = parsers.parse(item, 1_000)
    assert doc.title == "Note"
    assert [p.text for p in doc.pages] == ["QUIET WORDS\n"]


def test_a_suffix_has_one_format(shout_format: DocumentFormat) -> None:
    with pytest.raises(ValueError, match="already parsed by format shout"):
        registry.register(DocumentFormat("other", (".shout",), "text/plain", _shout))
    with pytest.raises(ValueError, match="lower case with a dot"):
        registry.register(DocumentFormat("bad", ("SHOUT",), "text/plain", _shout))


def test_a_format_parser_error_names_the_file(shout_format: DocumentFormat, tmp_path: Path) -> None:
    bad = tmp_path / "latin.shout"
    bad.write_bytes(b"caf\xe9\n")
    (item,) = sources.expand_inputs([str(bad)]).items
    with pytest.raises(IngestError) as err:
        parsers.parse(item, 1_000)
    assert err.value.path == str(bad)
    assert "byte 0xe9 at offset 3 (line 1, column 4)" in err.value.reason
