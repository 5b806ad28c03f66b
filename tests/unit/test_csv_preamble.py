"""A CSV or TSV's leading comment lines are its description, not rows; the last one names the
columns when it fits them.

Found on a folder of real files (BENCHMARKS.md, "A ninth folder"): the tz database's
``zone1970.tab`` saved as ``zone1970.tsv`` starts with 36 ``#`` lines (what the file is, then
``#codes<TAB>coordinates<TAB>TZ<TAB>comments``). The first comment line was the header, so every
row read "# tzdb timezone descriptions: AF; column 2: +3431+06912; column 3: Asia/Kabul", and
each comment line was a row of its own."""

from __future__ import annotations

from pathlib import Path

from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs
from kgrag.ingest.table_rows import row_text

ZONES = Path(__file__).parents[1] / "data" / "subject_only" / "zone1970.tab"
LIMIT = 10_000_000


def _parse(path: Path):  # type: ignore[no-untyped-def]
    (found,) = expand_inputs([str(path)]).items
    return parse(found, LIMIT)


def test_the_comment_lines_name_the_columns_and_describe_the_file(tmp_path: Path) -> None:
    path = tmp_path / "zone1970.tsv"
    path.write_bytes(ZONES.read_bytes())
    doc = _parse(path)
    (table,) = doc.tables
    assert table.header == ("codes", "coordinates", "TZ", "comments")
    kabul = next(r for r in table.rows if "Asia/Kabul" in r)
    assert row_text(table.header, kabul) == "codes: AF; coordinates: +3431+06912; TZ: Asia/Kabul"
    assert not any(cell.startswith("#") for row in table.rows for cell in row)
    assert len(table.rows) == sum(
        1 for line in ZONES.read_text().splitlines() if line and not line.startswith("#")
    )
    (page,) = doc.pages
    assert "This file is in the public domain." in page.text


def test_comments_that_do_not_fit_the_columns_leave_the_header_to_the_first_row(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ports.csv"
    path.write_text("# exported 2026-11-27\n#\nservice,port\nssh,22\nhttp,80\n")
    doc = _parse(path)
    (table,) = doc.tables
    assert table.header == ("service", "port")
    assert table.rows == (("ssh", "22"), ("http", "80"))
    assert doc.pages[0].text == "exported 2026-11-27"
