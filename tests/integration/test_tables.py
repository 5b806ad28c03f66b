"""Tables as data, on both engines: spreadsheets (XLSX, CSV) and ruled PDF tables become ``Table``
nodes whose rows are chunks (``ROW_OF``), so a question naming a row and a column is answered from
that row (rule planner, no LLM) with a citation naming the sheet or page, table and row; a row of a
document the caller may not read never reaches the answer. Bad spreadsheets and PDFs fail by name
in the same run as good files, which are ingested."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

import openpyxl

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.audit import build_audit, render_audit_html
from kgrag.config import Settings
from kgrag.core import OPERATOR
from kgrag.graph.store import GraphStore
from kgrag.ingest.spreadsheet import MAX_SCANNED_CELLS
from kgrag.modalities import factory
from tests.support.pdfgen import write_pdf, write_table_pdf


def _workbook(path: Path, sheets: dict[str, list[list[object]]]) -> Path:
    book = openpyxl.Workbook()
    first = True
    for name, rows in sheets.items():
        sheet = book.active if first else book.create_sheet()
        assert sheet is not None
        sheet.title = name
        first = False
        for row in rows:
            sheet.append(row)
    book.save(path)
    return path


def million_empty_cells_xlsx(path: Path) -> Path:
    """A real workbook (written by openpyxl) whose sheet XML is then given 1,000,020 formatted
    empty cells below its two cells of data: what a sheet formatted down to the bottom holds."""
    base = io.BytesIO()
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Padded"
    sheet.append(["Item", "Count"])
    sheet.append(["bolts", 7])
    book.save(base)
    columns = [chr(65 + i) for i in range(20)]
    with zipfile.ZipFile(base) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                xml = data.decode()
                cut = xml.index("</sheetData>")
                padding = "".join(
                    f'<row r="{r}">' + "".join(f'<c r="{c}{r}" s="0"/>' for c in columns) + "</row>"
                    for r in range(3, 50_004)
                )
                data = (xml[:cut] + padding + xml[cut:]).encode()
            out.writestr(info, data)
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tables")
    return {
        "finance": _workbook(
            folder / "finance.xlsx",
            {
                "Finance": [
                    ["Metric", "2022", "2023"],
                    ["Revenue", 10.5, 12.4],
                    ["Operating costs", 8, 9.9],
                    [],
                    ["Headcount", 41, 47],
                ],
                "Notes": [["Note"], ["Figures are in EUR million, audited by Quill and Sons."]],
            },
        ),
        "warehouses": _write(
            folder / "warehouses.csv",
            "Warehouse;City;Pallets shipped\nWH-1;Rotterdam;4210\nWH-2;Antwerp;3880\n",
        ),
        "sales": write_table_pdf(
            folder / "sales.pdf",
            "Regional sales report, in EUR million.",
            ["Region", "2022", "2023"],
            [["North", "14.2", "15.8"], ["South", "9.1", "11.3"]],
        ),
        "secret": _workbook(
            folder / "payroll.xlsx",
            {"Payroll": [["Employee", "Salary 2023"], ["Zebulon Quartermaine", 98765]]},
        ),
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def store(module_store: GraphStore) -> GraphStore:
    return module_store


@pytest.fixture(scope="module")
def agent(store: GraphStore, corpus: dict[str, Path]) -> KnowledgeAgent:
    a = KnowledgeAgent(store, factory.text_embedder(Settings()))
    public = [str(corpus[k]) for k in ("finance", "warehouses", "sales")]
    report = a.ingest(public)
    assert (report.ingested, report.failed) == (3, 0), report.failures
    assert a.ingest([str(corpus["secret"])], acl=["user:alice"]).failed == 0
    return a


def test_value_in_a_column_is_answered_from_its_row_and_cited_by_sheet_and_row(
    agent: KnowledgeAgent,
) -> None:
    answer = agent.ask("What is the value of Revenue in the 2023 column?")
    assert answer.mode == "extractive"
    assert "2023: 12.4" in answer.answer, answer.answer
    first = answer.citations[0]
    assert (first.sheet, first.row, first.table) == ("Finance", 2, 1), first
    assert first.uri is not None and first.uri.endswith("finance.xlsx")
    assert "sheet Finance, row 2" in answer.answer
    # the audit of the answer names the same place
    audit = build_audit(agent.store, answer.query_id, OPERATOR)
    source = next(x for x in audit.sources if x.marker == first.marker)
    assert (source.sheet, source.row, source.table) == ("Finance", 2, 1)
    assert "sheet Finance, row 2" in render_audit_html(audit)
    # the row below (same columns, other values) is not what the answer quotes first
    assert answer.answer.index("12.4") < answer.answer.find("9.9") or "9.9" not in answer.answer


def test_csv_row_is_cited_by_row(agent: KnowledgeAgent) -> None:
    answer = agent.ask("How many pallets did the Antwerp warehouse ship?")
    assert "3880" in answer.answer, answer.answer
    first = answer.citations[0]
    assert first.uri is not None and first.uri.endswith("warehouses.csv")
    assert (first.sheet, first.table, first.row) == (None, 1, 3), first


def test_pdf_table_row_is_cited_by_page_table_and_row(agent: KnowledgeAgent) -> None:
    answer = agent.ask("What were the sales of the South region in 2023?")
    assert "2023: 11.3" in answer.answer, answer.answer
    row = next(c for c in answer.citations if c.row is not None)
    assert (row.page, row.table, row.row) == (1, 1, 3), row
    assert "p. 1, table 1, row 3" in answer.answer


def test_tables_and_rows_are_in_the_graph(store: GraphStore, agent: KnowledgeAgent) -> None:
    rows = store.read_freeform(
        "MATCH (t:Table)-[:PART_OF]->(d:Document) "
        "OPTIONAL MATCH (c:Chunk)-[:ROW_OF]->(t) WHERE (c)-[:PART_OF]->(d) "
        "RETURN d.uri AS uri, t.sheet AS sheet, t.page AS page, t.number AS number, "
        "t.header AS header, t.row_count AS row_count, count(c) AS chunks "
        "ORDER BY uri, number"
    )
    found = {(Path(r["uri"]).name, r["sheet"], r["page"], r["number"]): r for r in rows}
    assert set(found) == {
        ("finance.xlsx", "Finance", None, 1),
        ("finance.xlsx", "Notes", None, 2),
        ("payroll.xlsx", "Payroll", None, 1),
        ("sales.pdf", None, 1, 1),
        ("warehouses.csv", None, None, 1),
    }
    finance = found[("finance.xlsx", "Finance", None, 1)]
    assert list(finance["header"]) == ["Metric", "2022", "2023"]
    # 4 rows kept (the empty one too, so numbers stay the sheet's), 3 with content are chunks
    assert (finance["row_count"], finance["chunks"]) == (4, 3)


def test_rows_of_a_document_the_caller_may_not_read_stay_hidden(agent: KnowledgeAgent) -> None:
    question = "What is the Salary 2023 of Zebulon Quartermaine?"
    bob = agent.ask(question, user="bob")
    assert "98765" not in bob.answer
    assert not any(c.uri and c.uri.endswith("payroll.xlsx") for c in bob.citations)
    alice = agent.ask(question, user="alice")
    assert "98765" in alice.answer, alice.answer
    assert alice.citations[0].sheet == "Payroll" and alice.citations[0].row == 2


def test_bad_tables_and_pdfs_fail_by_name_and_the_rest_is_ingested(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    import pypdf

    padded = million_empty_cells_xlsx(tmp_path / "padded.xlsx")
    corrupt = tmp_path / "corrupt.xlsx"
    data = _workbook(tmp_path / "whole.xlsx", {"S": [["a"], ["b"]]}).read_bytes()
    corrupt.write_bytes(data[: len(data) // 2])  # a partial download: no central directory
    (tmp_path / "whole.xlsx").unlink()
    plain = write_pdf(tmp_path / "plain.pdf", ["A locked report about the Obsidian project."])
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(plain))
    writer.encrypt("open sesame")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as f:
        writer.write(f)
    plain.unlink()
    good = _write(tmp_path / "tools.csv", "Tool,Owner\nTorque wrench TW-5,Imogen Fairweather\n")

    report = agent.ingest([str(padded), str(corrupt), str(locked), str(good)])
    reasons = {Path(f.path).name: f.reason for f in report.failures}
    assert set(reasons) == {"padded.xlsx", "corrupt.xlsx", "locked.pdf"}, reasons
    assert f"more than {MAX_SCANNED_CELLS:,}" in reasons["padded.xlsx"]
    assert "sheet 'Padded'" in reasons["padded.xlsx"]
    assert reasons["corrupt.xlsx"].startswith("corrupt or unreadable XLSX")
    assert "password-protected" in reasons["locked.pdf"]
    assert report.ingested == 1
    answer = agent.ask("Who owns the Torque wrench TW-5?")
    assert "Imogen Fairweather" in answer.answer
    assert answer.citations[0].row == 2


def test_a_changed_spreadsheet_replaces_its_table_and_rows(
    agent: KnowledgeAgent, store: GraphStore, tmp_path: Path
) -> None:
    path = _write(tmp_path / "depots.csv", "Depot;Trucks\nDP-7 Ashford;12\nDP-9 Brixham;31\n")
    assert agent.ingest([str(path)]).ingested == 1
    path.write_text("Depot;Trucks\nDP-7 Ashford;12\n", encoding="utf-8")
    assert agent.ingest([str(path)]).ingested == 1
    rows = store.read_freeform(
        "MATCH (d:Document) WHERE d.uri = $uri "
        "OPTIONAL MATCH (t:Table)-[:PART_OF]->(d) OPTIONAL MATCH (c:Chunk)-[:ROW_OF]->(t) "
        "RETURN d.id AS id, count(DISTINCT t) AS tables, count(DISTINCT c) AS rows",
        {"uri": str(path)},
    )
    assert [(r["tables"], r["rows"]) for r in rows] == [(1, 1)]
    orphans = store.read_freeform(
        "MATCH (t:Table) WHERE NOT (t)-[:PART_OF]->(:Document) RETURN count(t) AS n"
    )
    assert orphans[0]["n"] == 0
    answer = agent.ask("How many trucks does depot DP-9 Brixham have?")
    assert "31" not in answer.answer


def test_a_csv_without_a_header_is_answered_from_its_first_row(
    agent: KnowledgeAgent, store: GraphStore, tmp_path: Path
) -> None:
    """The head of Go's zip_sums.csv (tests/data/tables; module, version, h1 hash, SHA-256, no
    header line): the first module's hash is row 1, stored with an empty header."""
    path = tmp_path / "zip_sums.csv"
    path.write_bytes((Path(__file__).parents[1] / "data/tables/zip_sums_head.csv").read_bytes())
    assert agent.ingest([str(path)]).ingested == 1
    answer = agent.ask("What is the h1 hash of 9fans.net/go v0.0.2?")
    assert "h1:RYM6lWITV8oADrwLfdzxmt8ucfW6UtP9v1jg4qAbqts=" in answer.answer, answer.answer
    first = answer.citations[0]
    assert first.uri == str(path) and (first.table, first.row) == (1, 1), first
    (table,) = store.read_freeform(
        "MATCH (t:Table)-[:PART_OF]->(d:Document {uri: $uri}) "
        "RETURN t.header AS header, t.row_count AS rows",
        {"uri": str(path)},
    )
    assert (list(table["header"] or []), table["rows"]) == ([], 30)
