"""Table rows as chunk text, their citation labels, and the CSV/XLSX parsers' bounds, on real
files written by the csv module and openpyxl."""

from __future__ import annotations

import csv
from pathlib import Path

import openpyxl
import pytest

from kgrag.agent.answer import Citation
from kgrag.agent.synthesis import source_label
from kgrag.errors import IngestError
from kgrag.ingest.models import ParsedTable
from kgrag.ingest.spreadsheet import MAX_COLUMNS, parse_csv, parse_xlsx
from kgrag.ingest.table_rows import table_chunks


def _words(text: str) -> int:
    return len(text.split())


def test_rows_name_each_cell_by_its_column_and_keep_sheet_row_numbers() -> None:
    table = ParsedTable(
        index=0,
        sheet="Finance",
        header=("Metric", "", "2023"),
        rows=(("Revenue", "x", "12.4"), (), ("Costs", "", "9.9")),
    )
    chunks = table_chunks("doc_1", (table,), 5, _words, 200)
    assert [(c["id"], c["position"], c["table_row"]) for c in chunks] == [
        ("doc_1:t0r2", 5, 2),
        ("doc_1:t0r4", 6, 4),
    ]
    assert chunks[0]["text"] == "Finance — Metric: Revenue; column 2: x; 2023: 12.4"
    assert chunks[1]["text"] == "Finance — Metric: Costs; 2023: 9.9"
    assert {(c["table_id"], c["table"], c["sheet"]) for c in chunks} == {("doc_1:t0", 1, "Finance")}


def test_a_row_too_long_for_the_model_is_split_into_whole_cells_with_one_coordinate() -> None:
    header = tuple(f"c{i}" for i in range(30))
    table = ParsedTable(index=2, page=3, header=header, rows=(tuple("v" for _ in header),))
    chunks = table_chunks("d", (table,), 0, _words, 12)
    assert len(chunks) > 1
    assert all(_words(c["text"]) <= 12 for c in chunks)
    assert {(c["table"], c["table_row"], c["page"]) for c in chunks} == {(3, 2, 3)}
    cells = [cell for c in chunks for cell in c["text"].split("; ")]
    assert cells == [f"c{i}: v" for i in range(30)]
    assert len({c["id"] for c in chunks}) == len(chunks)


def test_citation_labels_name_sheet_or_page_table_and_row() -> None:
    base = {"marker": 1, "document_id": "d", "title": "finance.xlsx", "uri": "/x/finance.xlsx"}
    sheet = Citation(**base, node_id="d:t0r2", kind="chunk", table=1, sheet="Finance", row=2)
    assert source_label(sheet) == "(Source: finance.xlsx, sheet Finance, row 2)"
    pdf = Citation(**base, node_id="d:t1r3", kind="chunk", page=4, table=2, row=3)
    assert source_label(pdf) == "(Source: finance.xlsx, p. 4, table 2, row 3)"
    plain = Citation(**base, node_id="d:c0", kind="chunk", page=4)
    assert source_label(plain) == "(Source: finance.xlsx, p. 4)"


def test_csv_dialect_is_sniffed_and_trailing_empties_dropped(tmp_path: Path) -> None:
    text = "Name\tCity\t\nAda\tLondon\t\n\t\t\n\t\t\n"
    (table,) = parse_csv(tmp_path / "t.csv", text)
    assert table.header == ("Name", "City")
    assert table.rows == (("Ada", "London"),)


def test_csv_too_wide_is_refused_by_line(tmp_path: Path) -> None:
    text = "a,b\n" + ",".join(["x"] * (MAX_COLUMNS + 1)) + "\n"
    with pytest.raises(IngestError) as e:
        parse_csv(tmp_path / "wide.csv", text)
    assert f"line 2 has {MAX_COLUMNS + 1} fields" in e.value.reason


def test_xlsx_sheets_are_tables_and_empty_sheets_are_left_out(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    first = book.active
    assert first is not None
    first.title = "Q1"
    first.append(["Item", "Count", None])
    first.append(["bolts", 7.0, None])
    book.create_sheet("Blank")
    book.create_sheet("Q2").append(["Item"])
    path = tmp_path / "b.xlsx"
    book.save(path)
    tables = parse_xlsx(path, path.read_bytes())
    assert [(t.index, t.sheet, t.header, t.rows) for t in tables] == [
        (0, "Q1", ("Item", "Count"), (("bolts", "7"),)),
        (1, "Q2", ("Item",), ()),
    ]
    with pytest.raises(IngestError) as e:
        parse_xlsx(path, b"PK\x03\x04 not really a zip")
    assert e.value.reason.startswith("corrupt or unreadable XLSX")


def test_an_xlsx_that_unpacks_past_the_limit_is_refused_before_it_is_opened(
    tmp_path: Path,
) -> None:
    import zipfile

    from kgrag.ingest.spreadsheet import MAX_XLSX_UNPACKED_BYTES

    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z, z.open("xl/big.xml", "w") as f:
        block = b"\0" * (1 << 20)
        for _ in range(MAX_XLSX_UNPACKED_BYTES // len(block) + 1):
            f.write(block)
    assert path.stat().st_size < 1_000_000  # a small file that unpacks to over 128 MB
    with pytest.raises(IngestError) as e:
        parse_xlsx(path, path.read_bytes())
    assert "zip bomb" in e.value.reason and f"{MAX_XLSX_UNPACKED_BYTES:,}" in e.value.reason


DATA = Path(__file__).parents[1] / "data" / "tables"


def test_a_csv_written_without_a_header_keeps_its_first_row_as_data() -> None:
    """The head of Go's zip_sums.csv (module, version, h1 hash, SHA-256; no header line): its
    first row was the header, so every row named its cells by the first module's values
    ("9fans.net/go: github.com/..."), and the first module's hash was in no row."""
    path = DATA / "zip_sums_head.csv"
    (table,) = parse_csv(path, path.read_text(encoding="utf-8"))
    assert table.header == () and len(table.rows) == 30
    first = table_chunks("doc_1", (table,), 0, _words, 200)[0]
    assert first["id"] == "doc_1:t0r1" and first["table_row"] == 1
    assert first["text"].startswith("column 1: 9fans.net/go; column 2: v0.0.2; column 3: h1:RYM6")


def test_a_header_is_kept_over_numbers_codes_and_words(tmp_path: Path) -> None:
    cases = {
        "years.csv": [["Metric", "2022", "2023"], ["Revenue", "10.1", "12.4"], ["Costs", "8", "9"]],
        "ids.csv": [["id", "sha256"], ["1", "a" * 64], ["2", "b" * 64], ["3", "c" * 64]],
        "dates.csv": [["yyyymmdd", "n"], ["20240101", "3"], ["20240102", "4"]],
        "words.csv": [["Alice", "Paris"], ["Bob", "Lyon"], ["Carol", "Nice"]],
    }
    for name, rows in cases.items():
        with (tmp_path / name).open("w", newline="") as f:
            csv.writer(f).writerows(rows)
        (table,) = parse_csv(tmp_path / name, (tmp_path / name).read_text())
        assert table.header == tuple(rows[0]), name
    with (tmp_path / "matrix.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["0.5", "-1.25"], ["1.5", "2.0"], ["2.5", "3e-2"]])
    (matrix,) = parse_csv(tmp_path / "matrix.csv", (tmp_path / "matrix.csv").read_text())
    assert matrix.header == () and matrix.rows[0] == ("0.5", "-1.25")
