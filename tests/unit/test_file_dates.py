"""A file's dates read at ingestion (kgrag.ingest.file_dates), from real files written here."""

from __future__ import annotations

import io
import os
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pypdf

from kgrag.ingest.file_dates import FileDates, file_dates
from tests.support.pdfgen import pdf_bytes

CORE = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/'
    'core-properties" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    '<dcterms:created xsi:type="dcterms:W3CDTF">2018-02-03T04:05:06Z</dcterms:created>'
    '<dcterms:modified xsi:type="dcterms:W3CDTF">2022-07-08T09:10:11Z</dcterms:modified>'
    "</cp:coreProperties>"
)


def test_an_office_documents_core_properties_give_its_dates(tmp_path: Path) -> None:
    path = tmp_path / "plan.docx"
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("docProps/core.xml", CORE)
    moment = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
    os.utime(path, (moment, moment))
    assert file_dates(path, path.read_bytes(), suffix=".docx", on_disk=True) == FileDates(
        file_modified_at="2020-01-02T03:04:05+00:00",
        content_created_at="2018-02-03T04:05:06+00:00",
        content_modified_at="2022-07-08T09:10:11+00:00",
    )


def test_a_pdfs_information_dictionary_gives_its_dates(tmp_path: Path) -> None:
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(pdf_bytes(["A page."])))
    writer.add_metadata({"/CreationDate": "D:20190314093000+02'00'"})
    out = io.BytesIO()
    writer.write(out)
    dates = file_dates(tmp_path / "member.pdf", out.getvalue(), suffix=".pdf", on_disk=False)
    assert dates == FileDates(content_created_at="2019-03-14T07:30:00+00:00")


def test_damaged_metadata_gives_no_date_and_no_failure(tmp_path: Path) -> None:
    bad_pdf = b"%PDF-1.4\n" + b"\x00" * 100
    assert file_dates(tmp_path / "x.pdf", bad_pdf, suffix=".pdf", on_disk=False) == FileDates()
    not_a_zip = b"PK\x03\x04 not really"
    assert file_dates(tmp_path / "x.docx", not_a_zip, suffix=".docx", on_disk=False) == (
        FileDates()
    )
