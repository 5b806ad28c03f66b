"""Which stored documents a question's words name by title or file name (the author and compare
tools answer only for those)."""

from __future__ import annotations

import pytest

from kgrag.executor.document_reads import document_terms, names_document


@pytest.mark.parametrize(
    ("target", "uri", "title"),
    [
        ("zephyr turbine", "/data/zephyr-turbine.md", "zephyr-turbine"),
        ("the flood report", "/data/flood-report.pdf", "Quarterly figures"),
        ("gzip", "/usr/share/doc/gzip/gzip-README", ""),
        ("the BSD license", "/licences/BSD.txt", ""),
        ("flood-report", "/data/Flood Report.pdf", ""),
    ],
)
def test_a_title_or_file_name_is_named(target: str, uri: str, title: str) -> None:
    assert names_document(document_terms(target), {"uri": uri, "title": title})


@pytest.mark.parametrize(
    ("target", "uri", "title"),
    [
        (
            "Ada Okafor",
            "/data/staff.txt",
            "Ada Okafor maintains the Feed Pump FP-2 and reports to Brian Keller",
        ),
        ("the first program", "/data/ada-lovelace.md", "Ada Lovelace"),
        ("turbine", "/data/zephyr-turbine-maintenance-schedule-2026.md", ""),
    ],
)
def test_a_few_shared_words_do_not_name_it(target: str, uri: str, title: str) -> None:
    assert not names_document(document_terms(target), {"uri": uri, "title": title})
