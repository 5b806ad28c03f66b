"""A long reStructuredText source is read in pieces, in time linear in its length.

docutils copies the rest of the document for each list, field list and block of explicit markup
it parses, so one parse of a long document is quadratic: scikit-learn's diabetes dataset notes
(tests/data/dataset_notes, a title, a field list, a bullet list) repeated to 340 KB made its state
machine copy 1.05 million lines, to 680 KB 4.19 million. The reader now cuts a source longer than
``PIECE_CHARS`` before titles of its top level and parses each piece: the copies grow with the
length (counted, not timed), and the text read is the text of the whole."""

from __future__ import annotations

from pathlib import Path

from kgrag.ingest.formats.rst import PIECE_CHARS, _read, parse_rst, rst_pieces
from kgrag.ingest.models import SourceItem
from tests.support.rst_copies import copied_lines

NOTES = Path(__file__).parents[1] / "data" / "dataset_notes" / "diabetes.rst"
ITEM = SourceItem(path=NOTES, modality="text", mime="text/x-rst")


def _repeated(size: int) -> str:
    source = NOTES.read_text("utf-8")
    return source * (size // len(source))


def _copies(size: int) -> int:
    with copied_lines() as count:
        parse_rst(ITEM, _repeated(size).encode())
    return count[0]


def test_reading_twice_the_text_copies_about_twice_the_lines() -> None:
    small, large = _copies(340_000), _copies(680_000)
    assert large <= 2.2 * small, (small, large)  # whole: 1,052,227 -> 4,185,253 (x4)


def test_the_pieces_are_the_source_cut_before_top_level_titles() -> None:
    source = _repeated(340_000)
    pieces = rst_pieces(source)
    assert "".join(pieces) == source and len(pieces) > 1
    assert all(p.startswith("Diabetes dataset\n----") for p in pieces[1:])
    assert all(len(p) >= PIECE_CHARS for p in pieces[:-1])
    assert rst_pieces(NOTES.read_text("utf-8")) == [NOTES.read_text("utf-8")]


def test_the_text_read_in_pieces_is_the_text_of_the_whole() -> None:
    source = _repeated(200_000)
    whole, title = _read(ITEM, source)
    read = parse_rst(ITEM, source.encode())
    assert read.pages[0].text == whole and read.title == title == "Diabetes dataset"
