"""A document titled by its file's name reads like a title: the underscores a file name writes
for spaces are spaces ("nnapi_supported_ops.md" is "nnapi supported ops"; before, the title kept
the underscores), its extension is dropped, and hyphens stay. A citation still names the file
whole, whether the title was stored as read now or as an older store holds it. Real files of
tests/data: a README that is one table, an HTML page with a generic first heading, an
OpenDocument drawing and libtasn1's manual pages as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.agent.synthesis import source_label
from kgrag.core import Hit
from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs
from kgrag.text.file_names import spaced_name

DATA = Path(__file__).resolve().parents[1] / "data"


def _title(path: Path) -> str:
    (found,) = expand_inputs([str(path)]).items
    return parse(found, 10_000_000).title


@pytest.mark.parametrize(
    ("path", "title"),
    [
        (DATA / "markdown_tables" / "nnapi_supported_ops.md", "nnapi supported ops"),
        (DATA / "formats" / "go_mem_head.html", "go mem head"),
    ],
)
def test_a_file_named_document_is_titled_as_a_title(path: Path, title: str) -> None:
    assert _title(path) == title


def test_a_picture_titled_by_its_name_reads_as_words(tmp_path: Path) -> None:
    from PIL import Image

    path = tmp_path / "orchid_flower.png"
    Image.new("RGB", (64, 48), "purple").save(path)
    assert _title(path) == "orchid flower"


@pytest.mark.parametrize(
    ("stem", "title"),
    [
        ("nnapi_supported_ops", "nnapi supported ops"),
        ("CODE_OF_CONDUCT", "CODE OF CONDUCT"),
        ("IMG_2041", "IMG 2041"),
        ("release__notes", "release notes"),
        ("zstd-1.5.4", "zstd-1.5.4"),  # hyphens stay: versions, dates, compound words
        ("2024-03-01_minutes", "2024-03-01 minutes"),
        ("__init__", "__init__"),  # underscores at the ends are the name's own
        ("Zürich_Übersicht", "Zürich Übersicht"),
    ],
)
def test_underscores_between_words_are_spaces(stem: str, title: str) -> None:
    assert spaced_name(stem, title=True) == title


@pytest.mark.parametrize("title", ["nnapi supported ops", "nnapi_supported_ops"])
def test_a_citation_of_a_file_named_document_names_the_file(title: str) -> None:
    """As ingestion titles it now, and as an older store holds it."""
    hit = Hit(id="c", kind="chunk", score=1.0, title=title, uri="/d/nnapi_supported_ops.md")
    assert source_label(hit) == "(Source: nnapi_supported_ops.md)"
