"""A document under a text file's name is read by its own format.

Found on a folder of real files (BENCHMARKS.md, "A tenth folder"): a LibreOffice spreadsheet of
ISO 4217 currency codes saved as ``currency codes.csv`` failed as "not valid UTF-8: byte 0x85 at
offset 14 ..., is it a binary file?"."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.ingest.parsers import parse
from kgrag.ingest.sniff import document_suffix
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data"
SHEET = DATA / "document_by_content" / "currencies.ods"
LIMIT = 10_000_000


def _rows(path: Path) -> tuple[str, str]:
    (found,) = expand_inputs([str(path)]).items
    doc = parse(found, LIMIT)
    rows = "\n".join(str(row) for table in doc.tables for row in table.rows)
    return doc.source.mime, rows


@pytest.mark.parametrize("name", ["currency codes.csv", "currency codes.txt"])
def test_a_spreadsheet_under_a_text_name_is_read_as_one(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(SHEET.read_bytes())
    mime, rows = _rows(path)
    assert mime == "application/vnd.oasis.opendocument.spreadsheet"
    assert "Swiss Franc" in rows and "756" in rows
    assert (mime, rows) == _rows(SHEET)  # as under its own name


def test_office_files_under_other_names_are_told_by_their_bytes() -> None:
    assert document_suffix(SHEET.read_bytes()) == ".ods"
    assert document_suffix((DATA / "formats" / "orchard.odt").read_bytes()) == ".odt"
    assert document_suffix((DATA / "formats" / "lighthouse.docx").read_bytes()) == ".docx"
    assert document_suffix(b"code,name\nCHF,Swiss Franc\n") is None
    assert document_suffix(b"PK\x03\x04 not a zip") is None
