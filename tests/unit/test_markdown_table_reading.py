"""A Markdown pipe table is read as a table: its rows are rows, not lines of a text chunk.

Found on the eleventh real folder (BENCHMARKS.md): ONNX Runtime's ``nnapi_supported_ops.md`` was
one text document titled ``|Operator|Note|`` whose chunks held dozens of rows, and "What
restrictions does NNAPI have for the Conv operator?" abstained."""

from __future__ import annotations

from pathlib import Path

from kgrag.ingest.markdown_tables import pipe_tables
from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data" / "markdown_tables"


def _parse(path: Path):  # type: ignore[no-untyped-def]
    (found,) = expand_inputs([str(path)]).items
    return parse(found, 10_000_000)


def test_a_readme_that_is_one_table_is_a_table_of_rows() -> None:
    doc = _parse(DATA / "nnapi_supported_ops.md")
    assert doc.title == "nnapi supported ops"  # not its header row
    assert not doc.pages  # nothing but the table (and a comment)
    (table,) = doc.tables
    assert table.header == ("Operator", "Note")
    assert (
        "ai.onnx:Conv",
        "Only 2D Conv is supported. Weights and bias should be constant.",
    ) in table.rows
    assert ("ai.onnx:Abs", "") in table.rows
    assert len(table.rows) > 40


def test_tables_leave_the_text_around_them_and_code_blocks_alone(tmp_path: Path) -> None:
    path = tmp_path / "options.md"
    path.write_text(
        "# Options\n\nThe options:\n\n| Option | Default |\n|:--|--:|\n| `--level` | **3** |\n"
        "| --fast \\| --best | none |\n\nAfter the table.\n\n"
        "```\n| not | a table |\n|---|---|\n```\n",
        encoding="utf-8",
    )
    doc = _parse(path)
    (table,) = doc.tables
    assert table.caption == "Options"
    assert table.rows == (("--level", "3"), ("--fast | --best", "none"))
    text = doc.pages[0].text
    assert "The options:" in text and "After the table." in text
    assert "--level" not in text and "| not | a table |" in text
    # a line with pipes and no delimiter row under it is text
    assert pipe_tables("a | b\nc | d\n", path) == ("a | b\nc | d\n", ())
