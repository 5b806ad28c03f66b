"""A table row read back for the support test (kgrag.agent.rows, kgrag.ingest.table_rows), on the
real ISO 3166 country table of the tz database (/usr/share/zoneinfo/iso3166.tab) made rows as
kgrag stores them. Without a text model only words as written count."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kgrag.agent.rows import relates, rows_relate, table_bridged, table_names
from kgrag.agent.support import subject_phrases
from kgrag.core import Hit
from kgrag.ingest.models import ParsedTable
from kgrag.ingest.table_rows import read_row, table_chunks
from kgrag.text.file_names import file_words, spaced_name
from tests.support.row_hits import row_hit

ISO3166 = Path("/usr/share/zoneinfo/iso3166.tab")

pytestmark = pytest.mark.skipif(not ISO3166.exists(), reason="tzdata is not installed")


def _rows() -> list[Hit]:
    lines = ISO3166.read_text(encoding="utf-8").splitlines()
    data = tuple(tuple(line.split("\t")) for line in lines if line and not line.startswith("#"))
    table = ParsedTable(index=0, sheet="country codes", header=("code", "country"), rows=data)
    chunks = table_chunks("doc_1", (table,), 0, lambda t: len(t.split()), 200)
    return [
        row_hit(
            c["text"],
            id=c["id"],
            title="country codes",
            uri="/data/iso_3166.xlsx",
            table=c["table"],
            sheet=c["sheet"],
            row=c["table_row"],
        )
        for c in chunks
    ]


def _row(code: str) -> Hit:
    return next(h for h in _rows() if f"code: {code};" in (h.text or ""))


def test_a_row_reads_back_as_its_context_and_cells() -> None:
    rows = _rows()
    assert len(rows) > 240
    nz = read_row(_row("NZ").text or "")
    assert (nz.context, nz.cells) == ("country codes", (("code", "NZ"), ("country", "New Zealand")))
    assert read_row("Operator: ai.onnx:Conv; Note: Only 2D Conv is supported.").cells == (
        ("Operator", "ai.onnx:Conv"),
        ("Note", "Only 2D Conv is supported."),
    )


def test_a_rows_table_is_known_by_its_sheet_title_and_file_name() -> None:
    # the sheet (the context its text starts with) and the title are one name, the file another
    assert table_names(_row("NZ")) == ["country codes", "iso 3166"]
    assert file_words("/x/nnapi_supported_ops.md") == "nnapi supported ops"
    assert file_words("/x/iso-codes README.md.gz") == "iso-codes README"
    assert spaced_name("iso_4217") == "iso 4217"
    paragraph = Hit(id="c1", kind="chunk", score=0.0, text="New Zealand", title="atlas")
    assert table_names(paragraph) == []


@pytest.mark.parametrize(
    ("question", "related"),
    [
        ("Which country has the code NZ?", True),  # a column and a cell
        ("What is New Zealand?", True),  # every word in one cell: what the row is
        ("What is the population of New Zealand?", False),  # the name cell alone
        ("What is the distance between Wellington and New Zealand?", False),
    ],
)
def test_a_row_relates_two_words_of_the_question_in_two_places(
    question: str, related: bool
) -> None:
    assert relates(question, _row("NZ"), None) is related


def test_only_answers_quoting_rows_alone_are_judged_by_their_rows() -> None:
    question = "What is the population of New Zealand?"
    paragraph = Hit(id="c1", kind="chunk", score=0.0, text="New Zealand has 5 million people.")
    assert not rows_relate(question, [_row("NZ"), _row("AU")], None)
    assert rows_relate(question, [_row("NZ"), paragraph], None)
    assert rows_relate(question, [], None)


README = Path("/usr/share/doc/iso-codes/README.md.gz")


@pytest.mark.skipif(not README.exists(), reason="iso-codes is not installed")
def test_a_row_is_bridged_by_prose_naming_its_table_beside_the_question_names() -> None:
    """iso-codes' README writes "* ISO 4217 (currencies):": a row of a sheet of currencies is
    about what the question names. A row of a copy of that table in another file repeats the
    sheet's name beside a value, and bridges nothing."""
    readme = gzip.decompress(README.read_bytes()).decode("utf-8")
    prose = Hit(id="r1", kind="chunk", score=0.0, text=readme, document_id="doc_r", title="README")
    yen = row_hit(
        "currencies — alpha_3: JPY; numeric: 392; name: Yen",
        id="c74",
        document_id="doc_x",
        title="currencies",
        uri="/data/currencies.xlsx",
        sheet="currencies",
        row=74,
    )
    mark = yen.model_copy(
        update={"id": "c12", "row": 12, "text": "currencies — alpha_3: BAM; numeric: 977"}
    )
    copy = yen.model_copy(update={"id": "o74", "document_id": "doc_o", "uri": "/o/codes.ods"})
    assert table_bridged("What is the numeric ISO 4217 code of the yen?", [yen], [prose], None)
    assert not table_bridged("What is the numeric ISO 4217 code of the yen?", [yen], [yen], None)
    assert not table_bridged("Which currency has the numeric code 392?", [mark], [copy], None)


NNAPI = Path(__file__).parents[1] / "data" / "markdown_tables" / "nnapi_supported_ops.md"


def test_a_rows_file_name_is_where_it_names_its_subject() -> None:
    """ONNX Runtime's ``nnapi_supported_ops.md`` says "NNAPI" only in its name: its rows hold
    the question's two name phrases, "NNAPI" in their leads (kgrag.agent.support.leads)."""
    line = next(x for x in NNAPI.read_text(encoding="utf-8").splitlines() if ":Conv|" in x)
    assert line.startswith("|ai.onnx:Conv|Only 2D Conv is supported.")
    conv = row_hit(
        "Operator: ai.onnx:Conv; Note: Only 2D Conv is supported.",
        id="c9",
        title="nnapi_supported_ops",
        uri=str(NNAPI),
        row=9,
    )
    question = "What restrictions does NNAPI have for the Conv operator?"
    assert subject_phrases(question, [conv]) == 1.0
    # and the row names the Conv operator and says nothing the question asks, as written
    assert not relates(question, conv, None)
    assert not relates("How fast is the Conv operator under NNAPI?", conv, None)
    assert relates("What note does NNAPI give for the Conv operator?", conv, None)
