"""A table's first row is data when it repeats its columns' values.

Found on the twelfth real folder (BENCHMARKS.md): PostgreSQL's ``sql_features.txt`` (tab
separated, no header; copied unchanged from ``/usr/share/postgresql/15``) was read with its
first row, feature "B011 Embedded Ada ... NO", as the header, so every row read "B011: E021;
Embedded Ada: Character string types; ...; NO: YES", and the row of feature B011 was lost.
distro-info's ``debian.csv``, which has a header, keeps it."""

from __future__ import annotations

from pathlib import Path

from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs
from kgrag.ingest.spreadsheet import is_header

DATA = Path(__file__).parents[1] / "data" / "header_rows"


def _table(name: str):  # type: ignore[no-untyped-def]
    (found,) = expand_inputs([str(DATA / name)]).items
    (table,) = parse(found, 10_000_000).tables
    return table


def test_a_first_row_holding_a_repeated_value_of_its_column_is_data() -> None:
    table = _table("sql_features.tsv")
    assert table.header == ()
    assert table.rows[0] == ("B011", "Embedded Ada", "", "", "NO", "")
    assert (
        "E021",
        "Character string types",
        "04",
        "CHARACTER_LENGTH function",
        "YES",
        "trims trailing spaces from CHARACTER values before counting",
    ) in table.rows


def test_a_header_naming_its_columns_stays_a_header() -> None:
    table = _table("debian.csv")
    assert table.header[:3] == ("version", "codename", "series")
    assert table.rows[16][:3] == ("12", "Bookworm", "bookworm")


def test_a_label_met_once_in_its_column_is_still_a_label() -> None:
    body = [("a", "yes"), ("b", "status"), ("c", "no"), ("d", "yes")]
    assert is_header(("name", "status"), body)
    assert not is_header(("x", "yes"), body)
